"""Sampling designs: which pool pairs people should judge, each drawn with a known probability.

A design gives every pair a size λ_d > 0; its inclusion probability for a budget n is
π_d = min(1, c·λ_d) with c such that Σ π_d = n. The pairs are drawn by *sequential Poisson
sampling* (Ohlsson 1998) with permanent random numbers: pair d gets U_d, uniform on (0, 1) and
fixed by the seed and the pair's ids alone, and the n pairs of smallest priority U_d / λ_d are
drawn. So the sample has exactly n pairs, each drawn with probability π_d (to a close
approximation; estimators treat the draw as Poisson sampling, as is standard), and a larger budget
with the same seed and sizes draws a superset: what people judged stays in the sample.

Strategies (the size λ_d):

- ``uniform``: λ = 1;
- ``stratified``: Neyman allocation over the judge's grades: λ = S_h, the anticipated standard
  deviation of the human label among pairs the judge graded h (a prior that takes the judge's grade
  at face value: :func:`prior_sd`);
- ``runs``: λ = S_h · √(Σ_r w_rd²), w_rd the pair's weight in run r's measures: the allocation that
  minimises the summed variance of every run's estimate (pairs many runs rank count more);
- ``separating``: λ = S_h · √(Σ_{r<s} (w_rd − w_sd)²): the allocation for the differences between
  runs (a pair in every run's top-k tells nothing about their order);
- ``uncertainty``: ``runs`` with S_h replaced by the disagreement of several judges (methods) on
  the pair, where the store has them.

Every strategy but ``uniform`` is mixed with it (:data:`DEFENSIVE` of the budget spread uniformly),
so that no pair has a tiny probability whose weight 1/π would dominate an estimate.
"""
from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np

STRATEGIES = ("uniform", "stratified", "runs", "separating", "uncertainty")
DEFAULT_STRATEGY = "runs"
DEFENSIVE = 0.2


def permanent_uniforms(seed: int, query_ids: Sequence[str], keys: Sequence[str]) -> np.ndarray:
    """U_d on (0, 1) for each pair, a function of the seed and the pair's ids alone (BLAKE2b), so that
    adding runs or pairs to a pool leaves every other pair's number as it was."""
    out = np.empty(len(keys))
    for i, (qid, key) in enumerate(zip(query_ids, keys)):
        digest = hashlib.blake2b(f"{seed}\t{qid}\t{key}".encode(), digest_size=8).digest()
        out[i] = (int.from_bytes(digest, "big") >> 11) / 2.0 ** 53
    return np.clip(out, 2.0 ** -54, None)  # U = 0 would give every size the same priority


def inclusion_probabilities(sizes: np.ndarray, budget: int) -> np.ndarray:
    """π_d = min(1, c·λ_d) with Σ π_d = ``budget`` (1 everywhere when the budget covers the pool)."""
    sizes = np.asarray(sizes, dtype=float)
    if budget >= len(sizes):
        return np.ones(len(sizes))
    if budget < 1:
        raise ValueError("the budget must be at least 1 pair")
    if (sizes <= 0).any() or not np.isfinite(sizes).all():
        raise ValueError("every pair needs a positive, finite size")
    order = np.sort(sizes)[::-1]
    # with the t largest taken for sure, c = (budget - t) / (sum of the others); the smallest t that
    # leaves every other π below 1 is the solution
    tails = np.concatenate([np.cumsum(order[::-1])[::-1], [0.0]])
    for taken in range(budget):
        c = (budget - taken) / tails[taken]
        if c * order[taken] <= 1:
            return np.minimum(1.0, c * sizes)
    return np.minimum(1.0, sizes / order[budget - 1])  # not reached: budget < len(sizes)


def draw(sizes: np.ndarray, uniforms: np.ndarray, budget: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indices of the drawn pairs in priority order, their inclusion probabilities, their priorities)."""
    budget = min(budget, len(sizes))
    priorities = uniforms / np.asarray(sizes, dtype=float)
    chosen = np.argsort(priorities, kind="stable")[:budget]
    return chosen, inclusion_probabilities(sizes, budget)[chosen], priorities[chosen]


def prior_sd(grades: np.ndarray, top: float) -> np.ndarray:
    """Anticipated sd of a binary human label per judge grade when no pilot is given: P(relevant)
    taken as (grade + 0.5) / (top + 1), the judge's scale at face value."""
    p = (np.asarray(grades, dtype=float) + 0.5) / (top + 1.0)
    return np.sqrt(p * (1 - p))


def sizes_for(strategy: str, sd: np.ndarray, run_weights: np.ndarray | None = None,
              separating_weights: np.ndarray | None = None, disagreement: np.ndarray | None = None
              ) -> np.ndarray:
    """λ_d of a strategy (see the module), mixed with the uniform design. ``run_weights``: Σ_r w_rd²
    per pair; ``separating_weights``: Σ_{r<s} (w_rd − w_sd)²; ``disagreement``: the judges' sd."""
    n = len(sd)
    if strategy == "uniform":
        return np.ones(n)
    if strategy == "stratified":
        raw = sd
    elif strategy == "runs":
        assert run_weights is not None  # the strategy's weights, which its callers give
        raw = sd * np.sqrt(run_weights)
    elif strategy == "separating":
        assert separating_weights is not None
        raw = sd * np.sqrt(separating_weights)
    elif strategy == "uncertainty":
        assert run_weights is not None
        spread = sd if disagreement is None else disagreement + 0.1 * sd.mean()
        raw = spread * np.sqrt(run_weights)
    else:
        raise ValueError(f"unknown strategy {strategy!r}; one of {', '.join(STRATEGIES)}")
    raw = np.asarray(raw, dtype=float)
    if raw.sum() <= 0:
        return np.ones(n)
    return (1 - DEFENSIVE) * raw / raw.mean() + DEFENSIVE


def run_weight_sums(weights: Mapping[str, np.ndarray]) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(Σ_r w_rd², Σ_{r<s} (w_rd − w_sd)²) per pair from each measure's (runs x pairs) weights, every
    measure scaled to the same total so that none dominates by its units ((None, None) for no measure)."""
    first: np.ndarray | None = None
    second: np.ndarray | None = None
    for matrix in weights.values():
        w = np.asarray(matrix, dtype=float)
        scale = (w ** 2).sum() or 1.0
        squares = (w ** 2).sum(axis=0) / scale
        r = w.shape[0]
        # Σ_{r<s} (w_r − w_s)² = R Σ w_r² − (Σ w_r)²
        spread = (r * (w ** 2).sum(axis=0) - w.sum(axis=0) ** 2) / scale
        first = squares if first is None else first + squares
        second = spread if second is None else second + spread
    return first, second
