"""Leaderboards as sources (a leaderboard file, or a measure on qrels computed over runs) and the
correlate job: rank correlation of two of them, overall and query by query.

Errors are :class:`~exampp.errors.ExamppError` (the command line prints them as one line).
"""
from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass

import pandas as pd

from exampp.analysis.correlation import DEFAULT_DECIMALS, Correlation, PerQueryCorrelation
from exampp.api import Warn, python_warning
from exampp.api.workspace import RunsSource, read_runs_source
from exampp.collection.io import PathLike
from exampp.collection.qrels import Qrels
from exampp.collection.runs import Run
from exampp.errors import ExamppError


class CorrelationError(ExamppError, ValueError):
    """Two leaderboards that cannot be correlated as asked (too few runs in common, no runs to
    compute a leaderboard over, per-query correlation of a leaderboard file)."""


class UnknownExcluded(CorrelationError):
    """``exclude`` names a run in neither leaderboard (a typo, most likely)."""


@dataclass(frozen=True)
class LeaderboardFile:
    """A leaderboard read from a file: ``run<TAB>score``, a table (``column`` picks the measure)
    or JSON; ``ranks``: the numbers are ranks, 1 = best."""

    path: PathLike
    column: str | None = None
    ranks: bool = False

    @property
    def label(self) -> str:
        return str(self.path) + (f" [{self.column}]" if self.column else "") + (" (ranks)" if self.ranks else "")


@dataclass(frozen=True)
class QrelsMeasure:
    """A leaderboard computed over runs: one measure (ir_measures or trec_eval name) on qrels
    (a file or ``irds:<dataset-id>``)."""

    qrels: PathLike
    measure: str

    @property
    def label(self) -> str:
        return f"{self.measure} on {self.qrels}"


LeaderboardSource = LeaderboardFile | QrelsMeasure


@dataclass(frozen=True)
class LeaderboardCorrelation:
    """Leaderboard A correlated with leaderboard B; A is τ_AP's reference."""

    a: LeaderboardSource
    b: LeaderboardSource
    board_a: dict[str, float]
    board_b: dict[str, float]
    correlation: Correlation
    per_query: PerQueryCorrelation | None
    exclude: tuple[str, ...]
    decimals: int | None
    """Scores were rounded to this many decimals before ranking (None: not rounded)."""

    def table(self) -> pd.DataFrame:
        """Columns ``measure, value, p_value``: spearman, kendall, pearson, tau_ap (no p-value)."""
        result = self.correlation
        return pd.DataFrame(
            [(name, getattr(result, name), getattr(result, f"{name}_p", math.nan))
             for name in ("spearman", "kendall", "pearson", "tau_ap")],
            columns=["measure", "value", "p_value"],
        )

    def side_by_side(self) -> pd.DataFrame:
        """The common runs' scores and ranks in A and B (index run), ordered by A."""
        from exampp.analysis.correlation import side_by_side

        return side_by_side(self.board_a, self.board_b, names=("A", "B"), exclude=self.exclude,
                            decimals=self.decimals)


def correlate_leaderboards(
    a: LeaderboardSource,
    b: LeaderboardSource,
    *,
    runs: RunsSource | None = None,
    depth: int | None = None,
    exclude: Collection[str] = (),
    decimals: int | None = DEFAULT_DECIMALS,
    per_query: bool = False,
    strict: bool = False,
    warn: Warn = python_warning,
) -> LeaderboardCorrelation:
    """Spearman, Kendall τ-b, Pearson and τ_AP (A the reference) of A and B on the runs both hold.

    ``runs`` (cut at ``depth``) are what a :class:`QrelsMeasure` is computed over; a run query
    its qrels lack is left out with a warning (``strict``: an error). ``exclude`` leaves runs
    out of both; ``decimals`` rounds scores before ranking (None: exact). ``per_query`` also
    correlates query by query, which needs two :class:`QrelsMeasure`.
    """
    from exampp.analysis.correlation import correlate, per_query_correlation

    _check_sources(a, b, runs, per_query)
    boards = _Boards(runs, depth, strict, warn)
    board_a, board_b = boards.board(a), boards.board(b)
    try:
        result = correlate(board_a, board_b, exclude=exclude, decimals=decimals)
    except ValueError as exc:  # an excluded run in neither leaderboard
        raise UnknownExcluded(str(exc)) from None
    if result.n_systems < 2:
        raise CorrelationError(f"{result.n_systems} run(s) in common, need at least 2; only in A: "
                               f"{short_list(result.only_in_first)}; only in B: {short_list(result.only_in_second)}")
    queries = per_query_correlation(boards.per_query(a), boards.per_query(b), exclude=exclude,
                                    decimals=decimals) if per_query else None
    return LeaderboardCorrelation(a, b, board_a, board_b, result, queries, tuple(exclude), decimals)


def short_list(names: list[str], limit: int = 10) -> str:
    """Names for a one-line message: the first ``limit``, then how many more."""
    if not names:
        return "(none)"
    more = f" ... ({len(names) - limit} more)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _check_sources(a: LeaderboardSource, b: LeaderboardSource, runs: RunsSource | None, per_query: bool) -> None:
    """What can be told before anything is read: a computed leaderboard has runs and one measure."""
    from exampp.scoring import parse_measures

    for name, source in (("A", a), ("B", b)):
        if not isinstance(source, QrelsMeasure):
            continue
        if runs is None:
            raise CorrelationError(f"leaderboard {name} ({source.label}) is computed over runs: give runs")
        columns = [column for column, _ in parse_measures([source.measure])]  # MeasureError: unknown name
        if len(columns) != 1:
            raise CorrelationError(f"leaderboard {name}: {source.measure!r} names {len(columns)} measures "
                                   f"({', '.join(columns)}); give one")
    if per_query and not (isinstance(a, QrelsMeasure) and isinstance(b, QrelsMeasure)):
        raise CorrelationError("per-query correlation needs two leaderboards computed from qrels")


class _Boards:
    """Leaderboards of sources; the runs read once, each qrels read and checked once (both sides
    may compute their measures on the same qrels)."""

    def __init__(self, runs: RunsSource | None, depth: int | None, strict: bool, warn: Warn):
        self._source, self._depth, self._strict, self._warn = runs, depth, strict, warn
        self._runs: dict[str, Run] | None = None
        self._qrels: dict[str, Qrels] = {}

    def board(self, source: LeaderboardSource) -> dict[str, float]:
        if isinstance(source, LeaderboardFile):
            from exampp.collection.leaderboard import read_leaderboard

            return read_leaderboard(source.path, column=source.column, ranks=source.ranks)
        from exampp.scoring import leaderboard

        return leaderboard(self.runs(), self.judgments(source), [source.measure], self._depth)[
            source.measure].to_dict()

    def per_query(self, source: QrelsMeasure) -> pd.DataFrame:
        """Run x query table of the measure."""
        from exampp.scoring import per_query_measures

        values = per_query_measures(self.runs(), self.judgments(source), [source.measure], self._depth)
        return values.pivot(index="run", columns="query_id", values="value")

    def runs(self) -> dict[str, Run]:
        if self._runs is None:
            self._runs = read_runs_source(self._source)
        return self._runs

    def judgments(self, source: QrelsMeasure) -> Qrels:
        key = str(source.qrels)
        if key not in self._qrels:
            from exampp.collection.qrels import read_qrels
            from exampp.collection.runs import check_judged

            self._qrels[key] = read_qrels(source.qrels)
            for line in check_judged(self.runs(), self._qrels[key], source.qrels, self._strict):
                self._warn(line)
        return self._qrels[key]
