"""Discounted cumulative gain measures (Järvelin & Kekäläinen 2002): ndcg, dcg, ideal_dcg,
ndcg_cut, ndcg_rel and Rndcg.

Gains are the raw relevance grades (not thresholded by ``-l``) unless ``-m ndcg.1=3,2=9``
changes them; the document at rank r is discounted by log2(r + 1).
"""
from __future__ import annotations

from math import log2

import numpy as np

from exampp.trec_eval.gains import IdealWalk, gain_of, setup_gains
from exampp.trec_eval.judged import JudgedRanking, Settings
from exampp.trec_eval.measure import Measure, ParamKind, Params, cumulative, discounts, ratio
from exampp.trec_eval.precision import CUTOFFS


def _dcg_and_ideal(j: JudgedRanking, p: Params) -> tuple[float, float]:
    levels = setup_gains(p.values, j)
    ideal = IdealWalk(levels)
    results_dcg = ideal_dcg = 0.0
    i = 0
    while i < j.num_ret or ideal.gain > 0.0:
        if i < j.num_ret:
            gain = gain_of(j.rels[i], levels)
            if gain != 0:
                results_dcg += gain / log2(i + 2)
        if ideal.gain > 0.0 and ideal.step() > 0.0:
            ideal_dcg += ideal.gain / log2(i + 2)
        i += 1
    return results_dcg, ideal_dcg


def _ndcg(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    results_dcg, ideal_dcg = _dcg_and_ideal(j, p)
    return [results_dcg / ideal_dcg if ideal_dcg > 0.0 else 0.0]


def _dcg(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    return [_dcg_and_ideal(j, p)[0]]


def _ideal_dcg(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    return [_dcg_and_ideal(j, p)[1]]


def _ndcg_cut(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    """nDCG at each cutoff: DCG of the top k over the ideal ranking's DCG of the top k."""
    rels = j.rel_array
    dcg = cumulative(np.where(rels > 0, rels / discounts(j.num_ret), 0.0)).tolist()
    ideal = IdealWalk(setup_gains((), j))
    ideal_dcg = [0.0]
    while ideal.step() > 0.0 and len(ideal_dcg) <= p.values[-1]:
        ideal_dcg.append(ideal_dcg[-1] + ideal.gain / log2(len(ideal_dcg) + 1))
    values = []
    for k in p.values:
        top_ideal = ideal_dcg[min(k, len(ideal_dcg) - 1)]
        top_dcg = dcg[min(k, j.num_ret)]
        values.append(top_dcg / top_ideal if top_ideal > 0.0 else top_dcg)
    return values


def _ndcg_rel(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    """nDCG averaged over the ranks of the relevant (positive gain) documents; unretrieved ones
    take the nDCG at the end of the ranking."""
    levels = setup_gains(p.values, j)
    ideal = IdealWalk(levels)
    results_dcg = ideal_dcg = total = 0.0
    num_rel = num_rel_ret = 0
    i = 0
    while i < j.num_ret or ideal.gain > 0.0:
        gain = 0.0
        if i < j.num_ret:
            gain = gain_of(j.rels[i], levels)
            if gain != 0:
                results_dcg += gain / log2(i + 2)
        if ideal.gain > 0.0 and ideal.step() > 0.0:
            num_rel += 1
            ideal_dcg += ideal.gain / log2(i + 2)
        if gain > 0:
            total += ratio(results_dcg, ideal_dcg)
            num_rel_ret += 1
        i += 1
    total += ratio((num_rel - num_rel_ret) * results_dcg, ideal_dcg)
    return [total / num_rel if total > 0.0 else 0.0]


def _rndcg(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    """nDCG averaged at the R-levels: the ranks where the ideal ranking's gain drops."""
    if j.num_rel == 0:
        return [0.0]
    levels = setup_gains(p.values, j)
    ideal = IdealWalk(levels)
    old_ideal_gain = ideal.gain
    results_dcg = ideal_dcg = total = 0.0
    num_changes = 0
    i = 0
    while i < j.num_ret and ideal.gain > 0.0:
        gain = gain_of(j.rels[i], levels)
        if ideal.step() != old_ideal_gain:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                num_changes += 1
            old_ideal_gain = ideal.gain
        if gain != 0:
            results_dcg += gain / log2(i + 2)
        if ideal.gain > 0.0:
            ideal_dcg += ideal.gain / log2(i + 2)
        i += 1
    if i < j.num_ret:
        for i in range(i, j.num_ret):
            gain = gain_of(j.rels[i], levels)
            if gain != 0:
                results_dcg += gain / log2(i + 2)
        i = j.num_ret
        if ideal_dcg > 0.0:
            total += results_dcg / ideal_dcg
            num_changes += 1
    while ideal.gain > 0.0:
        if ideal.step() != old_ideal_gain:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                num_changes += 1
            old_ideal_gain = ideal.gain
        if ideal.gain > 0.0:
            ideal_dcg += ideal.gain / log2(i + 2)
        i += 1
    return [ratio(total, num_changes)]


ndcg = Measure("ndcg", _ndcg, ParamKind.PAIR_PARAMS)
dcg = Measure("dcg", _dcg, ParamKind.PAIR_PARAMS)
ideal_dcg = Measure("ideal_dcg", _ideal_dcg, ParamKind.PAIR_PARAMS)
ndcg_cut = Measure("ndcg_cut", _ndcg_cut, ParamKind.LONG_CUTOFFS, CUTOFFS)
ndcg_rel = Measure("ndcg_rel", _ndcg_rel, ParamKind.PAIR_PARAMS)
Rndcg = Measure("Rndcg", _rndcg, ParamKind.PAIR_PARAMS)
