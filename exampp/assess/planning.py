"""How many labels a target interval width needs, from a pilot sample.

The direct (calibrated) estimator's variance for run r under Poisson sampling is anticipated as
Σ_d a_rd² (1 − π_d)/π_d · s²_h(d): a_rd the pair's weight in the run's measure, π_d its inclusion
probability at the budget, s²_h the pilot's mean squared (cross-fitted) error of the calibrated
judge among pairs of judge grade h. The mean over runs of 2·z·√variance is the anticipated mean
width; the budget is found by bisection (the width falls as the budget grows)."""
from __future__ import annotations

import numpy as np

from exampp.assess.design import inclusion_probabilities


def grade_variances(judge: np.ndarray, sampled_grades: np.ndarray, squared_errors: np.ndarray) -> np.ndarray:
    """s²_h for every pooled pair: the pilot's mean squared error at the pair's judge grade (the overall
    mean for a grade the pilot did not sample)."""
    out = np.full(len(judge), float(squared_errors.mean()))
    for grade in np.unique(sampled_grades):
        out[judge == grade] = float(squared_errors[sampled_grades == grade].mean())
    return out


def mean_width(weights: np.ndarray, sizes: np.ndarray, variances: np.ndarray, budget: int, z: float) -> float:
    """The anticipated mean interval width over runs at ``budget`` (``weights``: runs x pairs, a_rd)."""
    pi = inclusion_probabilities(sizes, budget)
    per_run = (weights ** 2) @ ((1 - pi) / pi * variances)
    return float(np.mean(2 * z * np.sqrt(per_run)))


def labels_needed(weights: np.ndarray, sizes: np.ndarray, variances: np.ndarray, target_width: float,
                  z: float) -> int:
    """The smallest budget whose anticipated mean width is at most ``target_width`` (at most the whole
    pool, whose labels leave nothing to estimate: width 0)."""
    low, high = 1, len(sizes)
    while low < high:
        middle = (low + high) // 2
        if mean_width(weights, sizes, variances, middle, z) > target_width:
            low = middle + 1
        else:
            high = middle
    return low
