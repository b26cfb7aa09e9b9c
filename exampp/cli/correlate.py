"""`exampp correlate`: rank correlation of two leaderboards (A is the reference for tau_ap)."""
from __future__ import annotations

import functools
import json
import math
from typing import Any

import click
import pandas as pd

from exampp.cli.measures import check_one_measure
from exampp.cli.output import (
    check_judged,
    format_option,
    json_value,
    one_stdin,
    output_option,
    render,
    strict_option,
    write_output,
)

FILE = click.Path(dir_okay=False, exists=True, allow_dash=True)


def _side_options(side: str):
    """The options that define leaderboard A or B: a file, or qrels + a measure over --runs."""
    upper = side.upper()
    options = [
        click.option(f"--{side}", f"{side}_file", type=FILE, help=f"Leaderboard file {upper} (run<TAB>score, table or JSON)."),
        click.option(f"--{side}-ranks", is_flag=True, help=f"The numbers in {upper}'s file are ranks (1 = best)."),
        click.option(f"--{side}-column", metavar="NAME", help=f"Measure column of {upper}'s file (several columns)."),
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


class _Source:
    """One side's leaderboard, read from a file or computed from qrels over the runs."""

    def __init__(self, side: str, params: dict[str, Any], runs_dir: str | None, depth: int | None, strict: bool):
        self.side = side.upper()
        self.file, self.ranks, self.column = (params[f"{side}_{k}"] for k in ("file", "ranks", "column"))
        self.qrels, self.measure = params[f"{side}_qrels"], params[f"{side}_measure"]
        self.runs_dir, self.depth, self.strict = runs_dir, depth, strict
        self._qrels = None
        flag = f"--{side}"
        if (self.file is None) == (self.qrels is None):
            raise click.UsageError(f"give exactly one of {flag} FILE or {flag}-qrels QRELS")
        if self.file is not None and self.measure:
            raise click.UsageError(f"{flag}-measure goes with {flag}-qrels, not with a leaderboard file")
        if self.qrels is not None:
            if self.ranks or self.column:
                raise click.UsageError(f"{flag}-ranks and {flag}-column go with a leaderboard file {flag}")
            if not self.measure:
                raise click.UsageError(f"{flag}-qrels needs {flag}-measure")
            if runs_dir is None:
                raise click.UsageError(f"{flag}-qrels needs --runs DIR")

    @property
    def label(self) -> str:
        if self.file is not None:
            return self.file + (f" [{self.column}]" if self.column else "") + (" (ranks)" if self.ranks else "")
        return f"{self.measure} on {self.qrels}"

    def board(self, runs) -> dict[str, float]:
        if self.file is not None:
            from exampp.collection.leaderboard import read_leaderboard

            return read_leaderboard(self.file, column=self.column, ranks=self.ranks)
        from exampp.scoring import leaderboard

        return leaderboard(runs(), self._judgments(runs), [self.measure], self.depth)[self.measure].to_dict()

    def _judgments(self, runs):
        """The qrels, read and checked against the runs once (both board and per_query use them)."""
        if self._qrels is None:
            from exampp.collection.qrels import read_qrels

            self._qrels = read_qrels(self.qrels)
            check_judged(runs(), self._qrels, self.qrels, self.strict)
        return self._qrels

    def per_query(self, runs) -> pd.DataFrame:
        """System x query table of the measure."""
        from exampp.scoring import per_query_measures

        values = per_query_measures(runs(), self._judgments(runs), [self.measure], self.depth)
        return values.pivot(index="run", columns="query_id", values="value")


def _number(spec: str):
    return lambda v: "-" if math.isnan(v) else spec.format(v)


def _short(names: list[str], limit: int = 10) -> str:
    if not names:
        return "(none)"
    more = f" ... ({len(names) - limit} more)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


@click.command()
@_side_options("a")
@_side_options("b")
@click.option("--runs", "runs_dir", type=click.Path(exists=True), help="Run files (folder) for --a-qrels/--b-qrels.")
@click.option("--depth", "-k", type=click.IntRange(min=1), help="Cut runs at this depth before computing measures.")
@click.option("--exclude", multiple=True, metavar="RUN", help="Leave this run out of both leaderboards (repeatable).")
@click.option("--per-query", is_flag=True, help="Also correlate query by query (needs --a-qrels and --b-qrels).")
@click.option("--decimals", type=click.IntRange(0, 15), default=10, show_default=True,
              help="Round scores to this many decimals before ranking, so float noise does not break ties.")
@click.option("--no-round", is_flag=True, help="Rank the scores exactly as given.")
@click.option("--show", is_flag=True, help="Also print both leaderboards side by side with ranks.")
@strict_option
@format_option
@output_option
def correlate(runs_dir, depth, exclude, per_query, decimals, no_round, show, strict, fmt, output, **sides) -> None:
    """Rank correlation of leaderboard A with leaderboard B: Spearman, Kendall tau-b, Pearson
    and tau_ap (tie-aware, A is the reference), on the runs both contain; runs in only
    one are listed.

    Each leaderboard is a file (--a FILE) or computed from qrels and a measure over the
    runs in --runs (--a-qrels QRELS --a-measure MEASURE).

    \b
    Example:
      exampp correlate --runs runs/ --a-qrels qrels/official.qrels --a-measure nDCG@10 \\
                       --b-qrels qrels/exam.qrels --b-measure P@20 --show
      exampp correlate --a official.tsv --b cover.tsv --b-column mean --format json
      exampp correlate --a official-ranks.txt --a-ranks --b exam.json --exclude bm25_baseline
    """
    from exampp.analysis.correlation import correlate as correlate_boards
    from exampp.analysis.correlation import per_query_correlation, side_by_side

    one_stdin(sides["a_file"], sides["b_file"], sides["a_qrels"], sides["b_qrels"], runs_dir)
    a, b = (_Source(side, sides, runs_dir, depth, strict) for side in ("a", "b"))
    if per_query and (a.qrels is None or b.qrels is None):
        raise click.UsageError("--per-query needs --a-qrels and --b-qrels: per-query scores come from qrels")
    from exampp.collection.runs import read_runs

    runs = functools.cache(lambda: read_runs(runs_dir))  # read once, only if a side computes from qrels
    rounding = None if no_round else decimals
    board_a, board_b = a.board(runs), b.board(runs)
    try:
        result = correlate_boards(board_a, board_b, exclude=exclude, decimals=rounding)
    except ValueError as exc:  # an --exclude name in neither leaderboard
        raise click.UsageError(str(exc)) from None
    if result.n_systems < 2:
        raise click.ClickException(
            f"{result.n_systems} run(s) in common, need at least 2; only in A: {_short(result.only_in_first)}; "
            f"only in B: {_short(result.only_in_second)}"
        )
    table = pd.DataFrame(
        [(name, getattr(result, name), getattr(result, f"{name}_p", math.nan))
         for name in ("spearman", "kendall", "pearson", "tau_ap")],
        columns=["measure", "value", "p_value"],
    )
    shown = side_by_side(board_a, board_b, names=("A", "B"), exclude=exclude, decimals=rounding) if show else None
    queries = per_query_correlation(a.per_query(runs), b.per_query(runs), exclude=exclude, decimals=rounding) \
        if per_query else None

    if fmt == "json":
        report: dict[str, Any] = {
            "a": a.label, "b": b.label, "tau_ap_reference": "a",
            **{k: json_value(v) for k, v in result.as_dict().items() if not k.startswith("only_in_")},
            "only_in_a": result.only_in_first, "only_in_b": result.only_in_second,
            "decimals": rounding,
        }
        if shown is not None:
            report["leaderboards"] = json.loads(render(shown.reset_index(), "json"))
        if queries is not None:
            report["per_query"] = json.loads(render(queries.per_query.reset_index(), "json"))
            report["per_query_summary"] = {
                stat: {k: json_value(float(v)) for k, v in row.items()} for stat, row in queries.summary.iterrows()
            }
            report["queries_only_in_a"], report["queries_only_in_b"] = queries.only_in_first, queries.only_in_second
        write_output(json.dumps(report, indent=2) + "\n", output)
        return
    if fmt == "tsv":
        write_output(render(table, "tsv") + "\n", output)
        return
    lines: list[str] = []
    lines.append(f"A: {a.label}")
    lines.append(f"B: {b.label}")
    lines.append(f"{result.n_systems} runs in both; tau_ap takes A as the reference"
                 + ("" if rounding is None else f"; scores rounded to {rounding} decimals"))
    lines.append("")
    lines.append(table.to_string(index=False, na_rep="-", formatters={"value": _number("{:.4f}"), "p_value": _number("{:.3g}")}))
    lines.append("")
    lines.append(f"only in A: {_short(result.only_in_first)}")
    lines.append(f"only in B: {_short(result.only_in_second)}")
    if result.excluded:
        lines.append(f"excluded:  {_short(result.excluded)}")
    if shown is not None:
        lines.append("")
        lines.append(render(shown.reset_index(), "text"))
    if queries is not None:
        lines.append("")
        lines.append(render(queries.per_query.reset_index(), "text"))
        lines.append("")
        lines.append(render(queries.summary.rename_axis("statistic").reset_index(), "text"))
        for side, missing in (("A", queries.only_in_first), ("B", queries.only_in_second)):
            if missing:
                lines.append(f"queries only in {side}: {_short(missing)}")
    write_output("\n".join(lines) + "\n", output)
