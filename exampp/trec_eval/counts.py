"""Bookkeeping measures: runid, num_q and the document counts (summed, not averaged, over queries)."""
from __future__ import annotations

from exampp.trec_eval.judged import JudgedRanking, Settings
from exampp.trec_eval.measure import Averaging, Measure, Params

# the two measures that never look at a ranking: a docid twice goes unnoticed when only they are asked for
runid = Measure("runid", lambda j, p, s: [], averaging=Averaging.RUN_NAME, fmt="%s", per_query=False,
                reads_ranking=False)

num_q = Measure("num_q", lambda j, p, s: [1], averaging=Averaging.NUM_Q, fmt="%d", per_query=False,
                reads_ranking=False)

num_ret = Measure("num_ret", lambda j, p, s: [j.num_ret], averaging=Averaging.SUM, fmt="%d")

# with -c, trec_eval's summary counts the qrels' judgments above 0, whatever -l says (m_num_rel.c)
num_rel = Measure("num_rel", lambda j, p, s: [j.num_rel], averaging=Averaging.QRELS_SUM, fmt="%d")

num_rel_ret = Measure("num_rel_ret", lambda j, p, s: [j.num_rel_ret], averaging=Averaging.SUM, fmt="%d")


def _nonrel_judged_ret(j: JudgedRanking, p: Params, s: Settings) -> list[int]:
    return [j.num_ret - j.num_nonpool - j.num_unjudged_in_pool - j.num_rel_ret]


num_nonrel_judged_ret = Measure("num_nonrel_judged_ret", _nonrel_judged_ret, averaging=Averaging.SUM, fmt="%d")
