"""Precision-family measures: P, relative_P, recall, success at cutoffs, Rprec, Rprec_mult, recip_rank.

Cutoffs beyond the retrieved list count the missing ranks as nonrelevant (m_P.c and kin).
"""
from __future__ import annotations

import numpy as np

from exampp.trec_eval.judged import JudgedRanking, Settings
from exampp.trec_eval.measure import Measure, ParamKind, Params, relevant_prefix_counts

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


def _rel_at(j: JudgedRanking, p: Params, s: Settings) -> list[int]:
    """Relevant documents retrieved within each cutoff."""
    counts = relevant_prefix_counts(j, s.relevance_level)
    return [counts[min(k, j.num_ret)] for k in p.values]


def _precision(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    return [rel / k for rel, k in zip(_rel_at(j, p, s), p.values)]


def _relative_precision(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    if j.num_rel == 0:
        return [0.0] * len(p.values)
    return [rel / min(k, j.num_rel) for rel, k in zip(_rel_at(j, p, s), p.values)]


def _recall(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    if j.num_rel == 0:
        return [0.0] * len(p.values)
    return [rel / j.num_rel for rel in _rel_at(j, p, s)]


def _success(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    return [1.0 if rel else 0.0 for rel in _rel_at(j, p, s)]


def _rprec(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    depth = min(j.num_ret, j.num_rel)
    if depth == 0:
        return [0.0]
    return [relevant_prefix_counts(j, s.relevance_level)[depth] / j.num_rel]


def _rprec_mult(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    """Precision at each multiple of R (m_Rprec_mult.c: the cutoff is (long)(mult * R + 0.9))."""
    cutoffs = [int(mult * j.num_rel + 0.9) for mult in p.values]
    values = [0.0] * len(cutoffs)
    cut = len(cutoffs) - 1
    while cut >= 0 and cutoffs[cut] > j.num_ret:
        values[cut] = j.num_rel_ret / cutoffs[cut]
        cut -= 1
    # walk up from the bottom: precision at rank i is rel_so_far / i
    rel_so_far = j.num_rel_ret
    i = j.num_ret
    while i > 0 and rel_so_far > 0:
        while cut >= 0 and i == cutoffs[cut]:
            values[cut] = rel_so_far / i
            cut -= 1
        if j.rels[i - 1] >= s.relevance_level:
            rel_so_far -= 1
        i -= 1
    return values


def _recip_rank(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    relevant = np.flatnonzero(j.rel_array >= s.relevance_level)
    return [1.0 / (int(relevant[0]) + 1)] if relevant.size else [0.0]


P = Measure("P", _precision, ParamKind.LONG_CUTOFFS, CUTOFFS)
relative_P = Measure("relative_P", _relative_precision, ParamKind.LONG_CUTOFFS, CUTOFFS)
recall = Measure("recall", _recall, ParamKind.LONG_CUTOFFS, CUTOFFS)
success = Measure("success", _success, ParamKind.LONG_CUTOFFS, (1, 5, 10))
Rprec = Measure("Rprec", _rprec)
Rprec_mult = Measure(
    "Rprec_mult", _rprec_mult, ParamKind.DOUBLE_CUTOFFS, (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
)
recip_rank = Measure("recip_rank", _recip_rank)
