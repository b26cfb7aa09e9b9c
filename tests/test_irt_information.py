"""Item/test information of 1PL/2PL/3PL items against hand-worked values and independent routes."""
import math

import numpy as np
import pytest

from exampp.analysis.irt.information import (
    information_by_group,
    information_summary,
    item_information,
    test_information as total_information,  # not collected as a test
    theta_max_information,
)

THETA = np.linspace(-3, 3, 13)
A = np.array([0.5, 1.0, 1.7, 2.5])
B = np.array([-1.0, 0.0, 0.5, 2.0])
G = np.array([0.0, 0.2, 0.25, 0.4])


def paper_formula(theta, a, b, g):
    """Guinet et al.'s expression, written literally."""
    p = g + (1 - g) / (1 + np.exp(-a * (theta[:, None] - b)))
    return a**2 * (p - g) ** 2 / (1 - g) ** 2 * (1 - p) / p


def test_reduces_to_a2_p_1_minus_p_for_2pl():
    p = 1 / (1 + np.exp(-A * (THETA[:, None] - B)))
    np.testing.assert_allclose(item_information(THETA, A, B), A**2 * p * (1 - p), rtol=1e-12)
    np.testing.assert_allclose(item_information(THETA, A, B, 0.0), A**2 * p * (1 - p), rtol=1e-12)


def test_matches_the_papers_3pl_formula():
    # rtol 1e-9: the literal formula loses digits to the cancellation in p − g where p ≈ g
    np.testing.assert_allclose(item_information(THETA, A, B, G), paper_formula(THETA, A, B, G), rtol=1e-9)
    # scalar g broadcasts to every item
    np.testing.assert_allclose(item_information(THETA, A, B, 0.25), paper_formula(THETA, A, B, np.full(4, 0.25)),
                               rtol=1e-9)


def test_hand_worked_values():
    # At θ = b with g = 0: p = 1/2, I = a²/4.
    assert item_information(1.0, [2.0], [1.0])[0, 0] == pytest.approx(1.0)
    # At θ = b with g = 0.2: p = 0.6, I = 1 · 0.4² / 0.8² · 0.4 / 0.6 = 1/6.
    assert item_information(0.0, [1.0], [0.0], 0.2)[0, 0] == pytest.approx(1 / 6)


def test_extreme_abilities_stay_finite_and_tend_to_zero():
    theta = np.array([-1e4, -800.0, 800.0, 1e4])
    for g in (0.0, 0.3):
        info = item_information(theta, [1.5], [0.0], g)
        assert np.all(np.isfinite(info)) and np.all(info >= 0)
        assert info.max() < 1e-300


def test_negative_discrimination_mirrors_positive():
    np.testing.assert_allclose(item_information(THETA, [-1.3], [0.4]), item_information(-THETA + 0.8, [1.3], [0.4]),
                               rtol=1e-12)


def test_shape_and_test_information_is_the_item_sum():
    info = item_information(THETA, A, B, G)
    assert info.shape == (13, 4)
    np.testing.assert_allclose(total_information(THETA, A, B, G), info.sum(axis=1), rtol=1e-15)


@pytest.mark.parametrize("a, b, g", [([1.0, np.nan], [0, 0], 0.0), ([1.0], [np.inf], 0.0), ([1.0], [0.0], 1.0),
                                     ([1.0], [0.0], -0.1), ([1.0, 2.0], [0.0], 0.0)])
def test_invalid_parameters_are_refused(a, b, g):
    with pytest.raises(ValueError):
        item_information(THETA, a, b, g)


@pytest.mark.slow
def test_theta_max_information_matches_a_numerical_argmax():
    grid = np.linspace(-6, 6, 1_200_001)  # step 1e-5
    a = np.array([0.3, 0.8, 1.0, 1.5, 2.5, -1.2])
    b = np.array([-1.0, 0.0, 0.3, 1.0, -0.5, 0.2])
    for g in (0.0, 0.1, 0.25, 0.4):
        numeric = grid[np.argmax(item_information(grid, a, b, g), axis=0)]
        np.testing.assert_allclose(theta_max_information(a, b, g), numeric, atol=2e-5)
    np.testing.assert_array_equal(theta_max_information(a, b), b)  # 2PL: at the difficulty


def test_theta_max_information_is_nan_without_discrimination():
    assert np.isnan(theta_max_information([0.0, 1.0], [0.5, 0.5], 0.2)).tolist() == [True, False]


def test_information_summary_against_the_closed_form_integral():
    # 2PL: ∫ a² σ(1−σ) dθ = a [σ(a(θ−b))] from lo to hi.
    a, b, lo, hi = np.array([1.2, 0.7]), np.array([0.3, -0.5]), -2.0, 1.5
    sig = lambda x: 1 / (1 + math.exp(-x))  # noqa: E731
    exact = sum(ai * (sig(ai * (hi - bi)) - sig(ai * (lo - bi))) for ai, bi in zip(a, b))
    fine = np.linspace(-4, 4, 8001)
    assert information_summary(fine, a, b, 0.0, lo, hi) == pytest.approx(exact, rel=1e-6)
    # the bounds are nodes even when the grid misses them: a grid with no point inside is one trapezoid
    coarse = np.array([-10.0, 10.0])
    one_trapezoid = (hi - lo) / 2 * (total_information([lo], a, b)[0] + total_information([hi], a, b)[0])
    assert information_summary(coarse, a, b, 0.0, lo, hi) == pytest.approx(one_trapezoid, rel=1e-12)
    with pytest.raises(ValueError):
        information_summary(fine, a, b, 0.0, 1.0, 1.0)


def test_information_by_group_sums_items_and_counts_multi_label_items_in_each():
    groups = ["what", {"Applying", "Creating"}, ("Creating",), frozenset()]
    table = information_by_group(THETA, A, B, G, groups)
    assert list(table.columns) == ["theta", "group", "information", "n_items"]
    assert table["group"].unique().tolist() == ["Applying", "Creating", "what"]  # sorted; item 3 in none
    info = item_information(THETA, A, B, G)
    expected = {"Applying": (info[:, 1], 1), "Creating": (info[:, 1] + info[:, 2], 2), "what": (info[:, 0], 1)}
    for group, (values, n) in expected.items():
        rows = table[table["group"] == group]
        np.testing.assert_array_equal(rows["theta"], THETA)
        np.testing.assert_allclose(rows["information"], values, rtol=1e-14)
        assert set(rows["n_items"]) == {n}
    with pytest.raises(ValueError):
        information_by_group(THETA, A, B, G, groups[:3])


def test_information_by_group_counts_a_repeated_label_once():
    table = information_by_group(THETA, A[:1], B[:1], 0.0, [["x", "x"]])
    np.testing.assert_allclose(table["information"], item_information(THETA, A[:1], B[:1])[:, 0])
    assert set(table["n_items"]) == {1}
