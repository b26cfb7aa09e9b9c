"""`exampp bank impact`: what a new question bank (or a pending edit) changes in the labels, the
runs' scores and the leaderboards, grading only the new questions."""
from __future__ import annotations

from typing import Any

import click

from exampp.cli.backend_options import backend_options
from exampp.cli.measures import check_measures
from exampp.cli.output import (
    FILE,
    InputPath,
    check_method,
    format_option,
    one_stdin,
    output_option,
    progress_option,
    render,
    write_output,
)
from exampp.cli.settings import Setting
from exampp.report.records import dumps

_PATH = click.Path(dir_okay=False)


@click.command()
@click.argument("new_bank", type=FILE)
@click.argument("runs", nargs=-1, type=InputPath(allow_dash=True))
@click.option("--bank", type=_PATH, help="The old question bank [default: the one exampp grade grades with: "
                                         "the config's, else WORKSPACE/question_banks/questions.jsonl].")
@click.option("--config", "config_path", type=InputPath(dir_okay=False),
              help="Config file, as for exampp grade [default: WORKSPACE/exampp.toml with -w, else ./exampp.toml].")
@click.option("--workspace", "-w", type=click.Path(file_okay=False),
              help="Workspace folder (grades.sqlite, runs/) [default: the config file's folder, else .].")
@click.option("--grader", "--method", "grader", callback=check_method,
              help="Grading method, as for exampp grade [default: the config's, else self-rating].")
@backend_options(backend_help="[default: the method's]", model_help="[default: the method's]")
@click.option("--depth", "-k", type=Setting("depth"), help="Pool and score the top-k passages [default: 20].")
@click.option("--topics", help="Topics [default: WORKSPACE/topics/topics.jsonl].")
@click.option("--corpus", help="Passage texts [default: WORKSPACE/corpus/passages.jsonl].")
@click.option("--store", type=_PATH, help="Grade store file [default: WORKSPACE/grades.sqlite].")
@click.option("--measure", "-m", "measures", multiple=True, callback=check_measures,
              help="Measure on the EXAM-Qrels, repeatable (ir_measures or trec_eval name) "
                   "[default: nDCG@k and P(rel=tau)@k; P@k with --min-grade].")
@click.option("--tau", type=Setting("tau"), help="EXAM-Cover counts a question answered at grade >= tau "
                                        "[default: the config's, else the method's].")
@click.option("--min-grade", type=Setting("min_grade"), help="Binary EXAM-Qrels: 1 when the label >= this grade "
                                              "[default: the config's, else graded labels].")
@click.option("--strict", is_flag=True, help="Pooled passages without text and run queries without exam "
                                             "questions are errors (default: warnings).")
@click.option("--out", type=click.Path(file_okay=False),
              help="Write labels.tsv, systems.tsv, leaderboard.tsv and correlation.tsv to this folder.")
@progress_option
@format_option
@output_option
def impact(new_bank, runs, bank, config_path, workspace, measures, out, progress, fmt, output, **settings) -> None:
    """What replacing the question bank by NEW_BANK (a new bank, or a pending edit written with
    `exampp bank remove ... --to NEW_BANK`) changes: the questions added, removed and changed,
    the pooled passages whose EXAM label changes, each run's EXAM-Cover and measures on the
    EXAM-Qrels, and the leaderboards before and after with their rank correlation.

    RUNS are pooled and graded as exampp grade does (files or folders [default: WORKSPACE/runs/];
    the same config and flags), against both banks: the store grades only the pairs it lacks,
    so only the new questions' pairs are graded. The workspace's qrels/exam.qrels is left as it is.

    \b
    Example:
      exampp bank impact new-questions.jsonl
      exampp bank impact new-questions.jsonl runs/ -m nDCG@10 --out out/impact --format tsv
    """
    from exampp.api.bank_impact import bank_impact, write_impact_tables

    one_stdin(new_bank, bank, *runs)
    result = bank_impact(new_bank, old_bank=bank, runs=list(runs) or None, config=config_path, workspace=workspace,
                         measures=measures or None, progress=progress, **settings)
    for warning in result.warnings:
        click.echo(warning, err=True)
    usage = result.after.usage
    if usage is not None and usage.requests:
        click.echo(f"judge: {usage}", err=True)
    if out:
        names = write_impact_tables(result, out)
        click.echo(f"wrote {', '.join(names)} to {out}", err=True)
    if fmt == "json":
        write_output(dumps(result.as_dict(), indent=2) + "\n", output)
        return
    if fmt == "tsv":
        for line in result.summary():
            click.echo(line, err=True)
        write_output(render(result.leaderboards, "tsv") + "\n", output)
        return
    blocks = ["\n".join(result.summary())]
    boards = dict(tuple(result.leaderboards.groupby("score", sort=False)))
    c: Any  # a row (pandas-stubs types its fields as any scalar)
    for c in result.correlations.itertuples():
        blocks.append(f"{c.score}: Kendall's tau-b {c.kendall:.4f}, Spearman {c.spearman:.4f} over {c.n_systems} runs\n"
                      + render(boards[c.score].drop(columns="score"), "text"))
    write_output("\n\n".join(blocks) + "\n", output)
