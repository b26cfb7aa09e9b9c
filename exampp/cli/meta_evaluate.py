"""`exampp meta-evaluate`: every evaluation of a workspace against the official leaderboard."""
from __future__ import annotations

from typing import TYPE_CHECKING

import click
import pandas as pd

from exampp.api.meta_evaluate import FAMILIES
from exampp.cli.measures import check_one_measure
from exampp.cli.output import (
    FILE,
    RESPONSES,
    InputPath,
    depth_option,
    format_option,
    method_option,
    progress_option,
    render,
    strict_option,
    top_ties_option,
    warn,
    workspace_option,
    write_output,
)
from exampp.cli.settings import FiniteRange, Setting
from exampp.defaults import DECIMALS, LABELS
from exampp.formats.eval_results import EVAL_FORMATS
from exampp.report.records import dumps, records

if TYPE_CHECKING:
    from exampp.api.meta_evaluate import MetaEvaluation



def draw_options(command):
    """``--bootstrap N --irt-bootstrap M --seed S``: the meta-evaluation's resamples of the queries
    (meta-evaluate and report)."""
    options = [
        click.option("--bootstrap", type=click.IntRange(min=0), default=1000, show_default=True,
                     help="Bootstrap resamples of the queries for the intervals (0: none)."),
        click.option("--irt-bootstrap", type=click.IntRange(min=0), default=50, show_default=True,
                     help="How many of those resamples the IRT rows refit their model on (0: no IRT intervals)."),
        click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@click.command("meta-evaluate")
@workspace_option
@method_option
@click.option("--bank", type=FILE, help="Question bank defining each query's exam (default: the workspace's).")
@click.option("--runs", "runs_dir", type=InputPath(), help="Run files or folder [default: WORKSPACE/runs].")
@click.option("--responses", type=RESPONSES,
              help="RAG answers (a file, or a folder of them: AutoJudge reports) graded with `exampp grade "
                   "--responses`: meta-evaluate them instead of runs.")
@click.option("--official", "official_file", type=InputPath(allow_dash=True),
              help="Official leaderboard file (run<TAB>score, a table, JSON; a folder of trec_eval results) "
                   "instead of --official-qrels.")
@click.option("--official-format", type=click.Choice(EVAL_FORMATS),
              help="The --official file holds per-topic results in this TREC AutoJudge format (its 'all' rows "
                   "are the runs' scores; default: an exampp leaderboard, told by content).")
@click.option("--official-column", metavar="NAME",
              help="Measure column of the --official file (the measure of --official-format results).")
@click.option("--official-qrels", metavar="QRELS",
              help="Official qrels (file or irds:<dataset-id>) [default: WORKSPACE/qrels/official.qrels].")
@click.option("--official-measure", metavar="MEASURE", default="nDCG@10", show_default=True,
              callback=check_one_measure, help="Official measure on --official-qrels.")
@click.option("--label", "labels", multiple=True, type=click.Choice(LABELS),
              help="EXAM label variant, repeatable [default: all; expected only with stored probabilities].")
@click.option("--tau", "taus", multiple=True, type=Setting("tau"),
              help="Grade threshold, repeatable [default: every grade level of the method's scale].")
@click.option("--family", "families", multiple=True, type=click.Choice(FAMILIES),
              help="Kind of evaluation, repeatable [default: all].")
@depth_option
@draw_options
@click.option("--confidence", type=FiniteRange(0, 1, min_open=True, max_open=True), default=0.95,
              show_default=True, help="Confidence level of the intervals.")
@click.option("--top", type=click.IntRange(min=2), default=10, show_default=True,
              help="Kendall's tau on the official top-N systems.")
@top_ties_option
@click.option("--exclude", multiple=True, metavar="RUN", help="Leave this run out (repeatable).")
@click.option("--decimals", type=click.IntRange(0, 15), default=DECIMALS, show_default=True,
              help="Round scores to this many decimals before ranking.")
@strict_option
@format_option
@click.option("--output", "-o", type=click.Path(dir_okay=False, allow_dash=True), help="Write the table here.")
@progress_option
def meta_evaluate(workspace, method, bank, runs_dir, responses, official_file, official_format, official_column,
                  official_qrels,
                  official_measure, labels, taus, families, depth, bootstrap, irt_bootstrap, seed, confidence, top,
                  top_ties, exclude, decimals, strict, fmt, output, progress) -> None:
    """Correlate every evaluation the workspace's grades support with the official leaderboard:
    P@k and AP on EXAM-Qrels at every tau, nDCG@k with each label variant as gains, alpha-nDCG@k
    and ERR-IA@k with each question a subtopic, EXAM-Cover@k, n-EXAM@k and the IRT ability.
    Spearman, Kendall tau-b, tau_ap, Kendall on the official top-N, the symmetric tau_ap_b and
    tau_gap, each with a bootstrap interval over queries; best first by Kendall's tau, the best
    of each statistic marked *; autojudge-evaluate's diagnostics (too_few, all_tied) where any.

    \b
    Example:
      exampp meta-evaluate -w out/dl19 --exclude UNH_exDL_bm25
      exampp meta-evaluate -w out/dl19 --family qrels --label max --tau 4 --format tsv -o meta.tsv
      exampp meta-evaluate -w out/dl19 --official truth.tot --official-format tot --official-column nDCG@10
    """
    from exampp.api.leaderboards import LeaderboardFile, QrelsMeasure
    from exampp.api.meta_evaluate import MetaEvaluateJob

    if runs_dir and responses:
        raise click.UsageError("give --runs or --responses, not both")
    if official_file and official_qrels:
        raise click.UsageError("give --official FILE or --official-qrels QRELS, not both")
    if (official_column or official_format) and not official_file:
        raise click.UsageError("--official-column and --official-format go with --official FILE")
    official = (LeaderboardFile(official_file, official_column, format=official_format) if official_file
                else QrelsMeasure(official_qrels, official_measure) if official_qrels else None)
    if official is None and official_measure != "nDCG@10":
        from exampp.stores.layout import Workspace

        official = QrelsMeasure(str(Workspace.at(workspace).official_qrels), official_measure)
    job = MetaEvaluateJob(workspace, official=official, runs=runs_dir, responses=responses, method=method, bank=bank,
                          labels=labels or LABELS, taus=taus or None, depth=depth, families=families or FAMILIES,
                          bootstrap=bootstrap, irt_bootstrap=irt_bootstrap, seed=seed, top=top, top_ties=top_ties,
                          confidence=confidence,
                          exclude=exclude, decimals=decimals, strict=strict, progress=progress)
    result = job.run(warn=warn)
    write_output(_render(result, fmt), output)


def _render(result: MetaEvaluation, fmt: str) -> str:
    if fmt == "json":
        return dumps({
            "official": result.official.name, "n_systems": int(len(result.official)),
            "bootstrap": result.bootstrap, "seed": result.seed, "confidence": result.confidence,
            "top": result.top, "top_ties": result.top_ties, "evaluations": records(result.table),
        }, indent=2) + "\n"
    if fmt == "tsv":
        return render(result.table, "tsv") + "\n"
    return "\n".join(_text(result)) + "\n"


def _text(result: MetaEvaluation) -> list[str]:
    from exampp.analysis.statistics import CORRELATIONS

    table = result.table
    intervals = result.bootstrap > 0
    shown: dict[str, pd.Series | list[str]] = {"evaluation": table["evaluation"], "n": table["n_systems"]}
    for statistic in CORRELATIONS:
        marks = ["*" if statistic in best.split(", ") else " " for best in table["best"]]
        shown[statistic] = [_cell(row[statistic], row[f"{statistic}_low"], row[f"{statistic}_high"], intervals) + m
                            for (_, row), m in zip(table.iterrows(), marks)]
    for column in ("issue", "top_issue"):
        if table[column].astype(bool).any():  # autojudge-evaluate's diagnostics, where there are any
            shown[column] = table[column].replace("", "-")
    level = f"{result.confidence:.0%}"
    header = [f"official: {result.official.name}; {len(result.official)} runs; "
              + (f"{level} intervals from {result.bootstrap} bootstrap resamples of the queries (seed {result.seed})"
                 if intervals else "no intervals (--bootstrap 0)")
              + f"; kendall_top: the official top {result.top}"
              + ("" if result.top_ties == "include" else " (exactly, ties by the official order)") + "; * best", ""]
    return header + [render(pd.DataFrame(shown), "text")]


def _cell(value: float, low: float, high: float, intervals: bool) -> str:
    if pd.isna(value):
        return "-"
    if not intervals or pd.isna(low):
        return f"{value:.4f}"
    return f"{value:.4f} [{low:.3f}, {high:.3f}]"

