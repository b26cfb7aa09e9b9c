"""Leaderboards as sources (a leaderboard file, or a measure on qrels computed over runs) and the
correlate job: rank correlation of two of them, overall and query by query.

Errors are :class:`~exampp.errors.ExamppError` (the command line prints them as one line).
"""
from __future__ import annotations

import math
import os
from collections.abc import Collection
from dataclasses import KW_ONLY, dataclass
from typing import cast

import pandas as pd

from exampp.analysis.correlation import DEFAULT_DECIMALS, Correlation, PerQueryCorrelation
from exampp.api import Warn, python_warning
from exampp.api.workspace import RunsSource, read_runs_source
from exampp.collection.qrels import IntentQrels, Qrels
from exampp.collection.runs import Run
from exampp.errors import ExamppError, InputError
from exampp.files.io import PathLike
from exampp.setting_rules import CheckedSettings


class CorrelationError(ExamppError, ValueError):
    """Two leaderboards that cannot be correlated as asked (too few runs in common, no runs to
    compute a leaderboard over, per-query correlation of a leaderboard file)."""


class UnknownExcluded(CorrelationError):
    """``exclude`` names a run in neither leaderboard (a typo, most likely)."""


@dataclass(frozen=True)
class LeaderboardFile:
    """A leaderboard read from a file: ``run<TAB>score``, a table or JSON. A per-query table (a
    ``query_id`` column, as ``exampp leaderboard --per-query`` writes) gives the runs' means and
    per-query scores (see :mod:`exampp.formats.leaderboard`). With ``format``, the file holds
    per-topic results in one of TREC AutoJudge's formats (:mod:`exampp.formats.eval_results`).

    :param path: The leaderboard file (a folder for ``trec_eval`` results).
    :param column: The measure column of a table (or key in JSON), or the measure of AutoJudge results, to read.
    :param ranks: The numbers are ranks, 1 = best.
    :param format: None: one of exampp's leaderboard files, told by content; else one of
        :data:`~exampp.formats.eval_results.EVAL_FORMATS`.
    """

    path: PathLike
    column: str | None = None
    ranks: bool = False
    format: str | None = None

    def __post_init__(self) -> None:
        if self.format is not None and self.ranks:
            raise CorrelationError(f"{self.path}: {self.format} results hold scores, not ranks")

    @property
    def label(self) -> str:
        return (str(self.path) + (f" [{self.column}]" if self.column else "") + (" (ranks)" if self.ranks else "")
                + (f" ({self.format})" if self.format else ""))


@dataclass(frozen=True)
class QrelsMeasure:
    """A leaderboard computed over runs: one measure on qrels.

    :param qrels: A qrels file or ``irds:<dataset-id>``.
    :param measure: An ir_measures or trec_eval measure name.
    """

    qrels: PathLike
    measure: str

    @property
    def label(self) -> str:
        return f"{self.measure} on {self.qrels}"


LeaderboardSource = LeaderboardFile | QrelsMeasure


@dataclass(frozen=True)
class Bootstrap:
    """How the bootstrap intervals of a correlation were drawn."""

    n: int
    seed: int
    confidence: float
    top: int
    n_queries: int
    """Queries resampled: those both per-query tables hold."""
    queries_only_in_a: tuple[str, ...] = ()
    queries_only_in_b: tuple[str, ...] = ()


@dataclass(frozen=True)
class LeaderboardCorrelation:
    """Leaderboard A correlated with leaderboard B; A is τ_AP's reference.

    :param a: Where leaderboard A came from.
    :param b: Where leaderboard B came from.
    :param board_a: Leaderboard A: run -> score.
    :param board_b: Leaderboard B: run -> score.
    :param correlation: The correlations on the runs both hold (:func:`exampp.analysis.correlation.correlate`).
    :param per_query: The query-by-query correlations, when asked for.
    :param exclude: The runs left out of both.
    :param decimals: Scores were rounded to this many decimals before ranking (None: not rounded).
    :param intervals: Bootstrap intervals (:func:`exampp.analysis.statistics.correlation_intervals`):
        index statistic (spearman, kendall, tau_ap, kendall_top); columns value, low, high. None
        without a bootstrap.
    :param bootstrap: How the bootstrap's draws were made; None without one.
    """

    a: LeaderboardSource
    b: LeaderboardSource
    board_a: dict[str, float]
    board_b: dict[str, float]
    correlation: Correlation
    per_query: PerQueryCorrelation | None
    exclude: tuple[str, ...]
    decimals: int | None
    intervals: pd.DataFrame | None = None
    bootstrap: Bootstrap | None = None

    def table(self) -> pd.DataFrame:
        """Columns ``measure, value, p_value``: spearman, kendall, pearson, tau_ap, kendall_top (Kendall
        on the runs in A's top ``correlation.top``), tau_ap_b, tau_gap (p-values for the first three);
        with a bootstrap also ``low, high`` (none for pearson)."""
        result = self.correlation
        table = pd.DataFrame(
            [(name, getattr(result, name), getattr(result, f"{name}_p", math.nan))
             for name in ("spearman", "kendall", "pearson", "tau_ap", "kendall_top", "tau_ap_b", "tau_gap")],
            columns=["measure", "value", "p_value"],
        )
        if self.intervals is None:
            return table
        bounds = self.intervals[["low", "high"]]
        return table.join(bounds, on="measure")

    def side_by_side(self) -> pd.DataFrame:
        """The common runs' scores and ranks in A and B (index run), ordered by A."""
        from exampp.analysis.correlation import side_by_side

        return side_by_side(self.board_a, self.board_b, names=("A", "B"), exclude=self.exclude,
                            decimals=self.decimals)


@dataclass(frozen=True)
class CorrelateJob(CheckedSettings):
    """Spearman, Kendall τ-b, Pearson and τ_AP (A the reference) of A and B on the runs both hold
    (``exampp correlate``). :meth:`run` does the job.

    :param a: Leaderboard A, the reference: a :class:`LeaderboardFile` or a :class:`QrelsMeasure`.
    :param b: Leaderboard B, likewise.
    :param runs: The runs a :class:`QrelsMeasure` is computed over.
    :param depth: Cut the runs at this depth (none by default).
    :param exclude: Runs to leave out of both.
    :param decimals: Round scores to this many decimals before ranking (None: exact).
    :param per_query: Also correlate query by query, which needs per-query scores on both sides (a
        :class:`QrelsMeasure`, or a per-query table file).
    :param bootstrap: When > 0, intervals (:func:`exampp.analysis.statistics.bootstrap_interval`) of
        Spearman, Kendall, τ_AP and Kendall on A's top ``top`` runs over this many resamplings of the
        queries both sides hold (the same draws for A and B:
        :func:`exampp.analysis.statistics.correlation_intervals`); needs per-query scores on both sides.
    :param seed: The seed of the bootstrap's draws.
    :param confidence: The intervals' confidence level.
    :param top: How many of A's top runs ``kendall_top`` takes.
    :param top_ties: A's runs tied at that cut: ``include`` all, or ``truncate`` to exactly ``top``
        by A's order (autojudge-evaluate's ``kendall@k``).
    :param strict: A run query the qrels lack is an error, not a warning.
    :raises SettingError: A setting that breaks its rule (:mod:`exampp.setting_rules`).
    """

    a: LeaderboardSource
    b: LeaderboardSource
    _: KW_ONLY
    runs: RunsSource | None = None
    depth: int | None = None
    exclude: Collection[str] = ()
    decimals: int | None = DEFAULT_DECIMALS
    per_query: bool = False
    bootstrap: int = 0
    seed: int = 0
    confidence: float = 0.95
    top: int = 10
    top_ties: str = "include"
    strict: bool = False

    def run(self, warn: Warn = python_warning) -> LeaderboardCorrelation:
        """Do the job.

        :param warn: Takes each warning line (default: a Python warning).
        :raises CorrelationError: The leaderboards cannot be correlated as asked.
        :raises UnknownExcluded: ``exclude`` names a run in neither leaderboard.
        """
        from exampp.analysis.correlation import correlate, per_query_correlation

        for name, source in (("A", self.a), ("B", self.b)):
            _check_source(name, source, self.runs)
        boards = _Boards(self.runs, self.depth, self.strict, warn)
        board_a, board_b = boards.board(self.a), boards.board(self.b)
        if self.per_query or self.bootstrap:
            for name, source in (("A", self.a), ("B", self.b)):
                _check_per_query(boards, name, source, "per-query correlation" if self.per_query else "the bootstrap")
        try:
            result = correlate(board_a, board_b, exclude=self.exclude, decimals=self.decimals, top=self.top,
                               top_ties=self.top_ties)
        except ValueError as exc:  # an excluded run in neither leaderboard
            raise UnknownExcluded(str(exc)) from None
        if result.n_systems < 2:
            raise CorrelationError(f"{result.n_systems} run(s) in common, need at least 2; only in A: "
                                   f"{short_list(result.only_in_first)}; "
                                   f"only in B: {short_list(result.only_in_second)}")
        queries = per_query_correlation(boards.per_query(self.a), boards.per_query(self.b), exclude=self.exclude,
                                        decimals=self.decimals) if self.per_query else None
        intervals = settings = None
        if self.bootstrap:
            intervals, settings = _intervals(boards.per_query(self.a), boards.per_query(self.b), self.exclude,
                                             self.decimals, self.bootstrap, self.seed, self.confidence, self.top,
                                             warn, self.top_ties, list(board_a))
        return LeaderboardCorrelation(self.a, self.b, board_a, board_b, result, queries, tuple(self.exclude),
                                      self.decimals, intervals, settings)


def _intervals(table_a: pd.DataFrame, table_b: pd.DataFrame, exclude: Collection[str], decimals: int | None,
               n: int, seed: int, confidence: float, top: int, warn: Warn, top_ties: str = "include",
               order: list[str] | None = None) -> tuple[pd.DataFrame, Bootstrap]:
    """Bootstrap intervals of the correlations on the runs and queries both tables hold."""
    from exampp.analysis.statistics import correlation_intervals

    runs = sorted((set(table_a.index) & set(table_b.index)) - set(exclude))
    queries = [q for q in table_a.columns if q in table_b.columns]
    if not queries:
        raise CorrelationError("the bootstrap needs queries in common: the two per-query tables share none")
    only_a = tuple(q for q in table_a.columns if q not in table_b.columns)
    only_b = tuple(q for q in table_b.columns if q not in table_a.columns)
    if only_a or only_b:
        warn(f"bootstrap over the {len(queries)} queries both leaderboards hold; left out: "
             f"{len(only_a)} only in A, {len(only_b)} only in B")
    intervals = correlation_intervals(table_a.loc[runs, queries], table_b.loc[runs, queries], n=n, seed=seed,
                                      confidence=confidence, top=top, decimals=decimals, ties=top_ties,
                                      order=[run for run in order if run in runs] if order else None)
    return intervals, Bootstrap(n, seed, confidence, top, len(queries), only_a, only_b)


def _check_per_query(boards: _Boards, name: str, source: LeaderboardSource, what: str) -> None:
    """The source has per-query scores: computed from qrels, or read from a per-query table."""
    if isinstance(source, LeaderboardFile) and boards.file_table(source) is None:
        raise CorrelationError(
            f"{what} needs per-query scores, and leaderboard {name} ({source.label}) holds one score per run: "
            f"give a per-query table (a query_id column, as 'exampp leaderboard --per-query --format tsv' "
            f"writes), TREC AutoJudge results with per-topic rows, or compute it from qrels")


def per_query_scores(
    sources: list[LeaderboardSource],
    *,
    runs: RunsSource | None = None,
    depth: int | None = None,
    strict: bool = False,
    warn: Warn = python_warning,
    what: str = "this",
) -> list[pd.DataFrame]:
    """The run x query scores of each source.

    :param sources: Measures on qrels, or per-query table files.
    :param runs: The runs a measure is computed over (read once).
    :param depth: Cut the runs at this depth (none by default).
    :param strict: A run query the qrels lack is an error, not a warning.
    :param warn: Takes each warning line (default: a Python warning).
    :param what: Names the job that needs per-query scores, in the message.
    :raises CorrelationError: A leaderboard file of one score per run.
    """
    names = [chr(ord("A") + i) for i in range(len(sources))]
    for name, source in zip(names, sources):
        _check_source(name, source, runs)
    boards = _Boards(runs, depth, strict, warn)
    for name, source in zip(names, sources):
        _check_per_query(boards, name, source, what)
    return [boards.per_query(source) for source in sources]


def short_list(names: list[str], limit: int = 10) -> str:
    """Names for a one-line message: the first ``limit``, then how many more.

    :param names: The names.
    :param limit: How many to show.
    """
    if not names:
        return "(none)"
    more = f" ... ({len(names) - limit} more)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def source_scores(source: LeaderboardSource, *, runs: RunsSource | None = None, depth: int | None = None,
                  strict: bool = False, warn: Warn = python_warning) -> tuple[dict[str, float], pd.DataFrame | None]:
    """One source's leaderboard (run -> score) and its run x query scores where it has them (None
    for a leaderboard file of one score per run).

    :param source: A measure on qrels, or a leaderboard file.
    :param runs: The runs a measure is computed over.
    :param depth: Cut the runs at this depth (none by default).
    :param strict: A run query the qrels lack is an error, not a warning.
    :param warn: Takes each warning line (default: a Python warning).
    """

    _check_source("A", source, runs)
    boards = _Boards(runs, depth, strict, warn)
    table = boards.file_table(source) if isinstance(source, LeaderboardFile) else boards.per_query(source)
    return boards.board(source), table


def _check_source(name: str, source: LeaderboardSource, runs: RunsSource | None) -> None:
    """What can be told before anything is read: a computed leaderboard has runs and one measure."""
    from exampp.scoring import parse_measures

    if not isinstance(source, QrelsMeasure):
        return
    if runs is None:
        raise CorrelationError(f"leaderboard {name} ({source.label}) is computed over runs: give runs")
    columns = [column for column, _ in parse_measures([source.measure])]  # MeasureError: unknown name
    if len(columns) != 1:
        raise CorrelationError(f"leaderboard {name}: {source.measure!r} names {len(columns)} measures "
                               f"({', '.join(columns)}); give one")


class _Boards:
    """Leaderboards of sources; the runs read once, each qrels read and checked once (both sides
    may compute their measures on the same qrels)."""

    def __init__(self, runs: RunsSource | None, depth: int | None, strict: bool, warn: Warn):
        self._source, self._depth, self._strict, self._warn = runs, depth, strict, warn
        self._runs: dict[str, Run] | None = None
        self._qrels: dict[str, Qrels | IntentQrels] = {}
        self._files: dict[LeaderboardFile, tuple[dict[str, float], pd.DataFrame | None]] = {}
        self._tables: dict[QrelsMeasure, pd.DataFrame] = {}

    def board(self, source: LeaderboardSource) -> dict[str, float]:
        if isinstance(source, LeaderboardFile):
            return self._file(source)[0]
        from exampp.scoring import exact_mean

        # the leaderboard's means, from the per-query table the bootstrap and --per-query also use
        return {cast(str, run): exact_mean(row) for run, row in self.per_query(source).iterrows()}

    def file_table(self, source: LeaderboardFile) -> pd.DataFrame | None:
        """The run x query table of a per-query table file (None for a leaderboard file)."""
        return self._file(source)[1]

    def per_query(self, source: LeaderboardSource) -> pd.DataFrame:
        """Run x query table of the measure, or of a per-query table file."""
        if isinstance(source, LeaderboardFile):
            table = self.file_table(source)
            assert table is not None, "checked by _check_per_query"
            return table
        if source not in self._tables:  # per-query correlation and the bootstrap both need it
            from exampp.analysis.statistics import scores_table
            from exampp.scoring import per_query_measures

            values = per_query_measures(self.runs(), self.judgments(source), [source.measure], self._depth)
            self._tables[source] = scores_table(values)
        return self._tables[source]

    def _file(self, source: LeaderboardFile) -> tuple[dict[str, float], pd.DataFrame | None]:
        if source not in self._files:  # read once: it may be standard input
            from exampp.formats.eval_results import read_eval_results
            from exampp.formats.leaderboard import read_leaderboard_file

            if source.format is None and os.path.isdir(source.path):
                raise InputError(str(source.path), None, "a folder: give a leaderboard file (a folder of "
                                                         "trec_eval results is read with format trec_eval)")
            self._files[source] = (read_eval_results(source.path, source.format, measure=source.column)
                                   if source.format else
                                   read_leaderboard_file(source.path, column=source.column, ranks=source.ranks))
        return self._files[source]

    def runs(self) -> dict[str, Run]:
        if self._runs is None:
            assert self._source is not None  # a computed leaderboard has runs (_check_source)
            self._runs = read_runs_source(self._source)
        return self._runs

    def judgments(self, source: QrelsMeasure) -> Qrels | IntentQrels:
        from exampp.api.scores import read_judgments, uses_intent_qrels  # intent qrels for alpha_nDCG@k...

        key = f"{source.qrels}\0{uses_intent_qrels([source.measure])}"
        if key not in self._qrels:
            from exampp.formats.trec_run import check_judged

            self._qrels[key] = read_judgments(source.qrels, [source.measure])
            for line in check_judged(self.runs(), self._qrels[key], source.qrels, self._strict):
                self._warn(line)
        return self._qrels[key]
