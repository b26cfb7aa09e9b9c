"""Discounted cumulative gain measures (Järvelin & Kekäläinen 2002): ndcg, dcg, ideal_dcg,
ndcg_cut, ndcg_rel and Rndcg.

Gains are the raw relevance grades (not thresholded by ``-l``) unless ``-m ndcg.1=3,2=9``
changes them; the document at rank r is discounted by log2(r + 1).
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from math import log2

from exampp.trec_eval.gains import gains
from exampp.trec_eval.judged import JudgedRanking, Settings
from exampp.trec_eval.measure import Measure, ParamKind, Params, ratio
from exampp.trec_eval.precision import CUTOFFS


def _dcg_prefix(gains: Iterable[tuple[int, float]]) -> list[float]:
    """``prefix[m]``: the DCG of the first ``m`` of ``(rank index, gain)``, each gain / log2(rank + 2)
    added in rank order, as trec_eval adds them."""
    prefix = [0.0]
    for i, gain in gains:
        prefix.append(prefix[-1] + gain / log2(i + 2))
    return prefix


def _dcg_and_ideal(j: JudgedRanking, p: Params) -> tuple[float, float]:
    g = gains(j, p.values)
    return _dcg_prefix(g.ranked)[-1], _dcg_prefix(enumerate(g.ideal))[-1]


def _ndcg(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    results_dcg, ideal_dcg = _dcg_and_ideal(j, p)
    return [results_dcg / ideal_dcg if ideal_dcg > 0.0 else 0.0]


def _dcg(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    return [_dcg_and_ideal(j, p)[0]]


def _ideal_dcg(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    return [_dcg_and_ideal(j, p)[1]]


def _ndcg_cut(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    """nDCG at each cutoff: DCG of the top k over the ideal ranking's DCG of the top k."""
    g = gains(j)  # the grades as gains
    dcg = _dcg_prefix(g.ranked)
    ranks = [i for i, _ in g.ranked]
    ideal = _dcg_prefix(enumerate(g.ideal[: p.values[-1]]))
    values = []
    for k in p.values:
        top_ideal = ideal[min(k, len(ideal) - 1)]
        top_dcg = dcg[bisect_left(ranks, min(k, j.num_ret))]  # the ranks above k
        values.append(top_dcg / top_ideal if top_ideal > 0.0 else top_dcg)
    return values


def _ndcg_rel(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    """nDCG averaged over the ranks of the relevant (positive gain) documents; unretrieved ones
    take the nDCG at the end of the ranking."""
    g = gains(j, p.values)
    ideal = _dcg_prefix(enumerate(g.ideal))
    num_rel = len(g.ideal)
    results_dcg = total = 0.0
    num_rel_ret = 0
    for i, gain in g.ranked:
        results_dcg += gain / log2(i + 2)
        if gain > 0:
            total += ratio(results_dcg, ideal[min(i + 1, num_rel)])  # the ideal DCG down to this rank
            num_rel_ret += 1
    total += ratio((num_rel - num_rel_ret) * results_dcg, ideal[-1])
    return [total / num_rel if total > 0.0 else 0.0]


def _rndcg(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    """nDCG averaged at the R-levels: the ranks where the ideal ranking's gain drops."""
    if j.num_rel == 0:
        return [0.0]
    g = gains(j, p.values)
    walk = g.walk
    ranked = dict(g.ranked)
    old_ideal_gain = g.top
    results_dcg = ideal_dcg = total = 0.0
    num_changes = 0
    # ranks retrieved while the ideal ranking still has gain: both sums move, rank by rank
    steps = min(j.num_ret, len(walk))
    for i in range(steps):
        gain = ranked.get(i, 0.0)
        if walk[i] != old_ideal_gain:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                num_changes += 1
            old_ideal_gain = walk[i]
        if gain != 0:
            results_dcg += gain / log2(i + 2)
        if walk[i] > 0.0:
            ideal_dcg += walk[i] / log2(i + 2)
    if steps < j.num_ret:  # the ideal gain ran out first: the rest of the ranking, then one change
        for i, gain in g.ranked:
            if i >= steps:
                results_dcg += gain / log2(i + 2)
        if ideal_dcg > 0.0:
            total += results_dcg / ideal_dcg
            num_changes += 1
    else:  # the ranking ran out first: the rest of the ideal ranking
        for i in range(steps, len(walk)):
            if walk[i] != old_ideal_gain:
                if ideal_dcg > 0.0:
                    total += results_dcg / ideal_dcg
                    num_changes += 1
                old_ideal_gain = walk[i]
            if walk[i] > 0.0:
                ideal_dcg += walk[i] / log2(i + 2)
    return [ratio(total, num_changes)]


ndcg = Measure("ndcg", _ndcg, ParamKind.PAIR_PARAMS)
dcg = Measure("dcg", _dcg, ParamKind.PAIR_PARAMS)
ideal_dcg = Measure("ideal_dcg", _ideal_dcg, ParamKind.PAIR_PARAMS)
ndcg_cut = Measure("ndcg_cut", _ndcg_cut, ParamKind.LONG_CUTOFFS, CUTOFFS)
ndcg_rel = Measure("ndcg_rel", _ndcg_rel, ParamKind.PAIR_PARAMS)
Rndcg = Measure("Rndcg", _rndcg, ParamKind.PAIR_PARAMS)
