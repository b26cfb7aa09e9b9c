"""Gain measures that combine MAP and nDCG (trec_eval's experimental G and binG).

A document's contribution is its gain discounted by log2(2 + how far the ranking so far
lags behind the ideal one).
"""
from __future__ import annotations

from math import log2

from exampp.trec_eval.gains import IdealWalk, gain_of, setup_gains
from exampp.trec_eval.judged import JudgedRanking, Settings
from exampp.trec_eval.measure import Measure, ParamKind, Params, c_log2, ratio

MIN_COST = 1.0


def _g(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    levels = setup_gains(p.values, j)
    ideal = IdealWalk(levels)
    results_g = sum_results = sum_ideal = sum_cost = 0.0
    i = 0
    while i < j.num_ret or ideal.gain > 0.0:
        if ideal.gain > 0.0:
            ideal_gain = ideal.step()
            if ideal_gain > 0.0:
                sum_ideal += ideal_gain
            cost = ideal_gain if ideal_gain >= MIN_COST else MIN_COST
        else:
            cost = MIN_COST
        if i < j.num_ret:
            gain = gain_of(j.rels[i], levels)
            sum_results += gain
            sum_cost += cost
            if gain != 0:
                results_g += ratio(gain, c_log2(2 + sum_cost - sum_results))  # negative gains reach log2 <= 0
        i += 1
    return [results_g / sum_ideal if sum_ideal > 0.0 else 0.0]


def _bin_g(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    rel_so_far = 0
    total = 0.0
    for i, rel in enumerate(j.rels):
        if rel >= s.relevance_level:
            rel_so_far += 1
            total += 1.0 / log2(3 + i - rel_so_far)
    return [total / j.num_rel if rel_so_far else 0.0]


G = Measure("G", _g, ParamKind.PAIR_PARAMS)
binG = Measure("binG", _bin_g)
