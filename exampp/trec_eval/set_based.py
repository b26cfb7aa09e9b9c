"""Measures of the retrieved set as a whole, ignoring ranks: set_P, set_relative_P, set_recall,
set_map, set_F and utility."""
from __future__ import annotations

from exampp.trec_eval.judged import JudgedRanking, Settings
from exampp.trec_eval.measure import Measure, ParamKind, Params, ratio


def _set_p(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    return [j.num_rel_ret / j.num_ret if j.num_ret else 0.0]


def _set_relative_p(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    return [j.num_rel_ret / min(j.num_ret, j.num_rel) if j.num_ret and j.num_rel else 0.0]


def _set_recall(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    return [j.num_rel_ret / j.num_rel if j.num_rel else 0.0]


def _set_map(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    if not (j.num_ret and j.num_rel):
        return [0.0]
    return [(float(j.num_rel_ret) * float(j.num_rel_ret)) / (float(j.num_ret) * float(j.num_rel))]


def _set_f(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    """Weighted harmonic mean of set precision and recall; the parameter weighs recall."""
    if not j.num_rel_ret:
        return [0.0]
    precision = j.num_rel_ret / j.num_ret
    recall = j.num_rel_ret / j.num_rel
    x = p.values[0]
    return [ratio((x + 1.0) * precision * recall, x * precision + recall)]  # x = -1 can divide by 0


def _utility(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    """a * rel_ret + b * nonrel_ret + c * rel_not_ret + d * nonrel_not_ret (defaults 1, -1, 0, 0)."""
    a, b, c, d = p.values
    return [
        a * j.num_rel_ret
        + b * (j.num_ret - j.num_rel_ret)
        + c * (j.num_rel - j.num_rel_ret)
        + d * (s.num_docs_in_coll + j.num_rel_ret - j.num_ret - j.num_rel)
    ]


set_P = Measure("set_P", _set_p)
set_relative_P = Measure("set_relative_P", _set_relative_p)
set_recall = Measure("set_recall", _set_recall)
set_map = Measure("set_map", _set_map)
set_F = Measure("set_F", _set_f, ParamKind.DOUBLE_PARAMS, (1.0,))
utility = Measure("utility", _utility, ParamKind.DOUBLE_PARAMS, (1.0, -1.0, 0.0, 0.0), num_params=4)
