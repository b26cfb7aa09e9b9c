"""Judgment coverage of a ranking: unj (fraction unjudged at cutoffs) and relstring (the grades of the top ranks)."""
from __future__ import annotations

from bisect import bisect_left

from exampp.trec_eval.judged import NONPOOL, UNJUDGED, JudgedRanking, Settings
from exampp.trec_eval.measure import Averaging, Measure, ParamKind, Params, c_long


def _unj(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    judged = j.ranks_at_least(0)  # every other rank is unpooled or unjudged
    return [(min(k, j.num_ret) - bisect_left(judged, min(k, j.num_ret))) / k for k in p.values]


def _symbol(rel: int) -> str:
    if rel > 9:
        return ">"
    if rel >= 0:
        return str(rel)
    return {NONPOOL: "-", UNJUDGED: "."}.get(rel, "<")


def _relstring(j: JudgedRanking, p: Params, s: Settings) -> list[str]:
    """One character per top-ranked document: its grade, '-' not in the pool, '.' pooled but unjudged."""
    return ["".join(_symbol(rel) for rel in j.rels[: max(c_long(p.values[0]), 0)])]


unj = Measure("unj", _unj, ParamKind.LONG_CUTOFFS, (5, 10, 20))
relstring = Measure(
    "relstring", _relstring, ParamKind.DOUBLE_PARAMS, (10.0,), averaging=Averaging.NONE, fmt="'%s'", summary=False
)
