"""Average-precision measures: map, gm_map, map_cut and infAP."""
from __future__ import annotations

from bisect import bisect_left

import numpy as np

from exampp.trec_eval.judged import UNJUDGED, JudgedRanking, Settings
from exampp.trec_eval.measure import Averaging, Measure, ParamKind, Params, cumulative, geometric_log, ratio
from exampp.trec_eval.precision import CUTOFFS

INFAP_EPSILON = 0.00001


def _precision_sums(j: JudgedRanking, level: int) -> tuple[list[int], list[float]]:
    """The relevant documents' ranks and ``sums[m]``: the sum of the precisions at the first
    ``m`` of them, added in rank order (the ranks between add 0 and change nothing)."""
    def compute() -> tuple[list[int], list[float]]:
        ranks = j.ranks_at_least(level)
        # int / int, as Python divides
        precisions = np.arange(1, len(ranks) + 1) / (np.array(ranks, dtype=np.int64) + 1)
        return ranks, cumulative(precisions).tolist()

    return j.memo(("precision sums", level), compute)


def average_precision(j: JudgedRanking, level: int) -> float:
    """AP over all relevant documents (unretrieved ones count 0); 0 when none is retrieved."""
    ranks, sums = _precision_sums(j, level)
    return ratio(sums[-1], j.num_rel) if ranks else 0.0


def _map(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    return [average_precision(j, s.relevance_level)]


def _gm_map(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    return [geometric_log(average_precision(j, s.relevance_level))]


def _map_cut(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    if j.num_rel == 0:
        return [0.0] * len(p.values)
    ranks, sums = _precision_sums(j, s.relevance_level)
    return [sums[bisect_left(ranks, min(k, j.num_ret))] / j.num_rel for k in p.values]


def _infap(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    """Inferred AP (Yilmaz & Aslam): precision above each relevant document estimated from the judged ones."""
    nonrel_so_far = rel_so_far = pool_unjudged_so_far = 0
    inf_ap = 0.0
    for i, rel in j.pooled:  # an unpooled document counts for nothing
        if rel == UNJUDGED:
            pool_unjudged_so_far += 1
            continue
        if 0 <= rel < s.relevance_level:
            nonrel_so_far += 1
            continue
        rel_so_far += 1
        if i == 0:
            inf_ap += 1.0
        else:
            fj = float(i)
            inf_ap += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (
                (rel_so_far - 1 + nonrel_so_far + pool_unjudged_so_far) / fj
            ) * ((rel_so_far - 1 + INFAP_EPSILON) / (rel_so_far - 1 + nonrel_so_far + 2 * INFAP_EPSILON))
    if j.num_rel:
        inf_ap /= j.num_rel
    return [inf_ap]


map = Measure("map", _map)  # noqa: A001 - trec_eval's name
gm_map = Measure("gm_map", _gm_map, averaging=Averaging.GEOMETRIC, per_query=False)
map_cut = Measure("map_cut", _map_cut, ParamKind.LONG_CUTOFFS, CUTOFFS)
infAP = Measure("infAP", _infap)
