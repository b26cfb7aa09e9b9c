"""Gain measures that combine MAP and nDCG (trec_eval's experimental G and binG).

A document's contribution is its gain discounted by log2(2 + how far the ranking so far
lags behind the ideal one).
"""
from __future__ import annotations

from collections.abc import Callable
from math import log2

import numpy as np

from exampp.trec_eval.gains import gains
from exampp.trec_eval.judged import JudgedRanking, Settings
from exampp.trec_eval.measure import Measure, ParamKind, Params, c_log2, ratio

MIN_COST = 1.0


def _g(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    g = gains(j, p.values)
    sum_ideal = 0.0
    for gain in g.ideal:
        sum_ideal += gain
    if not g.ranked:
        return [0.0]
    sum_cost = _cost_sums(g.walk, g.ranked[-1][0] + 1)
    results_g = sum_results = 0.0
    for i, gain in g.ranked:
        sum_results += gain
        results_g += ratio(gain, c_log2(2 + sum_cost(i) - sum_results))  # negative gains reach log2 <= 0
    return [results_g / sum_ideal if sum_ideal > 0.0 else 0.0]


def _cost_sums(walk: list[float], ranks: int) -> Callable[[int], float]:
    """``sum_cost(i)``: the costs of ranks 0..i added one by one, a rank's cost its ideal gain (at
    least MIN_COST). Below the ideal ranking every cost is MIN_COST: while the sum is a whole
    number (whole gains, the default) adding it k times is adding k, so only the ideal ranking's
    ranks are summed one by one; otherwise every rank is."""
    costs = [gain if gain >= MIN_COST else MIN_COST for gain in walk[:ranks]]
    with np.errstate(all="ignore"):  # huge gains overflow to inf, as in C, without a word
        sums = np.cumsum(np.array(costs, dtype=np.float64)).tolist()  # cumsum adds in order
        base, done = (sums[-1] if sums else 0.0), len(sums)
        if ranks > done and not (base.is_integer() and base + ranks < 2.0 ** 52):
            sums = np.cumsum(np.array(costs + [MIN_COST] * (ranks - done))).tolist()
            done = ranks
    return lambda i: sums[i] if i < done else base + (i + 1 - done) * MIN_COST


def _bin_g(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    total = 0.0
    for rel_so_far, i in enumerate(j.ranks_at_least(s.relevance_level), 1):
        total += 1.0 / log2(3 + i - rel_so_far)
    return [ratio(total, j.num_rel) if total else 0.0]  # -l below 0 counts unjudged documents: num_rel may be 0


G = Measure("G", _g, ParamKind.PAIR_PARAMS)
binG = Measure("binG", _bin_g)
