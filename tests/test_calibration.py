"""Threshold fitting: known thresholds recovered, κ search checked against brute force."""
from __future__ import annotations

import math

import numpy as np
import pytest

from exampp.analysis.label_agreement import Confusion, cohen_kappa
from exampp.grading.calibration import (
    apply_thresholds,
    best_cut,
    binary_kappa,
    check_thresholds,
    fit_thresholds,
    weighted_kappa,
)

TRUE_CUTS = (0.2, 0.35, 0.5, 0.7, 0.9)


def test_apply_thresholds_counts_thresholds_reached():
    grades = apply_thresholds([0.0, 0.2, 0.2499, 0.35, 0.95, 1.0], TRUE_CUTS)
    assert grades.tolist() == [0, 1, 1, 2, 5, 5]
    # equal thresholds skip a grade
    assert apply_thresholds([0.1, 0.5], (0.3, 0.3)).tolist() == [0, 2]


@pytest.mark.parametrize("bad", [(), (0.3, 0.2), (0.1, math.nan), (math.inf,)])
def test_check_thresholds_rejects(bad):
    with pytest.raises(ValueError):
        check_thresholds(bad)


def test_binary_kappa_by_hand():
    # tp=2 fp=1 fn=0 tn=1: p_o = 3/4, p_e = 3/4*1/2 + 1/4*1/2 = 1/2, κ = 1/2
    assert binary_kappa([1, 1, 1, 0], [1, 1, 0, 0]) == pytest.approx(0.5)


def test_weighted_kappa_by_hand_and_sklearn():
    # Worked out in calibration's formula: observed disagreement 1/12, expected 5/12.
    assert weighted_kappa([0, 1, 2], [0, 2, 2], levels=2) == pytest.approx(0.8)
    assert weighted_kappa([3, 1, 4], [3, 1, 4], levels=5) == pytest.approx(1.0)
    assert math.isnan(weighted_kappa([2, 2], [2, 2], levels=5))
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 6, 200), rng.integers(0, 6, 200)
    b[:120] = a[:120]
    expected = metrics.cohen_kappa_score(a, b, weights="quadratic", labels=list(range(6)))
    assert weighted_kappa(a, b, levels=5) == pytest.approx(expected)


def _brute_force(scores, positive, minimum=-math.inf):
    """Best κ over every candidate set {score >= s} with s >= minimum, by agreement.cohen_kappa."""
    best = 0.0  # nobody says yes
    for s in sorted(set(scores.tolist()), reverse=True):
        if s < minimum:
            continue
        said = scores >= s
        table = Confusion(int(np.sum(said & positive)), int(np.sum(said & ~positive)),
                          int(np.sum(~said & positive)), int(np.sum(~said & ~positive)))
        best = max(best, cohen_kappa(table))
    return best


@pytest.mark.parametrize("seed", range(5))
def test_best_cut_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    latent = rng.random(300)
    scores = np.round(latent + rng.normal(0, 0.2, 300), 2)  # rounding makes ties
    positive = latent > 0.6
    cut, kappa = best_cut(scores, positive)
    assert kappa == pytest.approx(_brute_force(scores, positive))
    assert binary_kappa(scores >= cut, positive) == pytest.approx(kappa)
    floor = float(np.quantile(scores, 0.9))
    cut, kappa = best_cut(scores, positive, minimum=floor)
    assert cut >= floor
    assert kappa == pytest.approx(_brute_force(scores, positive, floor))
    assert binary_kappa(scores >= cut, positive) == pytest.approx(kappa)


def test_best_cut_halfway_between_scores():
    scores = np.array([0.1, 0.2, 0.4, 0.8])
    assert best_cut(scores, np.array([0, 0, 1, 1], dtype=bool)) == (pytest.approx(0.3), pytest.approx(1.0))


def test_best_cut_needs_both_labels():
    with pytest.raises(ValueError, match="both positive and negative"):
        best_cut(np.array([0.1, 0.2]), np.array([True, True]))


def test_fit_recovers_noise_free_thresholds():
    rng = np.random.default_rng(0)
    scores = rng.random(5000)
    reference = apply_thresholds(scores, TRUE_CUTS)
    fitted = fit_thresholds(scores, reference)
    assert fitted.kappas == pytest.approx((1.0,) * 5)
    assert (apply_thresholds(scores, fitted.thresholds) == reference).all()
    for fitted_cut, true_cut in zip(fitted.thresholds, TRUE_CUTS):
        below, above = scores[scores < true_cut].max(), scores[scores >= true_cut].min()
        assert fitted_cut == pytest.approx((below + above) / 2)


def test_fit_with_noise_lands_near_true_thresholds():
    rng = np.random.default_rng(1)
    latent = rng.random(20000)
    scores = latent + rng.normal(0, 0.02, latent.size)
    fitted = fit_thresholds(scores, apply_thresholds(latent, TRUE_CUTS))
    assert fitted.thresholds == pytest.approx(TRUE_CUTS, abs=0.01)
    assert min(fitted.kappas) > 0.9


def test_fit_keeps_thresholds_ascending_where_levels_disagree():
    # The grade-2 passages score low: fitted alone, level 2 would cut at 0.15 (κ 0.054), below
    # t_1 = 0.55 (κ 0.6, worked out by hand). Searched at or above t_1, no cut beats chance,
    # so nobody reaches grade 2: t_2 lies above the highest score.
    scores = np.arange(1, 11) / 10
    reference = np.array([0, 2, 2, 0, 0, 1, 1, 1, 1, 1])
    assert best_cut(scores, reference >= 2) == (pytest.approx(0.15), pytest.approx(0.04 / 0.74))
    fitted = fit_thresholds(scores, reference, levels=2)
    assert fitted.thresholds[0] == pytest.approx(0.55)
    assert fitted.kappas == pytest.approx((0.6, 0.0))
    assert fitted.thresholds[1] > scores.max()
    assert apply_thresholds(scores, fitted.thresholds).max() == 1


def test_fit_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="same length"):
        fit_thresholds([0.1, 0.2], [1])
