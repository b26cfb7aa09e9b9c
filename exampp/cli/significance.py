"""`exampp significance`: paired tests between runs, discriminative power, and where two
leaderboards disagree."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from exampp.cli.measures import check_one_measure
from exampp.cli.output import (
    FILE,
    InputPath,
    format_option,
    one_stdin,
    output_option,
    render,
    strict_option,
    warn,
    write_output,
)
from exampp.cli.settings import FiniteRange, Setting
from exampp.report.records import dumps, json_value, records

if TYPE_CHECKING:
    from exampp.api.leaderboards import LeaderboardSource
    from exampp.api.significance import Significance

CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no"}


def _source(flag: str, table: str | None, column: str | None, qrels: str | None, measure: str | None,
            runs_dir: str | None) -> LeaderboardSource:
    """A per-query table file, or a measure on qrels over --runs."""
    from exampp.api.leaderboards import LeaderboardFile, QrelsMeasure

    file_flag, qrels_flag = (("--table", "--qrels") if flag == "" else (f"--{flag}", f"--{flag}-qrels"))
    column_flag, measure_flag = ("--column", "--measure") if flag == "" else (f"--{flag}-column", f"--{flag}-measure")
    if table is not None and qrels is not None:
        raise click.UsageError(f"give one of {file_flag} FILE or {qrels_flag} QRELS, not both")
    if table is not None:
        if measure:
            raise click.UsageError(f"{measure_flag} goes with {qrels_flag}; a table's measure is {column_flag}")
        return LeaderboardFile(table, column)
    if column:
        raise click.UsageError(f"{column_flag} goes with a per-query table {file_flag}")
    if not measure:
        raise click.UsageError(f"{qrels_flag} needs {measure_flag}")
    if runs_dir is None:
        raise click.UsageError(f"{qrels_flag} needs --runs DIR")
    if qrels is None:
        raise click.UsageError(f"give {file_flag} FILE or {qrels_flag} QRELS")
    return QrelsMeasure(qrels, measure)


@click.command()
@click.option("--runs", "runs_dir", type=InputPath(), help="Run files (folder) for --qrels/--versus-qrels.")
@click.option("--qrels", metavar="QRELS",
              help="Compute the measure from these qrels (file or irds:<dataset-id>) over --runs.")
@click.option("--measure", "-m", metavar="MEASURE", callback=check_one_measure,
              help="Measure for --qrels (nDCG@10, P@20, AP, or trec_eval's ndcg_cut.10...).")
@click.option("--table", type=FILE,
              help="Per-query table instead (a query_id column: 'leaderboard --per-query' or 'cover --per-query' "
                   "output).")
@click.option("--column", metavar="NAME", help="Measure or score column of --table (several in it).")
@click.option("--versus-qrels", metavar="QRELS", help="Second leaderboard: a measure on these qrels over --runs.")
@click.option("--versus-measure", metavar="MEASURE", callback=check_one_measure, help="Measure for --versus-qrels.")
@click.option("--versus", "versus_table", type=FILE, help="Second leaderboard: a per-query table.")
@click.option("--versus-column", metavar="NAME", help="Measure or score column of --versus.")
@click.option("--test", type=click.Choice(["t", "randomization"]), default="t", show_default=True,
              help="Paired t-test, or paired randomisation (sign-flip) test.")
@click.option("--permutations", type=click.IntRange(min=1), default=10000, show_default=True,
              help="Random sign flips of the randomisation test.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the randomisation test.")
@click.option("--correction", type=click.Choice(["holm", "bh", "none"]), default="holm", show_default=True,
              help="Multiple-comparison correction: Holm (family-wise error) or Benjamini-Hochberg (false "
                   "discovery rate).")
@click.option("--alpha", type=FiniteRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True,
              help="Significance level of the adjusted p-values.")
@click.option("--depth", "-k", type=Setting("depth"), help="Cut runs at this depth before computing measures.")
@click.option("--exclude", multiple=True, metavar="RUN", help="Leave this run out (repeatable).")
@strict_option
@format_option
@output_option
def significance(runs_dir, qrels, measure, table, column, versus_qrels, versus_measure, versus_table, versus_column,
                 test, permutations, seed, correction, alpha, depth, exclude, strict, fmt, output) -> None:
    """Paired significance tests between every two runs on per-query scores, corrected for
    multiple comparisons, and the discriminative power (share of run pairs significantly
    different). With a second leaderboard (--versus or --versus-qrels): the run pairs the
    two order oppositely, and how many of those differences are significant in each.

    The scores are a measure on qrels over --runs (--qrels QRELS --measure M), or a per-query
    table (--table FILE). TSV output is the pairs table (with a second leaderboard: the
    disagreements table); JSON holds everything.

    \b
    Example:
      exampp significance --runs runs/ --qrels qrels/official.qrels -m nDCG@10
      exampp cover -w dl19 --per-query --format tsv -o cover.tsv
      exampp significance --table cover.tsv --test randomization --correction bh \\
                          --runs dl19/runs --versus-qrels dl19/qrels/official.qrels --versus-measure nDCG@10
    """
    from exampp.api.significance import SignificanceJob

    one_stdin(table, versus_table, qrels, versus_qrels, runs_dir)
    a = _source("", table, column, qrels, measure, runs_dir)
    versus = None
    if any(v is not None for v in (versus_qrels, versus_measure, versus_table, versus_column)):
        versus = _source("versus", versus_table, versus_column, versus_qrels, versus_measure, runs_dir)
    job = SignificanceJob(a, versus, runs=runs_dir, depth=depth, exclude=exclude, test=test, permutations=permutations,
                          seed=seed, correction=correction, alpha=alpha, strict=strict)
    result = job.run(warn=warn)
    if fmt == "json":
        write_output(dumps(_json(result), indent=2) + "\n", output)
    elif fmt == "tsv":
        shown = result.a.tests if result.disagreements is None else result.disagreements
        write_output(render(shown, "tsv") + "\n", output)
    else:
        write_output("\n".join(_text(result)) + "\n", output)


def _method(result: Significance) -> str:
    test = "paired t-test" if result.test == "t" else (
        f"paired randomisation test ({result.permutations} sign flips, seed {result.seed})")
    return f"{test}, {CORRECTION_NAMES[result.correction]} correction, alpha {result.alpha:g}"


def _json(result: Significance) -> dict[str, Any]:
    out: dict[str, Any] = {"test": result.test, "correction": result.correction, "alpha": result.alpha}
    if result.test == "randomization":
        out.update(permutations=result.permutations, seed=result.seed)
    for name, side in (("a", result.a), ("b", result.b)):
        if side is not None:
            out[name] = {"leaderboard": side.source.label, "runs": len(side.scores), "queries": side.scores.shape[1],
                         "pairs": len(side.tests), "significant": side.n_significant,
                         "discriminative_power": json_value(side.power), "tests": records(side.tests)}
    counts = result.disagreement_counts()
    if result.disagreements is not None and counts is not None:  # both or neither
        out["disagreements"] = {**counts, "pairs_table": records(result.disagreements)}
    return out


def _text(result: Significance) -> list[str]:
    lines = [_method(result)]
    for name, side in (("A", result.a), ("B", result.b)):
        if side is None:
            continue
        lines += ["", f"{name}: {side.source.label}: {len(side.scores)} runs, {side.scores.shape[1]} queries",
                  f"{side.n_significant} of {len(side.tests)} run pairs significantly different "
                  f"(discriminative power {side.power:.3f})", "",
                  render(side.tests, "text")]
    counts = result.disagreement_counts()
    if counts is not None:
        lines += ["", f"A and B order {counts['pairs']} run pairs oppositely; of those, significant in A: "
                      f"{counts['significant_in_A']}, in B: {counts['significant_in_B']}, in both: "
                      f"{counts['significant_in_both']}"]
        if counts["pairs"] and result.disagreements is not None:  # counted: there
            lines += ["", render(result.disagreements, "text")]
    return lines
