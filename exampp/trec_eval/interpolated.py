"""Interpolated precision at recall levels: iprec_at_recall and 11pt_avg.

Interpolated precision at recall r is the best precision at any rank where recall >= r.
A recall level becomes a number of relevant documents by rounding (lround, as trec_eval
since v9 does).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from exampp.trec_eval.judged import JudgedRanking, Settings
from exampp.trec_eval.measure import Measure, ParamKind, Params, ratio

RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def lround(x: float) -> int:
    """C's lround: nearest integer, halves away from zero (Python's round() goes to even); glibc
    gives LONG_MIN for NaN or a value beyond long's range (it casts, and x86-64 so casts them)."""
    if x != x or not -9223372036854775808.0 <= x < 9223372036854775808.0:
        return -(2 ** 63)
    if x < 0:
        return -lround(-x)
    whole = math.floor(x)
    return whole + 1 if x - whole >= 0.5 else whole


def interpolated_precisions(j: JudgedRanking, recall_levels: Sequence[float], level: int) -> list[float]:
    """Interpolated precision at each recall level (levels in the order given)."""
    cutoffs = [lround(r * j.num_rel) for r in recall_levels]
    values = [0.0] * len(cutoffs)
    cut = len(cutoffs) - 1
    while cut >= 0 and cutoffs[cut] > j.num_rel_ret:
        cut -= 1
    # walk up from the bottom, keeping the best precision seen at or below each rank. Between two
    # relevant documents the precision only falls going up, so the relevant ranks are all it needs
    int_precis = ratio(j.num_rel_ret, j.num_ret)
    rel_so_far = j.num_rel_ret
    relevant = j.ranks_at_least(level)
    for i in reversed(relevant[len(relevant) - rel_so_far:] if rel_so_far > 0 else []):
        precis = rel_so_far / (i + 1)
        if int_precis < precis:
            int_precis = precis
        while cut >= 0 and rel_so_far == cutoffs[cut]:
            values[cut] = int_precis
            cut -= 1
        rel_so_far -= 1
    while cut >= 0:
        values[cut] = int_precis
        cut -= 1
    return values


def _iprec_at_recall(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    return interpolated_precisions(j, p.values, s.relevance_level)


def _11pt_avg(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    values = interpolated_precisions(j, p.values, s.relevance_level)
    total = 0.0
    for v in reversed(values):  # trec_eval adds them from the highest recall level down
        total += v
    return [total / len(values)]


iprec_at_recall = Measure("iprec_at_recall", _iprec_at_recall, ParamKind.DOUBLE_CUTOFFS, RECALL_LEVELS)
eleven_pt_avg = Measure("11pt_avg", _11pt_avg, ParamKind.DOUBLE_PARAMS, RECALL_LEVELS)
