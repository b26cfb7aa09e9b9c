"""Empirical Bayes over runs: each run's design-unbiased estimate shrunk toward what the calibrated
judge predicts for it, as small-area estimation does for areas with few sampled units (Fay & Herriot
1979), with the robust empirical Bayes intervals of Armstrong, Kolesár & Plagborg-Møller
(Econometrica 2022).

For run r: the direct estimate D_r (unbiased, standard error σ_r), the judge's prediction M_r (the
calibrated judge's labels alone) and their difference C_r = D_r − M_r, the judge's error on the run
as the sample measures it. The model: C_r = β + u_r + e_r, u_r the run's true deviation from the
common error β (spread μ₂ over runs), e_r the sampling error. The estimate is

    θ̂_r = M_r + β̂ + w_r (C_r − β̂),  w_r = μ₂ / (μ₂ + σ_r²),

near the judge's prediction where the sample says little about the run, near the direct estimate
where it says much. The interval θ̂_r ± χ_r·w_r·σ_r uses the critical value that bounds the
*average* non-coverage over runs by α whatever the distribution of the u_r, given only their second
moment (AKP's robust EBCI with the second-moment constraint; χ grows with the shrinkage's bias
σ_r²/μ₂). Coverage holds on average over runs, not for each run: a run whose labels the judge gets
unusually wrong is pulled toward the others, so a check of one run uses the direct estimator.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import optimize, stats

_GRID = np.concatenate([np.linspace(0.0, 4.0, 201)[1:], np.geomspace(4.0, 1e4, 200)[1:]])


def _non_coverage(u: np.ndarray, chi: float) -> np.ndarray:
    """P(|Z + t| > χ) with t² = u: the non-coverage of a normal interval of half-width χ with bias t."""
    t = np.sqrt(u)
    return stats.norm.sf(chi - t) + stats.norm.cdf(-chi - t)


def _worst_non_coverage(m2: float, chi: float) -> float:
    """The largest average non-coverage over distributions of the normalised bias t with E t² = m2:
    the least concave majorant of u -> P(|Z + √u| > χ) at m2 (it is convex, then concave, in u)."""
    at_zero = float(_non_coverage(np.array([0.0]), chi)[0])
    beyond = _GRID[_GRID >= m2]
    chords = at_zero + (_non_coverage(beyond, chi) - at_zero) * m2 / beyond if len(beyond) else np.array([])
    return max(float(_non_coverage(np.array([m2]), chi)[0]), float(chords.max(initial=0.0)))


@lru_cache(maxsize=4096)
def robust_critical_value(m2: float, alpha: float) -> float:
    """χ with worst-case average non-coverage α when E t² = m2 (AKP's cva_α(m2)); z_{1−α/2} at m2 = 0."""
    if m2 <= 0:
        return float(stats.norm.ppf(1 - alpha / 2))
    high = math.sqrt(m2) + stats.norm.ppf(1 - alpha / 2) + 1.0
    while _worst_non_coverage(m2, high) > alpha:
        high *= 2
    return float(optimize.brentq(lambda chi: _worst_non_coverage(m2, chi) - alpha, 0.0, high, xtol=1e-6))


def spread(corrections: np.ndarray, predicted: np.ndarray, covariance: np.ndarray) -> tuple[np.ndarray, float]:
    """(the hat matrix of the fit, μ̂₂): the judge's error regressed on its prediction (least squares on
    1 and M_r: a judge that stretches or compresses the leaderboard errs in proportion to M_r), and the
    moment estimate of the runs' spread around that line. The runs' sampling errors are correlated
    (runs rank the same pairs), so the expected residual sum of squares is μ₂(R − p) + tr(H Σ), with
    H the residual projection and Σ the errors' covariance: μ̂₂ = (RSS − tr(H Σ)) / (R − p), plus one
    standard error of it, kept above a tenth of the mean sampling variance so that intervals stay
    finite when runs look alike."""
    r = len(corrections)
    design = np.column_stack([np.ones(r), predicted - predicted.mean()])[:, :2 if r > 2 else 1]
    residual_maker = np.eye(r) - design @ np.linalg.pinv(design)
    residuals = residual_maker @ corrections
    free = r - design.shape[1]
    variances = np.diag(covariance)
    raw = float((residuals @ residuals - np.trace(residual_maker @ covariance)) / free) if free > 0 else 0.0
    # the moment estimate is itself noisy (sd about √(2/(R − p))·(μ₂ + σ²)); a draw that underestimates it
    # shrinks too much and under-covers, so μ₂ is taken one standard error up
    raw += math.sqrt(2 / max(free, 1)) * (max(raw, 0.0) + float(variances.mean()))
    return np.eye(r) - residual_maker, max(raw, 0.1 * float(variances.mean()), 1e-12)


def shrink(direct: np.ndarray, predicted: np.ndarray, covariance: np.ndarray, level: float
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, low, high) per run (see the module); ``covariance``: the direct estimates' sampling
    covariance (runs x runs)."""
    variances = np.diag(covariance)
    corrections = direct - predicted
    hat, mu2 = spread(corrections, predicted, covariance)
    common = hat @ corrections
    w = mu2 / (mu2 + variances)
    estimate = predicted + common + w * (corrections - common)
    # the estimate's error: (1 − w)(fitted line − true line) + w·e (sampling) − (1 − w)·u (the shrinkage's bias)
    through = np.diag(1 - w) @ hat + np.diag(w)
    sampling = np.maximum(np.einsum("ij,jk,ik->i", through, covariance, through), 1e-24)
    m2 = (1 - w) ** 2 * mu2 / sampling
    half = np.array([robust_critical_value(round(float(v), 6), round(1 - level, 12)) for v in m2]) * np.sqrt(sampling)
    return estimate, estimate - half, estimate + half
