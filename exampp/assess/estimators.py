"""Estimates of every run's measures from a judge's labels on the whole pool and people's labels on a
sample of it, with intervals.

The estimators (``--estimator``):

- ``judge``: the judge's labels taken as the truth; no interval (it has no error model).
- ``humans``: the people's labels alone, Horvitz–Thompson: T̂ = Σ_{d∈S} a_d y_d / π_d.
- ``ppi``, ``ppi++``: prediction-powered inference by ``ppi-python`` (Angelopoulos et al. 2023; PPI++
  with its power-tuned λ, 2024), run by run over the run's ranked slots, the judge's relevance
  (grade ≥ τ) as the prediction and 1/π as sample weights. The published baselines; means (P@k) only.
- ``calibrated`` (the default): a *difference estimator* (model-assisted, Särndal et al. 1992) with a
  judge calibrated on the sample: for each target of the human label (relevant at a level, or the
  gain) a ridge regression on the judge's grade (one-hot) and the query (shrunk toward 0) predicts
  f_d for every pooled pair; each sampled pair's prediction comes from the folds it is not in
  (cross-fitting, so that a pair's own label never shapes its prediction), and
  T̂ = Σ_{d∉S} a_d f_d + Σ_{d∈S} a_d (f_d^{(-k)} + (y_d − f_d^{(-k)}) / π_d).
  Design-unbiased whatever f is; f only decides how small the variance is. A pair drawn with π = 1
  counts with its label exactly.

Intervals: the totals' sampling error is reproduced by a multiplier bootstrap over the sampled pairs
(each residual term times 1 + √(1−π_d)·z, z standard normal: the Poisson-sampling variance
Σ (1−π)/π² (a e)²) for the measures linear in the labels, by a delete-a-group jackknife for nDCG's
ratio; every measure is computed on every replicate (the differences between runs from the same
replicates), and the interval is estimate ± t·sd with Student's t on the Kish effective number of
sampled pairs behind the estimate (small samples get wide intervals, not overconfident ones). The
interval therefore always contains its estimate. Values are clipped to the measure's range [0, 1].
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse, stats

from exampp.assess.measures import (
    AssessMeasure,
    Layout,
    Target,
    grade_levels,
    known_counts,
    measure_totals,
    measure_values,
)
from exampp.assess.shrinkage import shrink

ESTIMATORS = ("eb", "calibrated", "ppi++", "ppi", "humans", "judge")
DEFAULT_ESTIMATOR = "eb"
FOLDS = 10
GRADE_PENALTY = 1.0
QUERY_PENALTY = 5.0


@dataclass(frozen=True)
class Evidence:
    """What the estimators see. ``judge``: the judge's grade of every pooled pair; ``relevant_grade``: the
    judge grade from which the judge calls a pair relevant (τ); ``sampled``: the indices of the pairs
    people judged, ``probabilities`` their inclusion probabilities, ``labels`` their human grades
    (sampled x assessors, NaN where an assessor gave none)."""

    layout: Layout
    judge: np.ndarray
    relevant_grade: float
    sampled: np.ndarray
    probabilities: np.ndarray
    labels: np.ndarray


@dataclass(frozen=True)
class Estimates:
    """Every run's measures: ``table`` columns run, measure, estimate, low, high, se;
    ``differences``: every pair of runs per measure (a above b by the judge): judge_difference,
    difference, low, high, p_value, p_adjusted (Holm, per measure), confirmed (the sample confirms
    the judge's order at the level)."""

    table: pd.DataFrame
    differences: pd.DataFrame
    estimator: str
    level: float


def target_values(labels: np.ndarray, target: Target) -> np.ndarray:
    """Each sampled pair's value of the target, averaged over its assessors."""
    values = np.where(np.isnan(labels), np.nan, target.of(np.nan_to_num(labels)))
    return np.nanmean(values, axis=1)


def _design(evidence: Evidence, seed: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """The calibration's one-hot design (pairs x features) and the cross-fitting folds of the sample."""
    grades = np.unique(evidence.judge)
    grade_part = (evidence.judge[:, None] == grades[None, :]).astype(float)
    n_queries = len(evidence.layout.queries)
    query_part = np.zeros((len(evidence.judge), n_queries))
    query_part[np.arange(len(evidence.judge)), evidence.layout.query_of] = 1.0
    design = np.hstack([grade_part, query_part])
    order = np.random.default_rng(seed).permutation(len(evidence.sampled))
    folds = [order[k::FOLDS] for k in range(min(FOLDS, len(order)))]
    return design, folds


def _ridge(design: np.ndarray, values: np.ndarray, weights: np.ndarray, n_grades: int) -> tuple[np.ndarray, float]:
    """(coefficients, intercept) of the ridge fit, each sampled pair weighted by 1/π (mean 1) so that
    the fit describes the pool, not the pairs a design favours: the grades' offsets lightly penalised
    (toward the weighted mean, the intercept), the queries' heavily (toward 0)."""
    penalty = np.concatenate([np.full(n_grades, GRADE_PENALTY), np.full(design.shape[1] - n_grades, QUERY_PENALTY)])
    weights = weights / weights.mean()
    mean = float(np.average(values, weights=weights))
    gram = design.T @ (design * weights[:, None]) + np.diag(penalty)
    return np.linalg.solve(gram, design.T @ (weights * (values - mean))), mean


def calibrated_predictions(evidence: Evidence, target: Target, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(f for every pooled pair from a fit on the whole sample, f for each sampled pair from the fit
    without its fold), clipped to the target's range."""
    design, folds = _design(evidence, seed)
    n_grades = len(np.unique(evidence.judge))
    y = target_values(evidence.labels, target)
    sampled_design = design[evidence.sampled]
    high = max(1.0, float(np.nanmax(y))) if len(y) else 1.0

    def predict(rows: np.ndarray, fit_on: np.ndarray) -> np.ndarray:
        if len(fit_on) == 0:
            return np.zeros(len(rows))
        beta, mean = _ridge(sampled_design[fit_on], y[fit_on], 1 / evidence.probabilities[fit_on], n_grades)
        return np.clip(rows @ beta + mean, 0.0, high)

    everyone = predict(design, np.arange(len(y)))
    held_out = np.empty(len(y))
    for fold in folds:
        rest = np.setdiff1d(np.arange(len(y)), fold)
        held_out[fold] = predict(sampled_design[fold], rest)
    return everyone, held_out


def _judge_target(evidence: Evidence, target: Target) -> np.ndarray:
    """The judge's own value of a target: relevant from grade τ; its grade as the gain."""
    if target.kind == "binary":
        return (evidence.judge >= evidence.relevant_grade).astype(float)
    return target.scale * np.maximum(evidence.judge, 0.0)


JACKKNIFE_GROUPS = 50
REPLICATES = 2000  # the multiplier bootstrap's


def _multipliers(n_sampled: int, replicates: int, seed: int, jackknife: bool) -> np.ndarray:
    """(sampled pairs x replicates): how each replicate moves each sampled pair's term. The bootstrap's
    are standard normal; the delete-a-group jackknife's (Kott 2001) drop one of
    :data:`JACKKNIFE_GROUPS` random groups of the sample (−1) and weigh the others up (1/(G − 1))."""
    rng = np.random.default_rng(seed)
    if not jackknife:
        return rng.standard_normal((n_sampled, replicates))
    groups = min(JACKKNIFE_GROUPS, n_sampled)
    member = (rng.permutation(n_sampled) % groups)[:, None] == np.arange(groups)[None, :]
    return np.where(member, -1.0, 1.0 / max(groups - 1, 1))


def _covariance(replicated: np.ndarray, jackknife: bool, estimate: np.ndarray) -> np.ndarray:
    """The runs' sampling covariance from their replicates (runs x replicates); the jackknife's about the
    estimate itself (its conservative form, and exactly 0 where nothing varies)."""
    if not jackknife:
        return np.atleast_2d(np.cov(replicated))
    groups = replicated.shape[1]
    centred = replicated - estimate[:, None]
    return (groups - 1) / groups * centred @ centred.T


def _replicate_totals(matrix: sparse.csr_matrix, evidence: Evidence, estimator: str, targets: Sequence[Target],
                      replicates: int, seed: int, jackknife: bool = False
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(point totals (rows,), replicate totals (rows, replicates), the calibrated judge's totals (rows,))
    of one measure's rows, grouped by target (rows summing the same target share one calibration)."""
    n_rows = matrix.shape[0]
    point, predicted = np.zeros(n_rows), np.zeros(n_rows)
    z = _multipliers(len(evidence.sampled), replicates, seed, jackknife)
    boot = np.zeros((n_rows, z.shape[1]))
    scale = np.sqrt(np.clip(1 - evidence.probabilities, 0, None)) / evidence.probabilities
    for target in dict.fromkeys(targets):
        rows = np.array([i for i, t in enumerate(targets) if t == target])
        part = matrix[rows]
        y = target_values(evidence.labels, target)
        if estimator == "humans":
            fitted, held_out = np.zeros(evidence.layout.n_pairs), np.zeros(len(y))
        else:
            fitted, held_out = calibrated_predictions(evidence, target, seed)
        predicted[rows] = part @ fitted
        values = fitted.copy()
        values[evidence.sampled] = held_out + (y - held_out) / evidence.probabilities
        point[rows] = part @ values
        error = y - held_out
        if estimator == "eb":  # its weights need every run's standard error, also one from three pairs
            error = _steadied(error, evidence.judge[evidence.sampled])
        residual = error * scale  # each sampled pair's term, as its sd under Poisson sampling
        sampled_part = part[:, evidence.sampled]
        boot[rows] = point[rows][:, None] + sampled_part @ (residual[:, None] * z)
    return point, boot, predicted


def _steadied(error: np.ndarray, strata: np.ndarray) -> np.ndarray:
    """Each sampled pair's error as its term of the variance counts it: the root of the mean of its own
    square and its stratum's (the judge grade's) pooled mean square, the latter shrunk toward the
    overall one by two pseudo-pairs. A run with three sampled pairs that the calibrated judge happened
    to get right would otherwise look certain."""
    squares = error ** 2
    overall = float(squares.mean()) if len(squares) else 0.0
    pooled = np.empty(len(error))
    for stratum in np.unique(strata):
        at = strata == stratum
        pooled[at] = (squares[at].sum() + 2 * overall) / (at.sum() + 2)
    return np.sqrt((squares + pooled) / 2)


def _effective_df(matrix: sparse.csr_matrix, evidence: Evidence) -> np.ndarray:
    """Per row, the Kish effective number of sampled pairs behind it minus 1 (at least 1): Student's
    t quantile's degrees of freedom."""
    # scipy-stubs type a sparse matrix times a dense row as an ndarray; scipy gives a sparse (coo) matrix
    scaled = abs(matrix[:, evidence.sampled]).multiply(1 / evidence.probabilities[None, :])
    weights = np.asarray(scaled.todense())  # type: ignore[attr-defined]
    uncertain = evidence.probabilities < 1
    w = weights[:, uncertain]
    total, squares = w.sum(axis=1), (w ** 2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        kish = np.where(squares > 0, total ** 2 / squares, math.inf)
    return np.maximum(kish - 1, 1.0)


def estimate(evidence: Evidence, measures: Sequence[AssessMeasure], *, estimator: str = DEFAULT_ESTIMATOR,
             level: float = 0.9, replicates: int = REPLICATES, seed: int = 0) -> Estimates:
    """Every run's ``measures`` by ``estimator`` (see the module), intervals at ``level``."""
    if estimator not in ESTIMATORS:
        raise ValueError(f"unknown estimator {estimator!r}; one of {', '.join(ESTIMATORS)}")
    if not 0 < level < 1:
        raise ValueError(f"the level must be between 0 and 1, got {level}")
    layout = evidence.layout
    labels_seen = evidence.labels[~np.isnan(evidence.labels)]
    levels = grade_levels(labels_seen)
    rows, diffs = [], []
    for measure in measures:
        if estimator in ("ppi", "ppi++"):
            rows.extend(_ppi(evidence, measure, estimator, level))
            continue
        if estimator == "judge":  # on the judge's own scale (nDCG's ideal from its grades, not the people's)
            rows.extend((run, measure.name, float(value), math.nan, math.nan, math.nan)
                        for run, value in zip(layout.runs, judge_values(measure, evidence)))
            continue
        totals = measure_totals(measure, layout, levels)
        # nDCG's ratio is smooth near the estimate but not far from it, where the bootstrap's replicates land
        # (an ideal DCG near 0): it gets the jackknife's small steps instead
        jackknife = measure.kind == "nDCG"
        point, boot, predicted = _replicate_totals(totals.matrix, evidence, estimator, totals.targets,
                                                   replicates, seed, jackknife)
        known = known_counts(layout, levels, evidence.sampled, np.nanmean(evidence.labels, axis=1))
        values = measure_values(measure, layout, levels, point[:, None], known)[:, 0]
        replicated = measure_values(measure, layout, levels, boot, known)
        covariance = _covariance(replicated, jackknife, values)
        sd = np.sqrt(np.diag(covariance))
        df = _run_df(totals.matrix, evidence, measure, layout)
        q = stats.t.ppf((1 + level) / 2, df)
        direct = values
        if estimator == "eb":
            judged = measure_values(measure, layout, levels, predicted[:, None], known)[:, 0]
            values, low, high = shrink(direct, judged, covariance, level)
        else:
            low, high = values - q * sd, values + q * sd
        low, high = np.clip(low, 0, 1), np.clip(high, 0, 1)
        for i, run in enumerate(layout.runs):
            rows.append((run, measure.name, float(values[i]), float(min(low[i], values[i])),
                         float(max(high[i], values[i])), float(sd[i])))
        diffs.append(_differences(measure, layout, evidence, direct, covariance, df, level))
    table = pd.DataFrame(rows, columns=["run", "measure", "estimate", "low", "high", "se"])
    differences = pd.concat(diffs, ignore_index=True) if diffs else pd.DataFrame(columns=DIFFERENCE_COLUMNS)
    return Estimates(table, differences, estimator, level)


def judge_values(measure: AssessMeasure, evidence: Evidence) -> np.ndarray:
    """Every run's measure on the judge's labels alone (relevant from grade τ; the grade as gain)."""
    levels = grade_levels(np.maximum(evidence.judge, 0))
    totals = measure_totals(measure, evidence.layout, levels)
    point = np.zeros(totals.matrix.shape[0])
    for target in dict.fromkeys(totals.targets):
        rows = np.array([i for i, t in enumerate(totals.targets) if t == target])
        point[rows] = totals.matrix[rows] @ _judge_target(evidence, target)
    return measure_values(measure, evidence.layout, levels, point[:, None])[:, 0]


def _ppi(evidence: Evidence, measure: AssessMeasure, estimator: str, level: float) -> list[tuple]:
    """ppi-python's PPI (λ = 1) or PPI++ (λ tuned) of P@k, run by run over the run's ranked slots."""
    if measure.kind != "P":
        raise ValueError(f"the {estimator} estimator (ppi-python's mean) fits means of pair labels (P@k), "
                         f"not {measure.name}: use the calibrated estimator")
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    layout = evidence.layout
    target = Target("binary", measure.rel)
    human = target_values(evidence.labels, target)
    judged = _judge_target(evidence, target)
    position = {d: i for i, d in enumerate(evidence.sampled)}
    lam = None if estimator == "ppi++" else 1.0
    rows = []
    for r, run in enumerate(layout.runs):
        slots = np.concatenate([ranked[:measure.cutoff] for ranked in layout.rankings[r]] or [np.zeros(0, int)])
        share = len(slots) / (measure.cutoff * len(layout.queries))
        labelled = np.array([position[d] for d in slots if d in position], dtype=int)
        if len(slots) == 0:  # a run that ranks nothing scores 0 for sure
            rows.append((run, measure.name, 0.0, 0.0, 0.0, 0.0))
            continue
        if len(labelled) < 2:  # PPI needs two labels of the run: the judge's value, and the measure's whole range
            rows.append((run, measure.name, float(judged[slots].mean()) * share, 0.0, share, math.nan))
            continue
        y, yhat = human[labelled], judged[evidence.sampled[labelled]]
        weights = 1 / evidence.probabilities[labelled]
        value = float(np.ravel(ppi_mean_pointestimate(y, yhat, judged[slots], lam=lam, w=weights))[0]) * share
        low, high = (float(np.ravel(v)[0]) * share
                     for v in ppi_mean_ci(y, yhat, judged[slots], alpha=1 - level, lam=lam, w=weights))
        rows.append((run, measure.name, value, max(0.0, min(low, value)), min(1.0, max(high, value)),
                     (high - low) / (2 * stats.norm.ppf((1 + level) / 2))))
    return rows


def _run_df(matrix: sparse.csr_matrix, evidence: Evidence, measure: AssessMeasure, layout: Layout) -> np.ndarray:
    """Degrees of freedom per run: its own rows' effective sample (nDCG: its DCG rows together)."""
    if measure.kind != "nDCG":
        return _effective_df(matrix, evidence)
    n_runs, n_queries = len(layout.runs), len(layout.queries)
    dcg = matrix[:n_runs * n_queries]
    collapse = sparse.kron(sparse.eye(n_runs), np.ones((1, n_queries))).tocsr()
    return _effective_df((collapse @ abs(dcg)).tocsr(), evidence)


DIFFERENCE_COLUMNS = ["measure", "a", "b", "judge_difference", "difference", "low", "high", "p_value",
                      "p_adjusted", "confirmed"]


def _differences(measure: AssessMeasure, layout: Layout, evidence: Evidence, values: np.ndarray,
                 covariance: np.ndarray, df: np.ndarray, level: float) -> pd.DataFrame:
    """Every pair of runs, the judge's better first: the estimated difference with its interval and a
    two-sided test, Holm-adjusted over the pairs of the measure."""
    judged = judge_values(measure, evidence)
    first, second = np.triu_indices(len(layout.runs), k=1)
    swap = judged[first] < judged[second]
    a = np.where(swap, second, first)
    b = np.where(swap, first, second)
    diff = values[a] - values[b]
    variances = np.diag(covariance)
    sd = np.sqrt(np.maximum(variances[a] + variances[b] - 2 * covariance[a, b], 0.0))
    dof = np.minimum(df[a], df[b])
    q = stats.t.ppf((1 + level) / 2, dof)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(sd > 0, diff / sd, np.where(diff == 0, 0.0, np.sign(diff) * math.inf))
    p = 2 * stats.t.sf(np.abs(t), dof)
    from exampp.analysis.statistics import adjust

    adjusted = adjust(p, "holm")
    return pd.DataFrame({
        "measure": measure.name, "a": [layout.runs[i] for i in a], "b": [layout.runs[i] for i in b],
        "judge_difference": judged[a] - judged[b], "difference": diff, "low": diff - q * sd, "high": diff + q * sd,
        "p_value": p, "p_adjusted": adjusted,
        "confirmed": (adjusted < 1 - level) & (diff > 0) & (judged[a] > judged[b]),
    })
