"""`exampp correlate`: rank correlation of two leaderboards (A is the reference for tau_ap)."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import click

from exampp.cli.measures import check_one_measure
from exampp.cli.output import (
    InputPath,
    bootstrap_options,
    format_option,
    one_stdin,
    output_option,
    render,
    strict_option,
    top_ties_option,
    warn,
    write_output,
)
from exampp.cli.settings import Setting
from exampp.defaults import DECIMALS
from exampp.formats.eval_results import EVAL_FORMATS
from exampp.report.records import dumps, json_value, records

if TYPE_CHECKING:
    from exampp.api.leaderboards import LeaderboardCorrelation, LeaderboardSource


def _side_options(side: str):
    """The options that define leaderboard A or B: a file, or qrels + a measure over --runs."""
    upper = side.upper()
    options = [
        click.option(f"--{side}", f"{side}_file", type=InputPath(allow_dash=True),
                     help=f"Leaderboard file {upper} (run<TAB>score, table or JSON; a folder of trec_eval results)."),
        click.option(f"--{side}-format", f"{side}_format", type=click.Choice(EVAL_FORMATS),
                     help=f"{upper}'s file holds per-topic results in this TREC AutoJudge format "
                          f"(default: an exampp leaderboard, told by content)."),
        click.option(f"--{side}-ranks", is_flag=True, help=f"The numbers in {upper}'s file are ranks (1 = best)."),
        click.option(f"--{side}-column", metavar="NAME",
                     help=f"Measure column of {upper}'s file (several columns), or the measure of "
                          f"--{side}-format results."),
        click.option(f"--{side}-qrels", metavar="QRELS",
                     help=f"Compute {upper} from these qrels (file or irds:<dataset-id>) over --runs."),
        click.option(f"--{side}-measure", metavar="MEASURE", callback=check_one_measure,
                     help=f"Measure for --{side}-qrels (nDCG@10, P@20, AP, or trec_eval's ndcg_cut.10...)."),
    ]

    def decorate(command):
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def _source(side: str, params: dict[str, Any], runs_dir: str | None) -> LeaderboardSource:
    """Side ``a`` or ``b``'s leaderboard from its flags: a file, or qrels + a measure over --runs."""
    from exampp.api.leaderboards import LeaderboardFile, QrelsMeasure

    file, ranks, column, qrels, measure, fmt = (params[f"{side}_{key}"]
                                                for key in ("file", "ranks", "column", "qrels", "measure", "format"))
    flag = f"--{side}"
    if (file is None) == (qrels is None):
        raise click.UsageError(f"give exactly one of {flag} FILE or {flag}-qrels QRELS")
    if file is not None:
        if measure:
            raise click.UsageError(f"{flag}-measure goes with {flag}-qrels, not with a leaderboard file")
        if fmt and ranks:
            raise click.UsageError(f"{flag}-ranks: {fmt} results hold scores, not ranks")
        return LeaderboardFile(file, column, ranks, fmt)
    if ranks or column or fmt:
        raise click.UsageError(f"{flag}-ranks, {flag}-column and {flag}-format go with a leaderboard file {flag}")
    if not measure:
        raise click.UsageError(f"{flag}-qrels needs {flag}-measure")
    if runs_dir is None:
        raise click.UsageError(f"{flag}-qrels needs --runs DIR")
    return QrelsMeasure(qrels, measure)


def _number(spec: str):
    return lambda v: "-" if math.isnan(v) else spec.format(v)


@click.command()
@_side_options("a")
@_side_options("b")
@click.option("--runs", "runs_dir", type=InputPath(), help="Run files (folder) for --a-qrels/--b-qrels.")
@click.option("--depth", "-k", type=Setting("depth"), help="Cut runs at this depth before computing measures.")
@click.option("--exclude", multiple=True, metavar="RUN", help="Leave this run out of both leaderboards (repeatable).")
@click.option("--per-query", is_flag=True,
              help="Also correlate query by query (needs per-query scores: --X-qrels, or a per-query table file).")
@click.option("--decimals", type=click.IntRange(0, 15), default=DECIMALS, show_default=True,
              help="Round scores to this many decimals before ranking, so float noise does not break ties.")
@click.option("--no-round", is_flag=True, help="Rank the scores exactly as given.")
@click.option("--show", is_flag=True, help="Also print both leaderboards side by side with ranks.")
@bootstrap_options
@click.option("--top", type=click.IntRange(min=2), default=10, show_default=True,
              help="kendall_top: Kendall's tau on the runs in A's top this many.")
@top_ties_option
@strict_option
@format_option
@output_option
def correlate(runs_dir, depth, exclude, per_query, decimals, no_round, show, bootstrap, seed, confidence, top,
              top_ties, strict, fmt, output, **sides) -> None:
    """Rank correlation of leaderboard A with leaderboard B: Spearman, Kendall tau-b, Pearson,
    tau_ap (tie-aware, A is the reference), Kendall on A's --top runs (kendall_top), the
    symmetric tau_ap_b and tau_gap (A gives the gaps), on the runs both contain; runs in
    only one are listed, and autojudge-evaluate's diagnostics (too_few, all_tied) shown.

    Each leaderboard is a file (--a FILE) or computed from qrels and a measure over the
    runs in --runs (--a-qrels QRELS --a-measure MEASURE). A file may be a per-query table
    (a query_id column, as 'leaderboard --per-query --format tsv' and 'cover --per-query
    --format tsv' write; --a-column picks its measure): the runs' means are correlated, and
    --per-query and --bootstrap can use its per-query scores. --a-format reads per-topic
    results in a TREC AutoJudge format (tot, ir_measures, jsonl, or a folder of trec_eval
    files; --a-column names the measure): each run's 'all' row is its score (else its mean
    over topics), and its per-topic rows serve --per-query and --bootstrap.

    --bootstrap N adds symmetric bootstrap intervals over N resamplings of the queries
    (the same draws for A and B).

    \b
    Example:
      exampp correlate --runs runs/ --a-qrels qrels/official.qrels --a-measure nDCG@10 \\
                       --b-qrels qrels/exam.qrels --b-measure P@20 --show
      exampp correlate --a official.tsv --b cover.tsv --b-column mean --format json
      exampp correlate --a official-ranks.txt --a-ranks --b exam.json --exclude bm25_baseline
      exampp correlate --a truth.tot --a-format tot --a-column nDCG@10 --b cover.tot --b-format tot
      exampp correlate --runs runs/ --a-qrels qrels/official.qrels --a-measure nDCG@10 \\
                       --b cover-per-query.tsv --bootstrap 1000 --seed 1
    """
    from exampp.api.leaderboards import CorrelateJob, UnknownExcluded

    one_stdin(sides["a_file"], sides["b_file"], sides["a_qrels"], sides["b_qrels"], runs_dir)
    a, b = (_source(side, sides, runs_dir) for side in ("a", "b"))
    rounding = None if no_round else decimals
    try:
        report = CorrelateJob(a, b, runs=runs_dir, depth=depth, exclude=exclude, decimals=rounding,
                              per_query=per_query, bootstrap=bootstrap, seed=seed, confidence=confidence,
                              top=top, top_ties=top_ties, strict=strict).run(warn=warn)
    except UnknownExcluded as exc:
        raise click.UsageError(str(exc)) from None
    _print(report, show, fmt, output)


def _print(report: LeaderboardCorrelation, show: bool, fmt: str, output: str | None) -> None:
    if fmt == "json":
        write_output(dumps(_json(report, show), indent=2) + "\n", output)
    elif fmt == "tsv":
        write_output(render(report.table(), "tsv") + "\n", output)
    else:
        write_output("\n".join(_text(report, show)) + "\n", output)


def _json(report: LeaderboardCorrelation, show: bool) -> dict[str, Any]:
    result, queries = report.correlation, report.per_query
    out: dict[str, Any] = {
        "a": report.a.label, "b": report.b.label, "tau_ap_reference": "a",
        **{k: json_value(v) for k, v in result.as_dict().items() if not k.startswith("only_in_")},
        "only_in_a": result.only_in_first, "only_in_b": result.only_in_second,
        "decimals": report.decimals,
    }
    if report.intervals is not None:
        settings = report.bootstrap
        assert settings is not None  # intervals come from a bootstrap
        out["bootstrap"] = {"n": settings.n, "seed": settings.seed, "confidence": settings.confidence,
                            "top": settings.top, "n_queries": settings.n_queries}
        out["intervals"] = records(report.intervals.reset_index())
    if show:
        out["leaderboards"] = records(report.side_by_side().reset_index())
    if queries is not None:
        out["per_query"] = records(queries.per_query.reset_index())
        out["per_query_summary"] = {
            stat: {k: json_value(float(v)) for k, v in row.items()} for stat, row in queries.summary.iterrows()
        }
        out["queries_only_in_a"], out["queries_only_in_b"] = queries.only_in_first, queries.only_in_second
    return out


def _text(report: LeaderboardCorrelation, show: bool) -> list[str]:
    from exampp.api.leaderboards import short_list

    result, rounding, queries = report.correlation, report.decimals, report.per_query
    lines = [
        f"A: {report.a.label}",
        f"B: {report.b.label}",
        f"{result.n_systems} runs in both; tau_ap takes A as the reference"
        + ("" if rounding is None else f"; scores rounded to {rounding} decimals"),
        *_bootstrap_lines(report),
        f"top runs (for kendall_top): A's top {result.top}, "
        + ("runs tied at the cut all in" if result.top_ties == "include" else "exactly that many, ties by A's order"),
        *([f"diagnostics: {result.issue or '-'} (all runs), {result.top_issue or '-'} (top runs)"]
          if result.issue or result.top_issue else []),
        "",
        report.table().to_string(index=False, na_rep="-",
                                 formatters={"value": _number("{:.4f}"), "p_value": _number("{:.3g}"),
                                             "low": _number("{:.4f}"), "high": _number("{:.4f}")}),
        "",
        f"only in A: {short_list(result.only_in_first)}",
        f"only in B: {short_list(result.only_in_second)}",
    ]
    if result.excluded:
        lines.append(f"excluded:  {short_list(result.excluded)}")
    if show:
        lines += ["", render(report.side_by_side().reset_index(), "text")]
    if queries is not None:
        lines += ["", render(queries.per_query.reset_index(), "text"),
                  "", render(queries.summary.rename_axis("statistic").reset_index(), "text")]
        for side, missing in (("A", queries.only_in_first), ("B", queries.only_in_second)):
            if missing:
                lines.append(f"queries only in {side}: {short_list(missing)}")
    return lines


def _bootstrap_lines(report: LeaderboardCorrelation) -> list[str]:
    settings = report.bootstrap
    if settings is None:
        return []
    return [f"{settings.confidence:.0%} intervals: bootstrap of {settings.n} resamplings of {settings.n_queries} "
            f"queries (seed {settings.seed})"]
