"""Binary preference: bpref and its geometric-mean variant gm_bpref (Buckley & Voorhees, SIGIR 2004)."""
from __future__ import annotations

from exampp.trec_eval.judged import UNJUDGED, JudgedRanking, Settings
from exampp.trec_eval.measure import Averaging, Measure, Params, geometric_log, ratio


def bpref_value(j: JudgedRanking, level: int) -> float:
    """Fraction of preferences (relevant above judged nonrelevant) the ranking keeps; unjudged docs skipped."""
    return j.memo(("bpref", level), lambda: _bpref_value(j, level))  # bpref and gm_bpref share it


def _bpref_value(j: JudgedRanking, level: int) -> float:
    num_nonrel = sum(j.level_count(grade) for grade in range(level))
    nonrel_so_far = 0
    bpref = 0.0
    for _, rel in j.pooled:  # an unpooled document counts for nothing
        if rel == UNJUDGED:
            continue
        if 0 <= rel < level:
            nonrel_so_far += 1
        elif nonrel_so_far > 0:
            bpref += 1.0 - ratio(min(nonrel_so_far, j.num_rel), min(num_nonrel, j.num_rel))
        else:
            bpref += 1.0
    if j.num_rel:
        bpref /= j.num_rel
    return bpref


def _bpref(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    return [bpref_value(j, s.relevance_level)]


def _gm_bpref(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    return [geometric_log(bpref_value(j, s.relevance_level))]


bpref = Measure("bpref", _bpref)
gm_bpref = Measure("gm_bpref", _gm_bpref, averaging=Averaging.GEOMETRIC, per_query=False)
