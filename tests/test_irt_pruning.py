"""Iterative exam pruning: which items go, the information recorded per step, the pruned bank."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from exampp.analysis.irt.models import IRTModel
from exampp.analysis.irt.pruning import (
    information_over_range,
    least_discriminating,
    n_to_drop,
    prune,
    prune_bank,
)
from exampp.collection.questions import Question, QuestionBank
from exampp.formats.response_matrix import Responses


def sigmoid(x):
    return 1 / (1 + math.exp(-x))


def simulate(n_systems: int, a: np.ndarray, b: np.ndarray, seed: int) -> Responses:
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n_systems)
    p = 1 / (1 + np.exp(-a * (theta[:, None] - b)))
    X = (rng.random(p.shape) < p).astype(float)
    return Responses(pd.DataFrame(X, index=[f"s{i}" for i in range(n_systems)],
                                  columns=[f"i{j:02d}" for j in range(len(a))]))


def test_information_over_range_is_the_closed_form_integral():
    # ∫ a² σ'(a(θ−b)) dθ = a [σ(a(hi−b)) − σ(a(lo−b))]: one item, and two items add up.
    theta = np.array([0.3, -1.0, 2.0])
    lo, hi, integral, mean = information_over_range(theta, np.array([1.5]), np.array([0.5]), 0.0)
    expected = 1.5 * (sigmoid(1.5 * (2.0 - 0.5)) - sigmoid(1.5 * (-1.0 - 0.5)))
    assert (lo, hi) == (-1.0, 2.0)
    assert integral == pytest.approx(expected, rel=1e-4)
    assert mean == pytest.approx(expected / 3.0, rel=1e-4)
    both = information_over_range(theta, np.array([1.5, 0.7]), np.array([0.5, -2.0]), np.zeros(2))[2]
    second = 0.7 * (sigmoid(0.7 * (2.0 + 2.0)) - sigmoid(0.7 * (-1.0 + 2.0)))
    assert both == pytest.approx(expected + second, rel=1e-4)


def test_items_without_parameters_add_no_information():
    theta = np.array([-1.0, 1.0])
    with_nan = information_over_range(theta, np.array([1.0, np.nan]), np.array([0.0, np.nan]), np.zeros(2))
    alone = information_over_range(theta, np.array([1.0]), np.array([0.0]), 0.0)
    assert with_nan == alone


def test_least_discriminating_drops_unestimated_items_then_lowest_signed_a():
    items = ["w", "x", "y", "z", "v", "u"]
    a = np.array([0.9, 0.2, np.nan, 0.2, 2.0, -0.5])
    status = ["ok", "ok", "all correct", "ok", "ok", "ok"]
    # 5 estimated items: 0.2 of them is 1, 0.4 is 2, 0.5 is 2.5 rounded half up to 3
    assert least_discriminating(items, a, status, 0.2) == ["y", "u"]
    assert least_discriminating(items, a, status, 0.4) == ["y", "u", "x"]  # the tie keeps item order
    assert least_discriminating(items, a, status, 0.5) == ["y", "u", "x", "z"]
    assert least_discriminating(["y", "x"], a[1:3][::-1], ["all correct", "ok"], 0.5) == ["y"]


@pytest.mark.parametrize(("n", "fraction", "expected"),
                         [(10, 0.2, 2), (10, 0.01, 1), (3, 0.9, 2), (7, 0.5, 4), (5, 0.5, 3), (1, 0.5, 0), (0, 0.5, 0)])
def test_n_to_drop(n, fraction, expected):
    assert n_to_drop(n, fraction) == expected


def test_pruning_on_simulated_data_drops_the_lowest_discriminations():
    a = np.linspace(0.15, 2.5, 24)
    rng = np.random.default_rng(3)
    b = rng.uniform(-1.5, 1.5, size=24)
    order = rng.permutation(24)  # true a not in column order
    responses = simulate(500, a[order], b[order], seed=7)
    true_a = dict(zip(responses.items, a[order]))

    result = prune(responses, fraction=0.25, steps=2, estimator=IRTModel(model="2pl"))
    sizes = [len(step.items) for step in result.steps]
    assert sizes == [24, 18, 13]  # 0.25 · 24 = 6, 0.25 · 18 = 4.5 -> 5
    assert [len(step.dropped) for step in result.steps] == [0, 6, 5]
    assert result.kept == result.steps[-1].items
    assert sorted(result.kept + result.dropped) == sorted(responses.items)

    # Each step drops exactly the lowest fitted a of the previous step's fit, recomputed here
    # without a warm start (the same optimum).
    refits = [IRTModel(model="2pl").fit(responses.select(step.items).values) for step in result.steps]
    for before, after, refit in zip(result.steps, result.steps[1:], refits):
        lowest = [before.items[j] for j in np.argsort(refit.a_, kind="stable")[: len(after.dropped)]]
        assert set(after.dropped) == set(lowest)
    # ...which with 500 systems are items of truly low discrimination (sampling error of a ~ 0.1-0.2):
    true_rank = {item: rank for rank, item in enumerate(sorted(true_a, key=true_a.get))}
    assert max(true_rank[item] for item in result.steps[1].dropped) < 8
    assert max(true_rank[item] for item in result.dropped) < 14

    # Information per step, independently: integrate the refitted models' test information.
    for step, model in zip(result.steps, refits):
        lo, hi = model.theta_.min(), model.theta_.max()
        assert (step.theta_min, step.theta_max) == pytest.approx((lo, hi), abs=1e-3)
        grid = np.linspace(lo, hi, 2001)
        p = 1 / (1 + np.exp(-model.a_ * (grid[:, None] - model.b_)))
        info = (model.a_**2 * p * (1 - p)).sum(axis=1)
        assert step.information_integral == pytest.approx(np.trapezoid(info, grid), rel=1e-3)
        assert step.information_mean == pytest.approx(step.information_integral / (step.theta_max - step.theta_min))
    # Dropping weak items loses little information: it falls, but slowly.
    integrals = [step.information_integral for step in result.steps]
    assert integrals == sorted(integrals, reverse=True)
    assert integrals[1] > 0.85 * integrals[0]

    table = result.table()
    assert list(table["n_items"]) == sizes
    assert table.loc[1, "dropped_items"].split() == result.steps[1].dropped


def test_steps_refit_clones_of_the_fitted_models_estimator():
    responses = simulate(80, np.linspace(0.3, 2.0, 8), np.linspace(-1, 1, 8), seed=5)
    fitted = IRTModel("2pl").fit(responses.values)
    result = prune(responses, fraction=0.25, steps=2, fitted=fitted)
    assert result.model is not fitted and result.model.get_params() == fitted.get_params()
    assert result.model.prior_a_ == fitted.prior_a_ == (0.0, 0.5)  # 80 respondents: "auto" chose the prior
    pd.testing.assert_frame_equal(result.table(), prune(responses, fraction=0.25, steps=2,
                                                        estimator=IRTModel("2pl")).table())


def test_pruning_rejects_bad_settings():
    responses = simulate(20, np.ones(4), np.zeros(4), seed=1)
    with pytest.raises(ValueError, match="fraction"):
        prune(responses, fraction=1.0, steps=1)
    with pytest.raises(ValueError, match="steps"):
        prune(responses, fraction=0.5, steps=-1)


def test_prune_bank_keeps_order_and_query_texts():
    bank = QuestionBank([Question("q1", f"q1/{n}", f"question {n}?") for n in "abc"]
                        + [Question("q2", "q2/d", "question d?")], query_texts={"q1": "one", "q2": "two"})
    pruned = prune_bank(bank, ["q2/d", "q1/a", "q1/c"])
    assert [q.question_id for q in pruned] == ["q1/a", "q1/c", "q2/d"]
    assert pruned.query_texts == {"q1": "one", "q2": "two"}
