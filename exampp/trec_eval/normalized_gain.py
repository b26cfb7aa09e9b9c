"""Gain measures that combine MAP and nDCG (trec_eval's experimental G and binG).

A document's contribution is its gain discounted by log2(2 + how far the ranking so far
lags behind the ideal one).
"""
from __future__ import annotations

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
    # the cost of rank i: the ideal gain there (at least MIN_COST); summed rank by rank, in order
    last = g.ranked[-1][0] + 1
    costs = np.full(last, MIN_COST)
    walk = np.array(g.walk[:last], dtype=np.float64)
    costs[: len(walk)] = np.where(walk >= MIN_COST, walk, MIN_COST)
    sum_cost = np.cumsum(costs).tolist()
    results_g = sum_results = 0.0
    for i, gain in g.ranked:
        sum_results += gain
        results_g += ratio(gain, c_log2(2 + sum_cost[i] - sum_results))  # negative gains reach log2 <= 0
    return [results_g / sum_ideal if sum_ideal > 0.0 else 0.0]


def _bin_g(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    total = 0.0
    for rel_so_far, i in enumerate(j.ranks_at_least(s.relevance_level), 1):
        total += 1.0 / log2(3 + i - rel_so_far)
    return [ratio(total, j.num_rel) if total else 0.0]  # -l below 0 counts unjudged documents: num_rel may be 0


G = Measure("G", _g, ParamKind.PAIR_PARAMS)
binG = Measure("binG", _bin_g)
