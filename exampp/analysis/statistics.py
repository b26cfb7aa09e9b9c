"""Statistics with confidence on run x query score tables: bootstrap intervals of mean scores and
of rank correlations, paired significance tests between runs with multiple-testing corrections,
discriminative power, and where two leaderboards disagree.

A *scores* table is a DataFrame with index run, one column per query, float values: a complete
run x query matrix (a query a run lacks is already 0, as trec_eval ``-c``). Means are over the
columns. Every function here is pure; the seed makes every random draw reproducible.

The bootstrap resamples queries with replacement (the topics are the sample, the runs fixed);
the same draws serve every run and both leaderboards of a correlation (a paired bootstrap), and
every interval is :func:`bootstrap_interval`'s (expanded symmetric: see there, and
docs/explanation/statistics.md for the simulation that chose it). Rather than materialising each
replicate, a replicate is the count of times each query is drawn, so that all replicates' means
are one matrix product.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import cast

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from exampp.analysis.correlation import DEFAULT_DECIMALS, round_scores, tau_ap_rows, tau_gap_rows
from exampp.defaults import TOP_TIES

CORRELATIONS = ("spearman", "kendall", "tau_ap", "kendall_top", "tau_ap_b", "tau_gap")
TESTS = ("t", "randomization")
CORRECTIONS = ("holm", "bh", "none")
LEVELS = ("nominal", "ordinal", "interval")


# --- the bootstrap --------------------------------------------------------------------------------

def bootstrap_samples(n_queries: int, n: int, seed: int) -> np.ndarray:
    """(n, n_queries) int array of query indices drawn with replacement; numpy default_rng(seed).
    The same draws serve every system and every leaderboard of one job (paired bootstrap).

    :param n_queries: The number of queries.
    :param n: The number of resamples.
    :param seed: The seed of the draws.
    """
    if n_queries < 1:
        raise ValueError("the bootstrap needs at least one query")
    return np.random.default_rng(seed).integers(0, n_queries, size=(n, n_queries))


def _draw_counts(samples: np.ndarray, n_queries: int) -> np.ndarray:
    """(n, n_queries) float: how often each query is drawn in each replicate."""
    rows = np.repeat(np.arange(len(samples)), samples.shape[1])
    counts = np.zeros((len(samples), n_queries))
    np.add.at(counts, (rows, samples.ravel()), 1)
    return counts


def _replicate_means(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(runs, n) mean of every run in every replicate."""
    return values @ counts.T / values.shape[1]


def expanded_level(confidence: float, n_queries: int) -> float:
    """The level the bootstrap's quantile is read at so that, for the mean of ``n_queries`` normal
    scores, the interval is Student's t interval (Hesterberg 2015, "What teachers should know about
    the bootstrap", his expanded percentile interval): a resample's spread is √((n−1)/n) of the
    sample's, and the normal quantile ignores that the spread is estimated. 1 − 2Φ(−√(n/(n−1)) ·
    t_{n−1}), t at the confidence; the level itself with one query (every resample is that query).

    :param confidence: The interval's confidence level.
    :param n_queries: The number of queries the mean is over.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if n_queries < 2:
        return confidence
    from scipy import stats

    t = stats.t.ppf((1 + confidence) / 2, n_queries - 1) * math.sqrt(n_queries / (n_queries - 1))
    return float(1 - 2 * stats.norm.sf(t))


def bootstrap_interval(estimate: np.ndarray, replicates: np.ndarray, confidence: float, n_queries: int,
                       bounds: tuple[ArrayLike, ArrayLike] = (-math.inf, math.inf)) -> tuple[np.ndarray, np.ndarray]:
    """The interval every exampp command prints: ``estimate ± ξ``, ξ the
    :func:`expanded_level` quantile of ``|replicate − estimate|`` along the last axis (Hall's
    symmetric bootstrap interval, 1988, with Hesterberg's small-sample expansion), clipped to
    ``bounds``. Replicates where the statistic is undefined (NaN) are left out; NaN where the
    estimate or every replicate is.

    Why this construction. It contains its estimate by construction (ξ ≥ 0; the bounds hold the
    estimate). A correlation of leaderboards over few topics is attenuated: resampling makes both
    leaderboards noisier, so the replicates sit below the estimate (on RAG 2024's 11 topics by about
    one standard error, for the best rows by two) while the estimate itself sits below the
    population's correlation. The percentile interval (and BC/BCa, which contain the estimate
    exactly when it does) then lies below the estimate, doubling the bias; the basic interval
    mirrors it above, trusting the size of the bootstrap's bias, which the bootstrap gets wrong
    both ways. ξ reaches past that bias on both sides without trusting its direction, and for a
    mean it is the t interval. The coverage simulation (benchmarks/interval_coverage.py
    --alternatives) weighs it against the percentile, basic and BC intervals and against itself
    unexpanded.

    :param estimate: The statistic on all queries.
    :param replicates: Its value on each resample, along the last axis.
    :param confidence: The interval's confidence level.
    :param n_queries: The number of queries resampled (for :func:`expanded_level`).
    :param bounds: The statistic's range ([−1, 1] for a correlation): scalars, or arrays shaped like
        ``estimate``.
    :returns: The low and high ends.
    """
    estimate = np.asarray(estimate, dtype=float)
    level = expanded_level(confidence, n_queries)
    deviations = np.abs(replicates - estimate[..., None])
    low, high = np.full(estimate.shape, math.nan), np.full(estimate.shape, math.nan)
    defined = ~np.isnan(estimate) & ~np.isnan(deviations).all(axis=-1)
    if defined.any():
        reach = np.nanquantile(deviations[defined], level, axis=-1)
        low[defined], high[defined] = estimate[defined] - reach, estimate[defined] + reach
    lowest, highest = np.broadcast_to(bounds[0], estimate.shape), np.broadcast_to(bounds[1], estimate.shape)
    return np.maximum(low, lowest), np.minimum(high, highest)


def _check_scores(scores: pd.DataFrame, what: str = "scores") -> np.ndarray:
    values = scores.to_numpy(dtype=float)
    if values.ndim != 2 or values.shape[1] == 0:
        raise ValueError(f"{what}: no queries")
    if np.isnan(values).any():
        raise ValueError(f"{what}: missing values (a query a run lacks scores 0: fill them first)")
    return values


def bootstrap_means(scores: pd.DataFrame, n: int = 1000, seed: int = 0, confidence: float = 0.95
                    ) -> pd.DataFrame:
    """Each run's mean score with a bootstrap interval over resampled queries.

    :param scores: A scores table (see the module docstring).
    :param n: The number of bootstrap replicates.
    :param seed: The seed of the draws.
    :param confidence: The interval's confidence level.
    :returns: Index run; columns ``mean`` (on all queries), ``low``, ``high`` (:func:`bootstrap_interval`
        of the mean, within the run's lowest and highest score: no resample leaves them).
    """
    values = _check_scores(scores)
    counts = _draw_counts(bootstrap_samples(values.shape[1], n, seed), values.shape[1])
    means = values.mean(axis=1)
    low, high = bootstrap_interval(means, _replicate_means(values, counts), confidence, values.shape[1],
                                   (values.min(axis=1), values.max(axis=1)))
    return pd.DataFrame({"mean": means, "low": low, "high": high},
                        index=pd.Index(scores.index, name="run"))


def bootstrap_nanmeans(values: pd.DataFrame, n: int = 1000, seed: int = 0, confidence: float = 0.95
                       ) -> pd.DataFrame:
    """Each column's mean over the rows, skipping NaN (a statistic undefined on some topics), with a
    bootstrap interval over resampled rows; :func:`bootstrap_means` for tables with gaps.

    :param values: One row per unit resampled (a topic), one column per statistic.
    :param n: The number of bootstrap replicates.
    :param seed: The seed of the draws.
    :param confidence: The interval's confidence level.
    :returns: Index the columns; columns ``mean``, ``low``, ``high`` (NaN where every row is NaN;
        the interval within the column's lowest and highest value).
    """
    data = values.to_numpy(dtype=float).T  # statistics x units
    if data.shape[1] == 0:
        raise ValueError("the bootstrap needs at least one row")
    counts = _draw_counts(bootstrap_samples(data.shape[1], n, seed), data.shape[1])
    defined = ~np.isnan(data)
    filled = np.where(defined, data, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = filled.sum(axis=1) / defined.sum(axis=1)
        replicates = (filled @ counts.T) / (defined.astype(float) @ counts.T)  # NaN: no defined row drawn
    lowest = np.where(defined.any(axis=1), np.nanmin(np.where(defined, data, np.inf), axis=1), np.nan)
    highest = np.where(defined.any(axis=1), np.nanmax(np.where(defined, data, -np.inf), axis=1), np.nan)
    low, high = bootstrap_interval(means, replicates, confidence, data.shape[1], (lowest, highest))
    return pd.DataFrame({"mean": means, "low": low, "high": high}, index=pd.Index(values.columns, name="statistic"))


def scores_table(per_query: pd.DataFrame, value: str = "value", measure: str | None = None) -> pd.DataFrame:
    """The run x query scores table of a long per-query table; a query a run lacks scores 0.

    :param per_query: A long table with columns ``run, query_id`` and ``value``.
    :param value: The column holding the scores, e.g. ``cover`` of :func:`exampp.scoring.exam_cover`,
        or ``value`` of :func:`exampp.scoring.per_query_measures`.
    :param measure: Keep the rows of this measure only (the ``measure`` column of
        :func:`exampp.scoring.per_query_measures`); all rows by default.
    """
    if measure is not None:
        per_query = per_query[per_query["measure"] == measure]
    table = per_query.pivot(index="run", columns="query_id", values=value).fillna(0.0).astype(float)
    table.columns.name = None
    return table


# --- rank correlations with bootstrap intervals ---------------------------------------------------

def _round(values: np.ndarray, decimals: int | None) -> np.ndarray:
    # round_scores' convention (scores rounded before ranking), vectorised over the replicates
    return values if decimals is None else np.round(values, decimals)


def _pair_signs(values: np.ndarray) -> np.ndarray:
    """(replicates, pairs) sign of system i minus system j for every pair i < j."""
    i, j = np.triu_indices(values.shape[1], k=1)
    return np.sign(values[:, i] - values[:, j])


def _kendall_rows(x: np.ndarray, y: np.ndarray, keep: np.ndarray | None = None) -> np.ndarray:
    """Kendall's τ-b of each row pair (replicates, systems), as scipy's kendalltau; ``keep``
    (replicates, pairs) restricts each row to some system pairs. NaN where a side ties throughout."""
    sx, sy = _pair_signs(x), _pair_signs(y)
    keep = np.ones(sx.shape, dtype=bool) if keep is None else keep
    pairs = keep.sum(axis=1)
    score = (sx * sy * keep).sum(axis=1)
    untied_x = ((sx != 0) & keep).sum(axis=1)
    untied_y = ((sy != 0) & keep).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = score / np.sqrt(untied_x.astype(float) * untied_y)
    return np.where((untied_x > 0) & (untied_y > 0) & (pairs > 0), tau, math.nan)


def _spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's ρ (Pearson on average ranks) of each row pair; NaN where a side is constant."""
    from scipy import stats  # here: importing scipy takes half a second, which grading does not need

    rx, ry = stats.rankdata(x, axis=1), stats.rankdata(y, axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (rx * ry).sum(axis=1) / np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    return np.where(np.isfinite(rho), np.clip(rho, -1, 1), math.nan)


def _top_mask(reference: np.ndarray, top: int, ties: str = "include", priority: np.ndarray | None = None
              ) -> np.ndarray:
    """(replicates, systems): the system is in the reference's top ``top``. ``include``: by 'min'
    rank, so that systems tied at the cut are all in; ``truncate``: exactly ``top`` systems, ties at
    the cut broken by ``priority`` (lower first; by default the column order), as autojudge-evaluate."""
    if ties not in TOP_TIES:
        raise ValueError(f"unknown top ties {ties!r}; one of {', '.join(TOP_TIES)}")
    from scipy import stats

    if ties == "include":
        return stats.rankdata(-reference, method="min", axis=1) <= top
    priority = np.arange(reference.shape[1]) if priority is None else np.asarray(priority)
    order = np.lexsort((np.broadcast_to(priority, reference.shape), -reference), axis=1)
    inside = np.zeros(reference.shape, dtype=bool)
    np.put_along_axis(inside, order[:, :top], True, axis=1)
    return inside


def _top_pairs(reference: np.ndarray, top: int, ties: str = "include", priority: np.ndarray | None = None
               ) -> np.ndarray:
    """(replicates, pairs): both systems of the pair in the reference's top (:func:`_top_mask`)."""
    inside = _top_mask(reference, top, ties, priority)
    i, j = np.triu_indices(reference.shape[1], k=1)
    return inside[:, i] & inside[:, j]


def _correlation_rows(x: np.ndarray, y: np.ndarray, top: int, ties: str = "include",
                      priority: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Every statistic of :data:`CORRELATIONS` for each row pair (x the reference; the columns are
    the systems sorted by name, which τ_GAP's ties follow)."""
    forward = tau_ap_rows(x, y)
    return {
        "spearman": _spearman_rows(x, y),
        "kendall": _kendall_rows(x, y),
        "tau_ap": forward,
        "kendall_top": _kendall_rows(x, y, _top_pairs(x, top, ties, priority)),
        "tau_ap_b": (forward + tau_ap_rows(y, x)) / 2,  # τ_AP,b: both directions
        "tau_gap": tau_gap_rows(x, y),
    }


def kendall_top(reference: Mapping[str, float], other: Mapping[str, float], top: int = 10,
                ties: str = "include") -> float:
    """Kendall's τ-b of two leaderboards on the systems in the reference's top ``top``, over the
    systems both hold; NaN when undefined.

    :param reference: The leaderboard whose top is taken: system -> score.
    :param other: The other leaderboard.
    :param top: How many of the reference's top systems.
    :param ties: ``include`` (systems tied at the cut all count) or ``truncate`` (exactly ``top``,
        ties at the cut by the reference's order: autojudge-evaluate's ``kendall@k``).
    """
    return correlation_values(reference, other, top, decimals=None, ties=ties)["kendall_top"]


def _leaderboard_row(scores: pd.DataFrame, decimals: int | None) -> np.ndarray:
    """(1, runs): the means on all queries, rounded as :func:`round_scores` rounds leaderboards."""
    means = cast("dict[str, float]", scores.mean(axis=1).to_dict())  # runs' names
    rounded = means if decimals is None else round_scores(means, decimals)
    return np.array([[rounded[run] for run in scores.index]], dtype=float)


def _aligned(reference: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    if set(reference.index) != set(other.index) or set(reference.columns) != set(other.columns):
        raise ValueError("the two score tables must hold the same runs and the same queries")
    return other.loc[reference.index, reference.columns]


def _priority(systems: list, order: list) -> np.ndarray:
    """Each system's position in ``order`` (the reference's order, which breaks ties at a truncated cut)."""
    position = {system: i for i, system in enumerate(order)}
    return np.array([position.get(s, len(position)) for s in systems])


def correlation_values(reference: Mapping[str, float] | pd.Series, other: Mapping[str, float] | pd.Series,
                       top: int = 10, decimals: int | None = DEFAULT_DECIMALS, ties: str = "include"
                       ) -> dict[str, float]:
    """Every statistic of :data:`CORRELATIONS` of two leaderboards on the systems both hold.

    :param reference: τ_AP's reference, which also picks the top: system -> score (its order breaks
        ties at the cut with ``ties="truncate"``).
    :param other: The other leaderboard.
    :param top: How many of the reference's top systems ``kendall_top`` takes.
    :param decimals: Scores are rounded to this many decimals first (None: not rounded).
    :param ties: ``kendall_top``'s systems tied at the cut: ``include`` or ``truncate``
        (:func:`~exampp.analysis.correlation.top_systems`).
    """
    common = sorted(set(reference.keys()) & set(other.keys()))
    x = _round(np.array([[reference[s] for s in common]], dtype=float), decimals)
    y = _round(np.array([[other[s] for s in common]], dtype=float), decimals)
    priority = _priority(common, list(reference.keys()))
    return {name: float(values[0]) for name, values in _correlation_rows(x, y, top, ties, priority).items()}


def correlation_intervals(reference: pd.DataFrame | pd.Series, other: pd.DataFrame, n: int = 1000, seed: int = 0,
                          confidence: float = 0.95, top: int = 10, decimals: int | None = DEFAULT_DECIMALS,
                          ties: str = "include", order: list[str] | None = None) -> pd.DataFrame:
    """Rank correlations of two leaderboards' means with bootstrap intervals over resampled queries,
    one set of draws for both tables.

    :param reference: A scores table (see the module docstring), τ_AP's reference. Given as a
        leaderboard (a Series: run -> score, e.g. an official leaderboard without per-query scores),
        it is held fixed in every replicate: the interval then reflects the queries of ``other`` only.
    :param other: A scores table of the same runs and, after aligning, the same queries.
    :param n: The number of bootstrap replicates.
    :param seed: The seed of the draws.
    :param confidence: The intervals' confidence level.
    :param top: ``kendall_top`` is Kendall tau-b on the systems in the reference's top ``top`` (by mean).
    :param decimals: Means are rounded to this many decimals before ranking (:func:`round_scores`);
        None does not round.
    :param ties: ``kendall_top``'s systems tied at the cut: ``include`` or ``truncate``
        (:func:`~exampp.analysis.correlation.top_systems`).
    :param order: The runs in the reference's order, which breaks ties at a truncated cut (default:
        the reference's own row order).
    :returns: Index statistic (one of :data:`CORRELATIONS`); columns ``value`` (on all queries), ``low``, ``high``.
    :raises ValueError: The tables' runs or queries differ.
    """
    priority_order = list(reference.index) if order is None else list(order)
    runs = sorted(reference.index)  # τ_GAP breaks ties in ``other`` by this order, as autojudge-evaluate
    if isinstance(reference, pd.Series):
        if set(reference.index) != set(other.index):
            raise ValueError("the leaderboard and the score table must hold the same runs")
        reference = reference.loc[runs]
        other = other.loc[runs]
        x_row = _round(reference.to_numpy(dtype=float)[None, :], decimals)
    else:
        other = _aligned(reference, other).loc[runs]
        reference = reference.loc[runs]
        x_row = _leaderboard_row(reference, decimals)
    priority = _priority(runs, priority_order)
    y_values = _check_scores(other, "other")
    values = _correlation_rows(x_row, _leaderboard_row(other, decimals), top, ties, priority)
    rows = {name: (float(values[name][0]), math.nan, math.nan) for name in CORRELATIONS}
    if n:
        counts = _draw_counts(bootstrap_samples(y_values.shape[1], n, seed), y_values.shape[1])
        y_boot = _round(_replicate_means(y_values, counts).T, decimals)  # (replicates, runs)
        if isinstance(reference, pd.Series):
            x_boot = np.repeat(x_row, n, axis=0)
        else:
            x_boot = _round(_replicate_means(_check_scores(reference, "reference"), counts).T, decimals)
        replicates = _correlation_rows(x_boot, y_boot, top, ties, priority)
        for name in CORRELATIONS:
            low, high = bootstrap_interval(values[name], replicates[name][None], confidence, y_values.shape[1], (-1, 1))
            rows[name] = (rows[name][0], float(low[0]), float(high[0]))
    table = pd.DataFrame.from_dict(rows, orient="index", columns=["value", "low", "high"])
    table.index.name = "statistic"
    return table


# --- paired tests between runs --------------------------------------------------------------------

def _order(scores: pd.DataFrame) -> list[str]:
    """Runs best first by mean (rounded as leaderboards are), ties by name."""
    means = round_scores(cast("dict[str, float]", scores.mean(axis=1).to_dict()))  # runs' names
    return sorted(means, key=lambda run: (-means[run], str(run)))


def _randomization_p(differences: np.ndarray, n: int, seed: int) -> np.ndarray:
    """Two-sided paired randomisation (sign-flip) test of every row of per-query differences:
    (1 + flips whose |mean| >= the observed |mean|) / (n + 1), with ``n`` random sign vectors
    shared by all rows."""
    signs = np.random.default_rng(seed).integers(0, 2, size=(n, differences.shape[1])) * 2 - 1
    observed = np.abs(differences.sum(axis=1))
    flipped = np.abs(differences @ signs.T)
    # a flip that reproduces the observed sum must count despite summation-order noise
    slack = 1e-9 * np.maximum(1.0, np.abs(differences).sum(axis=1))
    count = (flipped >= (observed - slack)[:, None]).sum(axis=1)
    return (count + 1) / (n + 1)


def adjust(p_values: np.ndarray, correction: str = "holm") -> np.ndarray:
    """p-values adjusted for multiple comparisons.

    :param p_values: The p-values.
    :param correction: ``holm`` (step-down, family-wise error), ``bh`` (Benjamini-Hochberg step-up,
        false discovery rate) or ``none``.
    """
    p = np.asarray(p_values, dtype=float)
    if correction == "none" or len(p) == 0:
        return p.copy()
    out = np.full(len(p), math.nan)
    defined = ~np.isnan(p)  # an undefined p-value (NaN) is no comparison: it stays NaN, the others are adjusted
    out[defined] = _adjusted(p[defined], correction)
    return out


def _adjusted(p: np.ndarray, correction: str) -> np.ndarray:
    m = len(p)
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if correction == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ranked))
    elif correction == "bh":
        adjusted = np.minimum.accumulate(np.minimum(1.0, m / np.arange(1, m + 1) * ranked)[::-1])[::-1]
    else:
        raise ValueError(f"unknown correction {correction!r}; one of {', '.join(CORRECTIONS)}")
    out = np.empty(m)
    out[order] = adjusted
    return out


def paired_tests(scores: pd.DataFrame, test: str = "t", n: int = 10000, seed: int = 0,
                 correction: str = "holm", alpha: float = 0.05) -> pd.DataFrame:
    """A paired significance test of every pair of runs (a better-or-equal mean first).

    A pair whose per-query scores are all equal has p 1; for the t-test, a pair whose differences
    are one non-zero constant has p 0 (no variance: t is infinite).

    :param scores: A scores table (see the module docstring).
    :param test: ``t`` (scipy.stats.ttest_rel) or ``randomization`` (paired sign-flip, p = (count+1)/(n+1)).
    :param n: The randomization test's number of permutations.
    :param seed: The seed of the permutations.
    :param correction: The multiple-testing correction: ``holm``, ``bh`` (Benjamini-Hochberg) or ``none``.
    :param alpha: The level at which a pair is significant (on the adjusted p-value).
    :returns: Columns ``a, b, mean_a, mean_b, difference, p_value, p_adjusted, significant``.
    """
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}; one of {', '.join(TESTS)}")
    if correction not in CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}; one of {', '.join(CORRECTIONS)}")
    _check_scores(scores)
    runs = _order(scores)
    first, second = np.triu_indices(len(runs), k=1)
    values = scores.loc[runs].to_numpy(dtype=float)
    differences = values[first] - values[second]
    identical = (differences == 0).all(axis=1)
    if test == "t":
        from scipy import stats

        with warnings.catch_warnings():  # constant differences: scipy warns, t is infinite and p 0
            warnings.simplefilter("ignore", RuntimeWarning)
            p = stats.ttest_rel(values[first], values[second], axis=1).pvalue
        p = np.atleast_1d(np.asarray(p, dtype=float))
    else:
        p = _randomization_p(differences, n, seed)
    p = np.where(identical, 1.0, p)
    adjusted = adjust(p, correction)
    means = values.mean(axis=1)
    return pd.DataFrame({
        "a": [runs[i] for i in first], "b": [runs[j] for j in second],
        "mean_a": means[first], "mean_b": means[second], "difference": means[first] - means[second],
        "p_value": p, "p_adjusted": adjusted, "significant": adjusted < alpha,
    })


def discriminative_power(tests: pd.DataFrame) -> float:
    """Share of the system pairs found significantly different (NaN without pairs).

    :param tests: The tests, as :func:`paired_tests` returns them.
    """
    return float(tests["significant"].mean()) if len(tests) else math.nan


def disagreements(scores_a: pd.DataFrame, scores_b: pd.DataFrame, tests_a: pd.DataFrame,
                  tests_b: pd.DataFrame) -> pd.DataFrame:
    """System pairs the two leaderboards order oppositely (x above y in A, y above x in B; a tie
    in either is no disagreement), on the runs both hold. Means are rounded as leaderboards are
    before comparing.

    :param scores_a: Leaderboard A's scores table.
    :param scores_b: Leaderboard B's scores table.
    :param tests_a: The paired tests on A (:func:`paired_tests`).
    :param tests_b: The paired tests on B.
    :returns: Columns a, b (a above b in A), mean_a_in_A, mean_b_in_A, mean_a_in_B, mean_b_in_B,
        p_adjusted_in_A, p_adjusted_in_B, significant_in_A, significant_in_B.
    """
    runs = sorted(set(scores_a.index) & set(scores_b.index))
    in_a = round_scores(cast("dict[str, float]", scores_a.loc[runs].mean(axis=1).to_dict()))  # runs' names
    in_b = round_scores(cast("dict[str, float]", scores_b.loc[runs].mean(axis=1).to_dict()))
    verdicts = [_pair_verdicts(tests_a), _pair_verdicts(tests_b)]
    rows = []
    for position, x in enumerate(runs):
        for y in runs[position + 1:]:
            if (in_a[x] - in_a[y]) * (in_b[x] - in_b[y]) >= 0:
                continue
            better, worse = (x, y) if in_a[x] > in_a[y] else (y, x)
            (p_a, sig_a), (p_b, sig_b) = (v.get(frozenset((x, y)), (math.nan, False)) for v in verdicts)
            rows.append((better, worse, in_a[better], in_a[worse], in_b[better], in_b[worse], p_a, p_b, sig_a, sig_b))
    table = pd.DataFrame(rows, columns=["a", "b", "mean_a_in_A", "mean_b_in_A", "mean_a_in_B", "mean_b_in_B",
                                        "p_adjusted_in_A", "p_adjusted_in_B", "significant_in_A",
                                        "significant_in_B"])
    return table.sort_values(["mean_a_in_A", "a", "b"], ascending=[False, True, True], kind="stable",
                             ignore_index=True)


def _pair_verdicts(tests: pd.DataFrame) -> dict[frozenset, tuple[float, bool]]:
    return {frozenset((a, b)): (float(p), bool(s))
            for a, b, p, s in tests[["a", "b", "p_adjusted", "significant"]].itertuples(index=False)}


# --- Krippendorff's alpha -------------------------------------------------------------------------

def krippendorff_alpha(reliability: np.ndarray, level: str = "ordinal") -> float:
    """Krippendorff's α by the coincidence matrix (Krippendorff 2011, "Computing Krippendorff's
    Alpha-Reliability"): α = 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck over the pairable values
    (units with at least two values). NaN when there is no disagreement to expect (one value).

    :param reliability: A coders x units matrix (NaN = missing).
    :param level: ``nominal``, ``ordinal`` or ``interval``.
    """

    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; one of {', '.join(LEVELS)}")
    data = np.asarray(reliability, dtype=float)
    if data.ndim != 2:
        raise ValueError(f"reliability data must be coders x units, got shape {data.shape}")
    data = data[:, (~np.isnan(data)).sum(axis=0) >= 2]  # a lone value has nothing to be paired with
    values, codes = np.unique(data[~np.isnan(data)], return_inverse=True)
    if len(values) < 2:
        return math.nan
    units = np.nonzero(~np.isnan(data))[1]
    counts = np.zeros((data.shape[1], len(values)))  # units x values: how many coders gave the value
    np.add.at(counts, (units, codes), 1)
    weights = 1 / (counts.sum(axis=1) - 1)
    coincidences = (counts * weights[:, None]).T @ counts - np.diag(weights @ counts)
    totals = coincidences.sum(axis=1)
    delta = _delta(values, totals, level)
    expected = (np.outer(totals, totals) * delta).sum()
    if expected == 0:
        return math.nan
    return float(1 - (totals.sum() - 1) * (coincidences * delta).sum() / expected)


def krippendorff_alpha_counts(tables: np.ndarray, level: str = "ordinal") -> np.ndarray:
    """:func:`krippendorff_alpha` of two coders who code every unit, from their k×k count tables
    along the last two axes (rows: the first coder's value, columns: the second's; the values are
    0 .. k−1), for every table at once (a bootstrap's replicates). Each unit is a pair of values, so
    the coincidence matrix is the table plus its transpose. NaN where there is no disagreement to
    expect.

    :param tables: k×k count tables along the last two axes.
    :param level: ``nominal``, ``ordinal`` or ``interval``.
    """

    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; one of {', '.join(LEVELS)}")
    counts = np.asarray(tables, dtype=float)
    coincidences = counts + np.swapaxes(counts, -1, -2)
    totals = coincidences.sum(axis=-1)
    delta = _delta(np.arange(counts.shape[-1], dtype=float), totals, level)
    expected = (totals[..., :, None] * totals[..., None, :] * delta).sum(axis=(-2, -1))
    observed = (coincidences * delta).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1 - (totals.sum(axis=-1) - 1) * observed / expected
    return np.where(expected > 0, alpha, math.nan)


def _delta(values: np.ndarray, totals: np.ndarray, level: str) -> np.ndarray:
    """Squared difference δ²_ck between values c and k of the level's metric (``totals``: the
    values' marginals, with any leading axes, which the ordinal metric keeps)."""
    if level == "nominal":
        return 1.0 - np.eye(len(values))
    if level == "interval":
        return np.subtract.outer(values, values) ** 2
    # ordinal: the values' marginals between c and k, less half of c's and k's own
    cumulative = np.concatenate([np.zeros(totals.shape[:-1] + (1,)), np.cumsum(totals, axis=-1)], axis=-1)
    c, k = np.meshgrid(np.arange(len(values)), np.arange(len(values)), indexing="ij")
    low, high = np.minimum(c, k), np.maximum(c, k)
    between = cumulative[..., high + 1] - cumulative[..., low]
    return (between - (totals[..., c] + totals[..., k]) / 2) ** 2
