"""Precision-family measures: P, relative_P, recall, success at cutoffs, Rprec, Rprec_mult, recip_rank.

Cutoffs beyond the retrieved list count the missing ranks as nonrelevant (m_P.c and kin).
"""
from __future__ import annotations

from bisect import bisect_left

from exampp.trec_eval.judged import JudgedRanking, Settings
from exampp.trec_eval.measure import Measure, ParamKind, Params, c_long

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


def _rel_at(j: JudgedRanking, p: Params, s: Settings) -> list[int]:
    """Relevant documents retrieved within each cutoff."""
    relevant = j.ranks_at_least(s.relevance_level)
    return [bisect_left(relevant, min(k, j.num_ret)) for k in p.values]


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
    return [bisect_left(j.ranks_at_least(s.relevance_level), depth) / j.num_rel]


def _rprec_mult(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    """Precision at each multiple of R (m_Rprec_mult.c: the cutoff is (long)(mult * R + 0.9)).

    m_Rprec_mult.c walks up from the bottom while relevant documents remain, filling the
    cutoffs from the last one given as it meets them; this follows the same pointer, rank to
    rank of the cutoffs, with the relevant documents left at each counted by bisection."""
    cutoffs = [c_long(mult * j.num_rel + 0.9) for mult in p.values]
    values = [0.0] * len(cutoffs)
    cut = len(cutoffs) - 1
    while cut >= 0 and cutoffs[cut] > j.num_ret:
        values[cut] = j.num_rel_ret / cutoffs[cut]
        cut -= 1
    relevant = j.ranks_at_least(s.relevance_level)
    rank = j.num_ret  # the walk's rank: it never comes back up
    while cut >= 0 and 1 <= cutoffs[cut] <= rank:
        rank = cutoffs[cut]
        rel_so_far = j.num_rel_ret - (len(relevant) - bisect_left(relevant, rank))  # as the walk reaches rank
        if rel_so_far <= 0:  # the walk stopped below
            break
        values[cut] = rel_so_far / rank
        cut -= 1
    return values


def _recip_rank(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    relevant = j.ranks_at_least(s.relevance_level)
    return [1.0 / (relevant[0] + 1)] if relevant else [0.0]


P = Measure("P", _precision, ParamKind.LONG_CUTOFFS, CUTOFFS)
relative_P = Measure("relative_P", _relative_precision, ParamKind.LONG_CUTOFFS, CUTOFFS)
recall = Measure("recall", _recall, ParamKind.LONG_CUTOFFS, CUTOFFS)
success = Measure("success", _success, ParamKind.LONG_CUTOFFS, (1, 5, 10))
Rprec = Measure("Rprec", _rprec)
Rprec_mult = Measure(
    "Rprec_mult", _rprec_mult, ParamKind.DOUBLE_CUTOFFS, (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
)
recip_rank = Measure("recip_rank", _recip_rank)
