"""The significance job: paired tests between every two runs on one leaderboard's per-query scores
(a measure on qrels over runs, or a per-query table file such as ``exampp cover --per-query``
writes), corrected for multiple comparisons, the discriminative power; and against a second
leaderboard, the run pairs the two order oppositely and which of those differences are
significant in each.

Errors are :class:`~exampp.errors.ExamppError` (the command line prints them as one line).
"""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import KW_ONLY, dataclass

import pandas as pd

from exampp.api import Warn, python_warning
from exampp.api.leaderboards import CorrelationError, LeaderboardSource, UnknownExcluded, per_query_scores
from exampp.api.workspace import RunsSource
from exampp.errors import ExamppError
from exampp.setting_rules import CheckedSettings


@dataclass(frozen=True)
class PairedTests:
    """Paired tests between the runs of one leaderboard.

    :param source: Where the leaderboard came from.
    :param scores: The run x query scores the tests ran on.
    :param tests: One row per run pair (:func:`exampp.analysis.statistics.paired_tests`): a, b,
        mean_a, mean_b, difference, p_value, p_adjusted, significant.
    :param power: Discriminative power: the share of pairs significantly different.
    """

    source: LeaderboardSource
    scores: pd.DataFrame
    tests: pd.DataFrame
    power: float

    @property
    def n_significant(self) -> int:
        return int(self.tests["significant"].sum())


@dataclass(frozen=True)
class Significance:
    """Paired tests on leaderboard A, and when a second one is given, on B and where they disagree.

    :param a: The tests on leaderboard A.
    :param b: The tests on leaderboard B, when given.
    :param disagreements: Run pairs A and B order oppositely
        (:func:`exampp.analysis.statistics.disagreements`), when B is given.
    :param test: The test: ``t`` or ``randomization``.
    :param correction: The multiple-testing correction: ``holm``, ``bh`` or ``none``.
    :param alpha: The level below which an adjusted p-value is significant.
    :param permutations: The randomization test's number of draws.
    :param seed: The seed of those draws.
    """

    a: PairedTests
    b: PairedTests | None
    disagreements: pd.DataFrame | None
    test: str
    correction: str
    alpha: float
    permutations: int
    seed: int

    def summary(self) -> pd.DataFrame:
        """One row per leaderboard: leaderboard, runs, queries, pairs, significant, power; and
        with B: a row ``disagreements`` (pairs ordered oppositely; significant counts in A, B)."""
        rows = [(name, str(side.source.label), len(side.scores), side.scores.shape[1], len(side.tests),
                 side.n_significant, side.power)
                for name, side in (("A", self.a), ("B", self.b)) if side is not None]
        return pd.DataFrame(rows, columns=["side", "leaderboard", "runs", "queries", "pairs", "significant",
                                           "power"])

    def disagreement_counts(self) -> dict[str, int] | None:
        """How many pairs A and B order oppositely, and how many of those are significant in A,
        in B, in both."""
        table = self.disagreements
        if table is None:
            return None
        in_a, in_b = table["significant_in_A"], table["significant_in_B"]
        return {"pairs": len(table), "significant_in_A": int(in_a.sum()), "significant_in_B": int(in_b.sum()),
                "significant_in_both": int((in_a & in_b).sum())}


@dataclass(frozen=True)
class SignificanceJob(CheckedSettings):
    """Paired tests between every two runs of a leaderboard on its per-query scores (``exampp significance``).
    :meth:`run` does the job.

    :param a: The leaderboard: a :class:`~exampp.api.leaderboards.QrelsMeasure` over ``runs``, or a
        per-query table file.
    :param versus: A second leaderboard, likewise: the same tests on it, and the run pairs the two
        order oppositely (on the runs both hold).
    :param runs: The runs a :class:`~exampp.api.leaderboards.QrelsMeasure` is computed over.
    :param depth: Cut the runs at this depth (none by default).
    :param exclude: Runs to leave out.
    :param test: ``t`` (paired t-test) or ``randomization`` (paired sign-flip test).
    :param permutations: The randomization test's number of draws.
    :param seed: The seed of those draws.
    :param correction: How p-values are adjusted: ``holm``, ``bh`` (Benjamini-Hochberg) or ``none``.
    :param alpha: A pair is significant when its adjusted p-value is below this.
    :param strict: A run query the qrels lack is an error, not a warning.
    :raises SettingError: A setting that breaks its rule (:mod:`exampp.setting_rules`).
    """

    a: LeaderboardSource
    versus: LeaderboardSource | None = None
    _: KW_ONLY
    runs: RunsSource | None = None
    depth: int | None = None
    exclude: Collection[str] = ()
    test: str = "t"
    permutations: int = 10000
    seed: int = 0
    correction: str = "holm"
    alpha: float = 0.05
    strict: bool = False

    def run(self, warn: Warn = python_warning) -> Significance:
        """Do the job.

        :param warn: Takes each warning line (default: a Python warning).
        """
        from exampp.analysis.statistics import CORRECTIONS, TESTS, disagreements, discriminative_power, paired_tests

        if self.test not in TESTS:
            raise ExamppError(f"unknown test {self.test!r}; one of {', '.join(TESTS)}")
        if self.correction not in CORRECTIONS:
            raise ExamppError(f"unknown correction {self.correction!r}; one of {', '.join(CORRECTIONS)}")
        sources = [self.a] if self.versus is None else [self.a, self.versus]
        tables = per_query_scores(sources, runs=self.runs, depth=self.depth, strict=self.strict, warn=warn,
                                  what="paired tests")
        unknown = sorted(set(self.exclude) - {run for scores in tables for run in scores.index})
        if unknown:
            raise UnknownExcluded(f"--exclude names no run read: {', '.join(unknown)}")
        sides = []
        for name, source, scores in zip("AB", sources, tables):
            scores = scores.drop(index=[run for run in self.exclude if run in scores.index])
            if len(scores) < 2:
                raise CorrelationError(f"leaderboard {name} ({source.label}): {len(scores)} run(s), paired tests "
                                       "need 2")
            if self.test == "t" and scores.shape[1] < 2:
                raise CorrelationError(f"leaderboard {name} ({source.label}): {scores.shape[1]} query, a paired t-test "
                                       "needs 2 (or use --test randomization)")
            tests = paired_tests(scores, test=self.test, n=self.permutations, seed=self.seed,
                                 correction=self.correction, alpha=self.alpha)
            sides.append(PairedTests(source, scores, tests, discriminative_power(tests)))
        first, second = sides[0], sides[1] if len(sides) > 1 else None
        disagree = None
        if second is not None:
            disagree = disagreements(first.scores, second.scores, first.tests, second.tests)
        return Significance(first, second, disagree, self.test, self.correction, self.alpha, self.permutations,
                            self.seed)
