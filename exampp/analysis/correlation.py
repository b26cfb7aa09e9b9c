"""Rank correlation between two leaderboards (system -> score, higher is better).

Spearman's ρ (average ranks for ties), Kendall's τ-b and Pearson's r come from scipy.
τ_AP (Yilmaz, Aslam & Robertson, "A new rank correlation coefficient for information
retrieval", SIGIR 2008) is computed here in its tie-aware form: the asymmetric τ_AP,b of
Urbano & Marrero ("The Treatment of Ties in AP Correlation", ICTIR 2017; `tauAP_b_ties` in
their R package ircor). For every system i that is not in the top tie group of the
*compared* ranking, p(i) is the number of systems strictly above i there and C(i) how many
of those are also strictly above i in the *reference* ranking; then

    τ_AP = 2 / |{i : p(i) > 0}| · Σ_{i : p(i) > 0} C(i) / p(i) − 1.

Without ties this is exactly Yilmaz et al.'s τ_AP = 2/(N−1) Σ_{i=2..N} C(i)/(i−1) − 1.
τ_AP is asymmetric: it weights the top of the compared ranking and judges it against the
reference, which is the first argument everywhere in this module (the official leaderboard).
Urbano & Marrero's symmetric τ_AP,b (:func:`tau_ap_b`) is the mean of both directions.

τ_GAP (Gao & Oard, "A Head-Weighted Gap-Sensitive Correlation Coefficient", SIGIR 2015;
:func:`tau_gap`) also weights the top, and weighs each swap by the reference's score gap.

autojudge-evaluate (the TREC AutoJudge meta-evaluation) reports both; docs/explanation/statistics.md
says where its definitions and exampp's differ and why.

Scores are rounded (:func:`round_scores`, 10 decimals by default) before ranking: a mean
computed by summing floats in another order differs in the last bits, which turns true ties
(e.g. P@20 means of 36 runs with only 31 distinct values) into spurious orderings that move
Kendall's τ by a few thousandths.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import NamedTuple, cast

import numpy as np
import pandas as pd

from exampp.defaults import DECIMALS as DEFAULT_DECIMALS, TOP_TIES


def round_scores(board: Mapping[str, float], decimals: int = DEFAULT_DECIMALS) -> dict[str, float]:
    """The leaderboard with scores rounded, so that float summation noise does not break ties.

    :param board: System -> score.
    :param decimals: How many decimals to keep.
    """
    return {system: round(float(score), decimals) for system, score in board.items()}


def tau_ap(reference: Sequence[float] | np.ndarray, other: Sequence[float] | np.ndarray) -> float:
    """Tie-aware τ_AP of ``other`` against ``reference`` (see the module docstring).

    NaN when every system ties in ``other`` (no system has anyone above it).

    :param reference: The reference's scores, one per system (higher is better).
    :param other: The compared scores, aligned with ``reference``.
    """
    x = np.asarray(reference, dtype=float)
    y = np.asarray(other, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"tau_ap needs two score vectors of the same length, got {x.shape} and {y.shape}")
    return float(tau_ap_rows(x[None, :], y[None, :])[0])


def tau_ap_rows(reference: np.ndarray, other: np.ndarray) -> np.ndarray:
    """:func:`tau_ap` of each row pair of two (replicates, systems) arrays at once (the bootstrap's
    replicates); NaN for a row where every system ties in ``other``.

    :param reference: The reference's scores, a row per replicate.
    :param other: The compared scores, aligned with ``reference``.
    """
    above_in_other = other[:, None, :] > other[:, :, None]  # [r, i, j]: j strictly above i
    above_in_reference = reference[:, None, :] > reference[:, :, None]
    p = above_in_other.sum(axis=2)
    concordant = (above_in_other & above_in_reference).sum(axis=2)
    ranked = p > 0  # the top tie group has nobody above it and is left out
    n_ranked = ranked.sum(axis=1)
    ratios = np.divide(concordant, p, out=np.zeros(p.shape), where=ranked).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_ranked > 0, 2 * ratios / n_ranked - 1, math.nan)


def tau_ap_b(first: Sequence[float] | np.ndarray, second: Sequence[float] | np.ndarray) -> float:
    """Symmetric τ_AP,b: the mean of :func:`tau_ap` in both directions.

    NaN when either side ties throughout (a direction whose compared side ties has no system to
    weight). autojudge-evaluate's ``tauap_b`` counts such a direction as 0.0 instead, so for a
    constant leaderboard it reports −0.5 where exampp reports NaN, as Kendall's τ does.

    :param first: One side's scores, one per system (higher is better).
    :param second: The other side's scores, aligned with ``first``.
    """
    return (tau_ap(first, second) + tau_ap(second, first)) / 2


def tau_gap(reference: Sequence[float] | np.ndarray, other: Sequence[float] | np.ndarray) -> float:
    """τ_GAP (Gao & Oard 2015) of the order of ``other`` against the scores of ``reference``.

    ``other`` is sorted best first, ties by position (the caller's system order: exampp passes
    systems sorted by name, as autojudge-evaluate does). Each position i past the first scores the
    share of the reference's gap mass Σ_{j<i} |g_ji| above it that ``other`` orders as the
    reference does; τ_GAP = 2/P · Σ shares − 1, P the positions with any gap mass. NaN with fewer
    than two systems or when the reference ties throughout.

    :param reference: The reference's scores (they give the gaps), one per system.
    :param other: The compared scores (they give the order), aligned with ``reference``.
    """
    x, y = np.asarray(reference, dtype=float), np.asarray(other, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"tau_gap needs two score vectors of the same length, got {x.shape} and {y.shape}")
    return float(tau_gap_rows(x[None, :], y[None, :])[0])


def tau_gap_rows(reference: np.ndarray, other: np.ndarray) -> np.ndarray:
    """:func:`tau_gap` of each row pair of two (replicates, systems) arrays.

    :param reference: The reference's scores, a row per replicate.
    :param other: The compared scores, aligned with ``reference``.
    """
    n = reference.shape[1]
    if n < 2:
        return np.full(len(reference), math.nan)
    order = np.argsort(-other, axis=1, kind="stable")  # ties by position
    truth = np.take_along_axis(reference, order, axis=1)  # the reference's scores in other's order
    gaps = np.abs(truth[:, :, None] - truth[:, None, :])  # [r, i, j]
    above = np.tril(np.ones((n, n), dtype=bool), k=-1)  # j ranked above i in other
    mass = (gaps * above).sum(axis=2)
    correct = (gaps * (above & (truth[:, None, :] > truth[:, :, None]))).sum(axis=2)
    used = mass > 0
    shares = np.divide(correct, mass, out=np.zeros(mass.shape), where=used).sum(axis=1)
    n_used = used.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_used > 0, 2 * shares / n_used - 1, math.nan)


def top_systems(reference: Mapping[str, float], top: int = 10, ties: str = "include") -> list[str]:
    """The systems of the reference's top ``top`` that a top-k correlation takes, best first.

    :param reference: The leaderboard whose top is taken: system -> score (its order breaks ties at
        the cut with ``truncate``).
    :param top: How many of the reference's top systems.
    :param ties: ``include`` keeps every system tied at the cut (those with fewer than ``top``
        systems strictly above); ``truncate`` keeps exactly ``top``, the first in the reference's
        order among those tied at the cut (autojudge-evaluate's ``kendall@k``).
    """
    if ties not in TOP_TIES:
        raise ValueError(f"unknown top ties {ties!r}; one of {', '.join(TOP_TIES)}")
    ranked = sorted(reference, key=lambda system: -reference[system])  # stable: ties in the reference's order
    if ties == "truncate":
        return ranked[:top]
    return [s for s in ranked if sum(other > reference[s] for other in reference.values()) < top]


def correlation_issue(reference: Sequence[float], other: Sequence[float]) -> str | None:
    """autojudge-evaluate's diagnostic of a correlation on these systems' scores: ``too_few`` under three
    systems, else ``all_tied`` when each side holds a single value; None for neither. (Its first,
    ``measure_defaulted``, a missing measure filled with zeros, never arises: exampp refuses a missing measure.)

    :param reference: The reference's scores of the systems correlated.
    :param other: The compared scores, aligned with ``reference``.
    """
    if len(reference) < 3:
        return "too_few"
    if len(set(reference)) == 1 and len(set(other)) == 1:
        return "all_tied"
    return None


@dataclass(frozen=True)
class Correlation:
    """Correlation of two leaderboards over the systems they have in common.

    ``tau_ap``, ``tau_gap`` and ``kendall_top`` take the first leaderboard as the reference. Values
    are NaN where undefined (fewer than two common systems, or a leaderboard where all systems tie).
    ``issue`` and ``top_issue`` are autojudge-evaluate's diagnostics (:func:`correlation_issue`) of
    the common systems and of the top systems ``kendall_top`` takes.
    """

    spearman: float
    spearman_p: float
    kendall: float
    kendall_p: float
    pearson: float
    pearson_p: float
    tau_ap: float
    tau_ap_b: float
    tau_gap: float
    kendall_top: float
    n_systems: int
    only_in_first: list[str]
    only_in_second: list[str]
    excluded: list[str]
    top: int
    top_ties: str
    issue: str | None
    top_issue: str | None

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _statistic(test, x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    # scipy warns and returns NaN on constant input or fewer than 2 points; say NaN quietly.
    if len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return math.nan, math.nan
    result = test(x, y)
    return float(result.statistic), float(result.pvalue)


def correlate(
    first: Mapping[str, float],
    second: Mapping[str, float],
    *,
    exclude: Iterable[str] = (),
    decimals: int | None = DEFAULT_DECIMALS,
    top: int = 10,
    top_ties: str = "include",
) -> Correlation:
    """Correlate two leaderboards on their common systems.

    Systems in only one leaderboard are listed in the result, not used.

    :param first: The reference leaderboard (system -> score): τ_AP's, τ_GAP's and the top's
        reference; its order breaks ties at a truncated top cut.
    :param second: The compared leaderboard.
    :param exclude: Systems to leave out of both; each must be in at least one leaderboard, to catch typos.
    :param decimals: Scores are rounded to this many decimals before ranking (:func:`round_scores`);
        None does not round.
    :param top: ``kendall_top`` is Kendall's τ-b on the common systems in the first's top this many.
    :param top_ties: Systems tied at that cut: ``include`` all, or ``truncate`` to exactly ``top``
        (:func:`top_systems`).
    :raises ValueError: An excluded system in neither leaderboard.
    """

    excluded = sorted(set(exclude))
    unknown = [s for s in excluded if s not in first and s not in second]
    if unknown:
        raise ValueError(f"excluded system(s) in neither leaderboard: {', '.join(unknown)}")
    if decimals is not None:
        first, second = round_scores(first, decimals), round_scores(second, decimals)
    kept_first = {s: v for s, v in first.items() if s not in excluded}
    kept_second = {s: v for s, v in second.items() if s not in excluded}
    common = sorted(kept_first.keys() & kept_second.keys())
    x = np.array([kept_first[s] for s in common], dtype=float)
    y = np.array([kept_second[s] for s in common], dtype=float)
    from scipy import stats  # here: importing scipy takes half a second, which grading does not need

    spearman = _statistic(stats.spearmanr, x, y)
    kendall = _statistic(stats.kendalltau, x, y)  # τ-b: ties in either ranking are handled
    pearson = _statistic(stats.pearsonr, x, y)
    both_first = {s: v for s, v in kept_first.items() if s in kept_second}  # in the first's order
    tops = top_systems(both_first, top, top_ties)
    top_x = np.array([both_first[s] for s in tops], dtype=float)
    top_y = np.array([kept_second[s] for s in tops], dtype=float)
    return Correlation(
        spearman=spearman[0],
        spearman_p=spearman[1],
        kendall=kendall[0],
        kendall_p=kendall[1],
        pearson=pearson[0],
        pearson_p=pearson[1],
        tau_ap=tau_ap(x, y) if len(common) >= 2 else math.nan,
        tau_ap_b=tau_ap_b(x, y),
        tau_gap=tau_gap(x, y),
        kendall_top=_statistic(stats.kendalltau, top_x, top_y)[0],
        n_systems=len(common),
        only_in_first=sorted(kept_first.keys() - kept_second.keys()),
        only_in_second=sorted(kept_second.keys() - kept_first.keys()),
        excluded=excluded,
        top=top,
        top_ties=top_ties,
        issue=correlation_issue(x.tolist(), y.tolist()),
        top_issue=correlation_issue(top_x.tolist(), top_y.tolist()),
    )


def side_by_side(
    first: Mapping[str, float],
    second: Mapping[str, float],
    *,
    names: tuple[str, str] = ("a", "b"),
    exclude: Iterable[str] = (),
    decimals: int | None = DEFAULT_DECIMALS,
) -> pd.DataFrame:
    """The common systems' scores and ranks (1 = best, ties share the best rank), ordered by ``first``.

    :param first: The first leaderboard: system -> score.
    :param second: The second leaderboard.
    :param names: The two leaderboards' names in the columns.
    :param exclude: Systems to leave out.
    :param decimals: Scores are rounded to this many decimals before ranking (None: not rounded).
    """

    if decimals is not None:
        first, second = round_scores(first, decimals), round_scores(second, decimals)
    skip = set(exclude)
    common = sorted((first.keys() & second.keys()) - skip)
    table = pd.DataFrame(
        {f"{names[0]} score": [first[s] for s in common], f"{names[1]} score": [second[s] for s in common]},
        index=pd.Index(common, name="run"),
    )
    for name in names:
        table[f"{name} rank"] = table[f"{name} score"].rank(ascending=False, method="min").astype(int)
    table = table[[f"{names[0]} rank", f"{names[0]} score", f"{names[1]} rank", f"{names[1]} score"]]
    return table.sort_values([f"{names[0]} rank", f"{names[1]} rank"], kind="stable")


class PerQueryCorrelation(NamedTuple):
    per_query: pd.DataFrame
    """One row per common query: spearman, kendall, pearson, tau_ap, n_systems."""
    summary: pd.DataFrame
    """Rows ``mean`` and ``median`` of the per-query values (NaN queries skipped)."""
    only_in_first: list[str]
    """Queries only in the first table."""
    only_in_second: list[str]


PER_QUERY_COLUMNS = ["spearman", "kendall", "pearson", "tau_ap", "n_systems"]


def per_query_correlation(
    first: pd.DataFrame,
    second: pd.DataFrame,
    *,
    exclude: Iterable[str] = (),
    decimals: int | None = DEFAULT_DECIMALS,
) -> PerQueryCorrelation:
    """Correlate two per-query tables (index = system, columns = query) query by query, on the
    queries of both.

    A NaN cell (no score for that system on that query) leaves the system out of that query.

    :param first: The reference table: τ_AP's reference, as in :func:`correlate`.
    :param second: The compared table.
    :param exclude: Systems to leave out; each must be in at least one table.
    :param decimals: Scores are rounded to this many decimals before ranking; None does not round.
    :raises ValueError: An excluded system in neither table.
    """

    excluded = set(exclude)
    unknown = sorted(excluded - set(first.index) - set(second.index))
    if unknown:
        raise ValueError(f"excluded system(s) in neither table: {', '.join(unknown)}")
    queries = [q for q in first.columns if q in second.columns]
    rows = {}
    for query in queries:
        a = {cast(str, s): v for s, v in first[query].dropna().items() if s not in excluded}  # systems' names
        b = {cast(str, s): v for s, v in second[query].dropna().items() if s not in excluded}
        result = correlate(a, b, decimals=decimals)
        rows[query] = [result.spearman, result.kendall, result.pearson, result.tau_ap, result.n_systems]
    per_query = pd.DataFrame.from_dict(rows, orient="index", columns=PER_QUERY_COLUMNS)
    per_query.index.name = "query"
    per_query["n_systems"] = per_query["n_systems"].astype(int)
    summary = per_query.drop(columns="n_systems").agg(["mean", "median"])
    return PerQueryCorrelation(
        per_query=per_query,
        summary=summary,
        only_in_first=[q for q in first.columns if q not in second.columns],
        only_in_second=[q for q in second.columns if q not in first.columns],
    )
