"""Thresholds that turn a continuous score (e.g. a question–passage cosine) into grades 0..n,
fitted against reference grades (e.g. an LLM's 0–5 self-ratings of the same pairs).

A score's grade is the number of thresholds it reaches (``score >= t``). Objective, level by
level: threshold ``t_g`` decides "grade >= g", so it is the cut that maximises Cohen's κ
between ``score >= t_g`` and ``reference >= g`` over the calibration pairs. Why per level and
why κ: the measures built on grades use exactly these binary decisions (EXAM-Cover and
EXAM-Qrels at τ count grade >= τ); κ, unlike accuracy, is not won by always answering the
majority label, and, unlike balanced accuracy, penalises saying "yes" far more or less often
than the reference does. Levels are fitted from 1 upwards, each search restricted to cuts at or
above the previous threshold, so the thresholds ascend. A cut separating two adjacent distinct
scores is placed halfway between them.

Everything here is pure (numpy in, numbers out).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from exampp.analysis.label_agreement import Confusion, cohen_kappa


def check_thresholds(thresholds: Sequence[float]) -> tuple[float, ...]:
    """The thresholds as floats; ValueError unless there is at least one, all finite, ascending."""
    values = tuple(float(t) for t in thresholds)
    if not values:
        raise ValueError("need at least one threshold")
    if not all(math.isfinite(t) for t in values):
        raise ValueError(f"thresholds must be finite numbers: {values}")
    if any(b < a for a, b in zip(values, values[1:])):
        raise ValueError(f"thresholds must be in ascending order: {values}")
    return values


def apply_thresholds(scores: Sequence[float] | np.ndarray, thresholds: Sequence[float]) -> np.ndarray:
    """Grade of each score: how many of the (ascending) thresholds it reaches, ``score >= t``."""
    cuts = np.asarray(check_thresholds(thresholds))
    return np.searchsorted(cuts, np.asarray(scores, dtype=float), side="right")


def binary_kappa(predicted: Sequence[bool] | np.ndarray, reference: Sequence[bool] | np.ndarray) -> float:
    """Cohen's κ of two yes/no labelings of the same items (NaN when undefined)."""
    a, b = np.asarray(predicted, dtype=bool), np.asarray(reference, dtype=bool)
    return cohen_kappa(Confusion(int(np.sum(a & b)), int(np.sum(a & ~b)), int(np.sum(~a & b)), int(np.sum(~a & ~b))))


def weighted_kappa(first: Sequence[int] | np.ndarray, second: Sequence[int] | np.ndarray, levels: int) -> float:
    """Quadratic-weighted Cohen's κ of two gradings on the scale 0..``levels``.

    κ_w = 1 − Σ w·observed / Σ w·expected with w_ij = (i − j)² / levels²; NaN when both
    gradings use a single grade (no expected disagreement).
    """
    a, b = np.asarray(first, dtype=int), np.asarray(second, dtype=int)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"need two grade vectors of the same length, got {a.shape} and {b.shape}")
    if a.size and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) > levels):
        raise ValueError(f"grades must lie in 0..{levels}")
    size = levels + 1
    observed = np.bincount(a * size + b, minlength=size * size).reshape(size, size) / max(a.size, 1)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    grid = np.arange(size)
    weights = (grid[:, None] - grid[None, :]) ** 2 / levels**2
    disagreement = float(np.sum(weights * expected))
    return math.nan if disagreement == 0 else 1 - float(np.sum(weights * observed)) / disagreement


def best_cut(scores: np.ndarray, positive: np.ndarray, minimum: float = -math.inf) -> tuple[float, float]:
    """``(threshold, κ)``: the threshold ``t >= minimum`` maximising Cohen's κ of ``score >= t``
    against ``positive``; among equal κ the highest cut (fewest "yes") wins.

    Every distinct set ``{score >= s}`` is tried at once from cumulative counts. ValueError
    when ``positive`` is all true or all false (κ is undefined at every cut).
    """
    scores = np.asarray(scores, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    n, relevant = scores.size, int(positive.sum())
    if not 0 < relevant < n:
        raise ValueError(f"need both positive and negative reference labels, got {relevant} of {n} positive")
    if np.isnan(scores).any():
        raise ValueError("scores contain NaN")
    order = np.argsort(-scores, kind="stable")
    ranked, hits = scores[order], positive[order]
    # Last index of each run of equal scores: cutting there takes all of them.
    ends = np.flatnonzero(np.r_[ranked[1:] != ranked[:-1], True])
    values = ranked[ends]
    said_yes = (ends + 1).astype(float)
    agree_yes = np.cumsum(hits)[ends].astype(float)
    observed = (n - said_yes - relevant + 2 * agree_yes) / n
    p, r = said_yes / n, relevant / n
    expected = p * r + (1 - p) * (1 - r)  # < 1 because 0 < r < 1
    kappas = (observed - expected) / (1 - expected)
    # Halfway to the next lower distinct score; the lowest score cuts at itself (everyone "yes").
    cuts = np.r_[(values[:-1] + values[1:]) / 2, values[-1:]]
    allowed = values >= minimum
    # "Nobody says yes" (κ = 0) is the fallback when no allowed cut agrees better than chance.
    best_cut_value, best_kappa = max(float(minimum), float(values[0]) + 1.0), 0.0
    if allowed.any():
        k = int(np.argmax(np.where(allowed, kappas, -np.inf)))
        if kappas[k] > best_kappa:
            best_cut_value, best_kappa = max(float(cuts[k]), float(minimum)), float(kappas[k])
    return best_cut_value, best_kappa


@dataclass(frozen=True)
class Calibration:
    thresholds: tuple[float, ...]  # t_1 <= ... <= t_levels
    kappas: tuple[float, ...]  # κ of (score >= t_g) vs (reference >= g) on the calibration pairs
    pairs: int


def fit_thresholds(
    scores: Sequence[float] | np.ndarray, reference: Sequence[int] | np.ndarray, levels: int = 5
) -> Calibration:
    """Fit ``levels`` ascending thresholds so that ``apply_thresholds(scores)`` agrees with the
    reference grades (0..levels) level by level (see the module docstring)."""
    scores = np.asarray(scores, dtype=float)
    reference = np.asarray(reference)
    if scores.shape != reference.shape or scores.ndim != 1:
        raise ValueError("need scores and reference grades of the same length, "
                         f"got {scores.shape} and {reference.shape}")
    thresholds: list[float] = []
    kappas: list[float] = []
    floor = -math.inf
    for level in range(1, levels + 1):
        cut, kappa = best_cut(scores, reference >= level, floor)
        thresholds.append(cut)
        kappas.append(kappa)
        floor = cut
    return Calibration(tuple(thresholds), tuple(kappas), int(scores.size))
