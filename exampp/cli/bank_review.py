"""`exampp bank review`: what to improve in a question bank, from the grades and the official
judgments. Flags in, :mod:`exampp.api.bank_review` does the work, the top of each list printed."""
from __future__ import annotations

import click

from exampp.cli.output import FILE, emit, method_option, warn, workspace_option
from exampp.cli.settings import Setting

EXCERPT = 60  # characters of a question or passage text in the printed lists


@click.command()
@workspace_option
@method_option
@click.option("--tau", type=Setting("tau"), help="Answered at grade >= tau [default: the stored method's: 4 for 0-5 "
                                        "self-ratings, 1 for 0/1 grades].")
@click.option("--bank", type=FILE, help="Question bank to review [default: the workspace's].")
@click.option("--official", type=FILE, help="Official qrels [default: the workspace's qrels/official.qrels, if any].")
@click.option("--rel-level", type=int, default=1, show_default=True,
              help="Official grade at which a passage counts as relevant (as trec_eval -l).")
@click.option("--corpus", help="Passage texts: a file, irds:<dataset-id> or pyserini:<index-dir> "
                               "[default: the workspace's corpus, if any].")
@click.option("--top", type=click.IntRange(min=0), default=3, show_default=True,
              help="Too-broad questions and gaps to print.")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Folder for too-broad.tsv, unanswered.tsv, gaps.tsv, answers.tsv, questions.tsv and review.html.")
def review(workspace, method, tau, bank, official, rel_level, corpus, top, out) -> None:
    """Review a question bank on the grades in the store: questions answered by more
    officially non-relevant passages than relevant ones (too broad), questions no graded
    passage answers (unanswered), officially relevant passages that answer no question
    (gaps), and each question's extracted answers grouped (for methods that keep them).
    Writes a TSV per table and one readable HTML page to --out; prints the top of each list.

    \b
    Example:
      exampp bank review -w out/dl19 --tau 4 --rel-level 2 --out out/dl19/review
    """
    from exampp.api.bank_review import review_bank, write_bank_review

    result = review_bank(workspace, method=method, tau=tau, bank=bank, official=official, rel_level=rel_level,
                         corpus=corpus, warn=warn)
    written = write_bank_review(result, out)
    click.echo(f"{result.method_id}: answered at grade >= {result.tau:g}"
               + (f", relevant at official grade >= {result.rel_level:g}" if result.judged else
                  "; no official judgments: no too-broad questions or gaps"))
    click.echo(", ".join(f"{count} {name}" for name, count in result.counts.items()))
    if result.judged and top:
        broad = result.too_broad.head(top)
        click.echo(f"\nToo broad (most non-relevant answers first; top {len(broad)} of {len(result.too_broad)}):")
        emit(broad.assign(text=broad["text"].map(_excerpt))[
            ["query_id", "non_relevant", "relevant", "precision", "answered", "text"]], "text")
        gaps = result.gaps.head(top)
        click.echo(f"\nGaps (relevant passages answering no question; top {len(gaps)} of {len(result.gaps)}):")
        emit(gaps.assign(text=gaps["text"].map(_excerpt))[["query_id", "passage_id", "official", "best_grade", "text"]],
             "text")
    if result.answers_note:
        click.echo(f"\n{result.answers_note}", err=True)
    click.echo(f"wrote {', '.join(written)} to {out}", err=True)


def _excerpt(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= EXCERPT else text[: EXCERPT - 1].rstrip() + "…"
