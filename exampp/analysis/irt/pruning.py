"""Iterative exam improvement (Guinet et al.): fit, drop the least discriminating items, refit.

Step 0 fits the full exam. Each later step drops the fraction ``r`` of the remaining estimated
items with the lowest discrimination ``a`` (at least one item, never all), together with the items
that every system answers or every system misses (no estimate: they tell no two systems apart; on
DL19 they are most of the exam, so counting them in ``r`` would spend the first steps on them alone),
then refits a clone of the estimator, starting from the previous fit's parameters of the items kept
(``IRTModel.fit(init=)``).
Each step records the items kept and dropped and the test information over the fitted
systems' ability range [min θ, max θ]: its integral (trapezoid rule) and its mean over the range.
"""
from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from exampp.analysis.irt.base import clone
from exampp.analysis.irt.information import information_summary, test_information
from exampp.analysis.irt.models import IRTModel
from exampp.collection.questions import QuestionBank
from exampp.formats.response_matrix import Responses

GRID_POINTS = 201


@dataclass(frozen=True)
class PruningStep:
    step: int
    items: list[str]
    """The items this step's model was fitted on."""
    dropped: list[str]
    """The items dropped just before this step (none at step 0)."""
    theta_min: float
    theta_max: float
    information_integral: float
    information_mean: float
    loglik: float
    converged: bool


@dataclass(frozen=True)
class Pruning:
    steps: list[PruningStep]
    model: IRTModel
    """The last step's fitted model (on :attr:`kept`)."""

    @property
    def kept(self) -> list[str]:
        return self.steps[-1].items

    @property
    def dropped(self) -> list[str]:
        return [item for step in self.steps for item in step.dropped]

    def table(self) -> pd.DataFrame:
        """One row per step: step, n_items, n_dropped, information over the ability range, fit."""
        return pd.DataFrame(
            [(s.step, len(s.items), len(s.dropped), s.theta_min, s.theta_max, s.information_integral,
              s.information_mean, s.loglik, s.converged, " ".join(s.dropped)) for s in self.steps],
            columns=["step", "n_items", "n_dropped", "theta_min", "theta_max", "information_integral",
                     "information_mean", "loglik", "converged", "dropped_items"],
        )


def information_over_range(theta: np.ndarray, a: np.ndarray, b: np.ndarray, g: np.ndarray | float
                           ) -> tuple[float, float, float, float]:
    """(θ_min, θ_max, ∫ I(θ) dθ, mean I) of the test information over the range of ``theta``.

    Items without finite parameters (all right / all wrong, when the model leaves them out)
    add no information.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    g = np.broadcast_to(np.asarray(g, dtype=float), a.shape)
    ok = np.isfinite(a) & np.isfinite(b) & np.isfinite(g)
    lo, hi = float(np.min(theta)), float(np.max(theta))
    if hi == lo or not ok.any():
        return lo, hi, 0.0, float(test_information([lo], a[ok], b[ok], g[ok])[0]) if ok.any() else 0.0
    integral = information_summary(np.linspace(lo, hi, GRID_POINTS), a[ok], b[ok], g[ok], lo, hi)
    return lo, hi, integral, integral / (hi - lo)


def least_discriminating(items: Sequence[str], a: np.ndarray, status: Sequence[str], fraction: float) -> list[str]:
    """The items to drop: every item without an estimate (status not "ok": all systems right, or
    all wrong, which tells no systems apart), then the ``fraction`` of the estimated items with the
    lowest ``a`` (signed: an item weaker systems answer more often is worse than a flat one).
    Ties keep item order."""
    flat = [items[j] for j in range(len(items)) if status[j] != "ok"]
    estimated = sorted((j for j in range(len(items)) if status[j] == "ok"), key=lambda j: (a[j], j))
    return flat + [items[j] for j in estimated[:n_to_drop(len(estimated), fraction)]]


def n_to_drop(n_items: int, fraction: float) -> int:
    """fraction · n_items rounded half up, at least 1 and at most n_items − 1 (0 for fewer than 2 items)."""
    return max(0, min(max(1, math.floor(fraction * n_items + 0.5)), n_items - 1))


def _fit(estimator: IRTModel, responses: Responses, previous: IRTModel | None,
         previous_items: list[str]) -> IRTModel:
    # Warm start: the kept items' parameters from the previous fit are the starting values.
    model = clone(estimator)
    X, weights = responses.values, responses.weights
    if previous is None:
        return model.fit(X, sample_weight=weights)
    position = {item: j for j, item in enumerate(previous_items)}
    keep = [position[item] for item in responses.items]
    init = {"a": previous.a_[keep], "b": previous.b_[keep], "g": previous.g_[keep]}
    return model.fit(X, sample_weight=weights, init=init)


def prune(
    responses: Responses,
    *,
    fraction: float,
    steps: int,
    estimator: IRTModel | None = None,
    fitted: IRTModel | None = None,
) -> Pruning:
    """Fit a clone of ``estimator`` on the responses, then ``steps`` times drop the least
    discriminating ``fraction`` of the remaining items and refit (warm-started from the previous fit).

    ``fitted``: a model already fitted on all of ``responses``, used as step 0 instead of a fit;
    its settings are the estimator's when ``estimator`` is not given (default: ``IRTModel()``).
    """
    if not 0 < fraction < 1:
        raise ValueError(f"prune fraction must be in (0, 1), got {fraction}")
    if steps < 0:
        raise ValueError(f"prune steps must be >= 0, got {steps}")
    estimator = estimator if estimator is not None else fitted if fitted is not None else IRTModel()
    items = responses.items
    dropped: list[str] = []
    model: IRTModel | None = None
    previous_items: list[str] = []
    history: list[PruningStep] = []
    for step in range(steps + 1):
        if step:
            assert model is not None  # fitted at step 0
            dropped = least_discriminating(items, model.a_, list(model.item_status_), fraction)
            if not dropped:
                break
            gone = set(dropped)
            items = [item for item in items if item not in gone]
        model = fitted if step == 0 and fitted is not None else \
            _fit(estimator, responses.select(items), model, previous_items)
        previous_items = items
        lo, hi, integral, mean = information_over_range(model.theta_, model.a_, model.b_, model.g_)
        history.append(PruningStep(step, list(items), list(dropped), lo, hi, integral, mean,
                                   float(model.loglik_), bool(model.converged_)))
    assert model is not None  # step 0 always runs
    return Pruning(history, model)


def prune_bank(bank: QuestionBank, keep: Collection[str]) -> QuestionBank:
    """The bank's questions whose ids are in ``keep``, in bank order, query texts kept."""
    wanted = set(keep)
    return QuestionBank((q for q in bank if q.question_id in wanted),
                        query_texts={qid: text for qid, text in bank.query_texts.items()})
