"""`exampp cover`, `exampp qrels`, `exampp leaderboard`: scores from grades and from qrels."""
from __future__ import annotations

import click

from exampp.cli.measures import check_measures
from exampp.cli.output import (
    depth_option,
    emit,
    format_option,
    method_option,
    one_stdin,
    output_option,
    strict_option,
    warn,
    workspace_option,
)
from exampp.defaults import LEADERBOARD_MEASURES


@click.command()
@click.argument("runs", nargs=-1, type=click.Path(exists=True, allow_dash=True))
@workspace_option
@method_option
@click.option("--bank", type=click.Path(dir_okay=False, exists=True, allow_dash=True),
              help="Question bank defining each query's exam (default: the workspace's, else the graded questions).")
@click.option("--tau", "--min-grade", "tau", type=float,
              help="A question counts as answered at grade >= tau [default: the stored method's: 4 for "
                   "0-5 self-ratings, 1 for 0/1 grades].")
@depth_option
@click.option("--normalized", is_flag=True, help="n-EXAM: only questions some pooled passage answers count.")
@click.option("--per-query", is_flag=True, help="Print per-query values instead of the leaderboard.")
@strict_option
@format_option
@output_option
def cover(runs, workspace, method, bank, tau, depth, normalized, per_query, strict, fmt, output) -> None:
    """EXAM-Cover@k leaderboard: per run, the mean over queries of the fraction of the query's
    exam questions that its top-k passages answer (grade >= tau), with standard errors.

    RUNS are run files or folders (default: the workspace's runs/).

    \b
    Example:
      exampp cover --workspace dl19 --tau 4 --depth 20
      exampp cover runs/ --tau 3 --per-query --format tsv
    """
    from exampp.api.scores import cover as job

    one_stdin(bank, *runs)
    result = job(workspace, runs or None, method=method, bank=bank, tau=tau, depth=depth, normalized=normalized,
                 strict=strict, warn=warn)
    emit(result.per_query if per_query else result.leaderboard, fmt, output)


@click.command()
@workspace_option
@method_option
@click.option("--min-grade", "tau", type=float, help="Write binary labels: 1 when label >= this grade.")
@click.option("--facets", is_flag=True, help="One qrels query per question facet (<query_id>/<facet_id>).")
@click.option("--bank", type=click.Path(dir_okay=False, exists=True, allow_dash=True), help="Question bank (default: the workspace's).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, allow_dash=True),
              help="Qrels file to write (- for stdout) [default: WORKSPACE/qrels/exam.qrels].")
def qrels(workspace, method, tau, facets, bank, output) -> None:
    """Export EXAM-Qrels: each graded passage labelled with its best grade over the query's
    questions (or 0/1 at --min-grade), as a TREC qrels file for trec_eval.

    \b
    Example:
      exampp qrels --workspace dl19 --min-grade 4 -o dl19/qrels/exam-4.qrels
      trec_eval -m P.20 -m ndcg_cut.20 dl19/qrels/exam-4.qrels dl19/runs/p_bert.run
    """
    from exampp.api.scores import export_qrels
    from exampp.workspace import Workspace

    target = output or Workspace.at(workspace).exam_qrels
    written = export_qrels(workspace, method=method, min_grade=tau, facets=facets, bank=bank, output=target)
    n = sum(len(docs) for docs in written.values())
    click.echo(f"wrote {n} labels for {len(written)} queries to {'standard output' if target == '-' else target}",
               err=True)


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, allow_dash=True))
@click.option("--qrels", "qrels_path", required=True, metavar="QRELS",
              help="Qrels file to evaluate against (official or EXAM-Qrels), or irds:<dataset-id>.")
@click.option("--measure", "-m", "measures", multiple=True, default=LEADERBOARD_MEASURES, show_default=True,
              callback=check_measures,
              help="Measure, repeatable: ir_measures name (nDCG@10, P(rel=2)@20, AP, R@100, RR...) or "
                   "trec_eval name (ndcg_cut.10, P.5,10, map).")
@click.option("--depth", "-k", type=click.IntRange(min=1), help="Truncate runs to their top-k first.")
@click.option("--exclude", multiple=True, help="Run name to leave out, repeatable.")
@click.option("--per-query", is_flag=True, help="Print per-query values instead of means.")
@strict_option
@format_option
@output_option
def leaderboard(runs, qrels_path, measures, depth, exclude, per_query, strict, fmt, output) -> None:
    """Leaderboard of many runs under ir_measures measures: the mean over the qrels' queries
    (a query a run lacks scores 0), best first by the first measure.

    \b
    Example:
      exampp leaderboard runs/ --qrels qrels/official.qrels -m nDCG@10 -m 'P(rel=2)@10' -m AP
    """
    from exampp.api.scores import NoRunLeft, measure_leaderboard

    one_stdin(qrels_path, *runs)
    try:
        table = measure_leaderboard(runs, qrels_path, measures, depth=depth, exclude=exclude, per_query=per_query,
                                    strict=strict, warn=warn)
    except NoRunLeft as exc:
        raise click.UsageError(f"--exclude leaves no run: it names every run read ({', '.join(exc.runs)})") from None
    emit(table, fmt, output)
