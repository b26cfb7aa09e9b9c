"""How one nugget assignment (exampp's, offline or by an LLM) agrees with
another (the official one), nugget by nugget and in the run leaderboards they induce.

Only the (topic, run, nugget) assigned in both are compared; a nugget's importance is the
official one's. Nugget level: Cohen's κ of the three assignments (unweighted), κ of support
against the rest (partial support counting as not supported, as the strict scores count it),
and Krippendorff's α (ordinal) of the grades 0/1/2, with both assignments as two coders. Run
level: each measure's leaderboard from either assignment (:mod:`exampp.analysis.nugget_scores`) over
the shared topics, on the runs that answered every one of them in both (a run missing a topic
is left out, and listed, rather than scored 0 there), correlated with
:func:`exampp.analysis.statistics.correlation_intervals` (Kendall's τ-b, Spearman's ρ, τ_AP;
the official leaderboard is τ_AP's reference).

The bootstrap resamples the shared topics; one set of draws serves every statistic (the same
draws as :func:`~exampp.analysis.statistics.correlation_intervals` makes from the seed), and the
intervals are :func:`~exampp.analysis.statistics.bootstrap_interval`'s. The job,
:mod:`exampp.api.nugget_agreement`, reads the assignment files. Errors are :class:`~exampp.errors.ExamppError`.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from exampp.analysis.label_agreement import cohen_kappa_counts
from exampp.errors import ExamppError
from exampp.formats.nugget_assignments import ASSIGNMENTS, Answer, AssignedNugget

NUGGET_STATISTICS = ("kappa", "kappa_binary", "alpha_ordinal")
RUN_STATISTICS = ("kendall", "spearman", "tau_ap")
SUPPORT = ASSIGNMENTS.index("support")


class NoCommonNuggets(ExamppError, ValueError):
    """No (topic, run, nugget) is assigned in both assignments: nothing to compare."""


@dataclass(frozen=True)
class NuggetAgreement:
    """One nugget assignment ("ours") against another ("official") on what both assign."""

    n_nuggets: int
    """(topic, run, nugget) assigned in both."""
    only_ours: int
    only_official: int
    topics: tuple[str, ...]
    """The topics of the compared nuggets, sorted: what the bootstrap resamples."""
    nuggets: pd.DataFrame
    """Index ``statistic`` (:data:`NUGGET_STATISTICS`); columns ``value, low, high``."""
    confusion: pd.DataFrame
    """Counts: rows our assignment, columns the official one (both in :data:`ASSIGNMENTS` order)."""
    runs: pd.DataFrame
    """Columns ``measure, statistic`` (:data:`RUN_STATISTICS`), ``value, low, high``."""
    n_runs: int
    """Runs in the leaderboards: those that answered every topic in both."""
    runs_left_out: tuple[str, ...]
    bootstrap: int
    seed: int
    confidence: float

    def table(self) -> pd.DataFrame:
        """Every statistic in one table: columns ``level`` (nugget or run), ``measure``
        (``assignment`` for the nugget level), ``statistic, value, low, high``."""
        nuggets = self.nuggets.reset_index().assign(level="nugget", measure="assignment")
        runs = self.runs.assign(level="run")
        columns = ["level", "measure", "statistic", "value", "low", "high"]
        return pd.concat([nuggets[columns], runs[columns]], ignore_index=True)


def _assigned(answers: Iterable[Answer]) -> dict[tuple[str, str], dict[str, AssignedNugget]]:
    """(topic, run) -> nugget text -> the assigned nugget."""
    return {(a.query_id, a.run_id): {n.text: n for n in a.nuggets if n.assignment is not None} for a in answers}


def _side(shared: dict[tuple[str, str], list[tuple[AssignedNugget, AssignedNugget]]], which: int) -> list[Answer]:
    """One side's answers (0 ours, 1 official) on the shared nuggets, with the official importance."""
    return [Answer(topic, run, "", tuple(AssignedNugget(pair[1].text, pair[1].importance, pair[which].assignment)
                                         for pair in pairs))
            for (topic, run), pairs in shared.items()]


def _binary(tables: np.ndarray) -> np.ndarray:
    """Support against the rest: the 2×2 tables (row/column 0 not support, 1 support)."""
    rest = [g for g in range(len(ASSIGNMENTS)) if g != SUPPORT]
    out = np.empty(tables.shape[:-2] + (2, 2))
    for i, rows in enumerate((rest, [SUPPORT])):
        for j, columns in enumerate((rest, [SUPPORT])):
            out[..., i, j] = tables[..., rows, :][..., :, columns].sum(axis=(-2, -1))
    return out


def nugget_statistics(tables: np.ndarray) -> np.ndarray:
    """(..., statistics): the :data:`NUGGET_STATISTICS` of grade count tables (..., 3, 3).

    :param tables: 3×3 count tables of the two assignments' grades along the last two axes.
    """

    from exampp.analysis.statistics import krippendorff_alpha_counts

    return np.stack([cohen_kappa_counts(tables), cohen_kappa_counts(_binary(tables)),
                     krippendorff_alpha_counts(tables, "ordinal")], axis=-1)


def _nugget_statistics(tables: np.ndarray, bootstrap: int, seed: int, confidence: float) -> pd.DataFrame:
    """Index statistic; value, low, high from the per-topic grade tables (topics, 3, 3)."""
    from exampp.analysis.statistics import bootstrap_interval, bootstrap_samples

    point = nugget_statistics(tables.sum(axis=0))
    low = high = np.full(len(NUGGET_STATISTICS), math.nan)
    if bootstrap:
        replicates = tables[bootstrap_samples(len(tables), bootstrap, seed)].sum(axis=1)
        # κ lies in [-1, 1]; α is at most 1
        low, high = bootstrap_interval(point, nugget_statistics(replicates).T, confidence, len(tables),
                                       (np.array([-1, -1, -math.inf]), 1))
    return pd.DataFrame({"value": point, "low": low, "high": high},
                        index=pd.Index(NUGGET_STATISTICS, name="statistic"))


def _run_statistics(ours: list[Answer], official: list[Answer], topics: Sequence[str], measures: Sequence[str],
                    bootstrap: int, seed: int, confidence: float) -> tuple[pd.DataFrame, list[str], list[str]]:
    """(the correlation table, the runs compared, the runs left out)."""
    from exampp.analysis.nugget_scores import per_answer
    from exampp.analysis.statistics import correlation_intervals, scores_table

    answered: dict[str, set[str]] = {}
    for answer in official:
        answered.setdefault(answer.run_id, set()).add(answer.query_id)
    runs = sorted(run for run, done in answered.items() if done >= set(topics))
    left_out = sorted(set(answered) - set(runs))
    scored = [per_answer(a for a in side if a.run_id in runs) for side in (ours, official)]
    rows = []
    for measure in measures:
        if len(runs) < 2:
            rows += [(measure, statistic, math.nan, math.nan, math.nan) for statistic in RUN_STATISTICS]
            continue
        ours_table, official_table = (scores_table(s, value=measure) for s in scored)
        result = correlation_intervals(official_table, ours_table, n=bootstrap, seed=seed, confidence=confidence)
        rows += [(measure, statistic, *result.loc[statistic]) for statistic in RUN_STATISTICS]
    return pd.DataFrame(rows, columns=["measure", "statistic", "value", "low", "high"]), runs, left_out


def nugget_agreement(ours: Iterable[Answer], official: Iterable[Answer], *, measures: Sequence[str] = ("V_strict",),
                     bootstrap: int = 1000, seed: int = 0, confidence: float = 0.95) -> NuggetAgreement:
    """Agreement of one nugget assignment with the official one on the (topic, run, nugget) both
    assign (see the module docstring).

    :param ours: The answers of the assignment to check.
    :param official: The answers of the official assignment.
    :param measures: The measures whose leaderboards are correlated.
    :param bootstrap: The number of resamples of the shared topics.
    :param seed: The seed of the resamples.
    :param confidence: The intervals' confidence level.
    """

    from exampp.analysis.nugget_scores import MEASURES

    unknown = [m for m in measures if m not in MEASURES]
    if unknown:
        raise ExamppError(f"unknown nugget measure(s) {', '.join(unknown)}; one of {', '.join(MEASURES)}")
    mine, theirs = _assigned(ours), _assigned(official)
    shared: dict[tuple[str, str], list[tuple[AssignedNugget, AssignedNugget]]] = {}
    for key, nuggets in theirs.items():
        pairs = [(mine[key][text], nugget) for text, nugget in nuggets.items() if text in mine.get(key, {})]
        if pairs:
            shared[key] = pairs
    n_nuggets = sum(len(pairs) for pairs in shared.values())
    if not n_nuggets:
        raise NoCommonNuggets("no (topic, run, nugget) is assigned in both assignments")
    topics = sorted({topic for topic, _ in shared})
    tables = np.zeros((len(topics), len(ASSIGNMENTS), len(ASSIGNMENTS)))
    position = {topic: i for i, topic in enumerate(topics)}
    for (topic, _), pairs in shared.items():
        for mine_nugget, official_nugget in pairs:
            tables[position[topic], mine_nugget.grade, official_nugget.grade] += 1
    runs, compared, left_out = _run_statistics(_side(shared, 0), _side(shared, 1), topics, measures, bootstrap,
                                               seed, confidence)
    confusion = pd.DataFrame(tables.sum(axis=0).astype(int), index=pd.Index(ASSIGNMENTS, name="ours"),
                             columns=pd.Index(ASSIGNMENTS, name="official"))
    return NuggetAgreement(
        n_nuggets=n_nuggets,
        only_ours=sum(len(n) for n in mine.values()) - n_nuggets,
        only_official=sum(len(n) for n in theirs.values()) - n_nuggets,
        topics=tuple(topics), nuggets=_nugget_statistics(tables, bootstrap, seed, confidence),
        confusion=confusion, runs=runs, n_runs=len(compared), runs_left_out=tuple(left_out),
        bootstrap=bootstrap, seed=seed, confidence=confidence)
