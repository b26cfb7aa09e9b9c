"""The numpy measures (P, recall, map, map_cut, ndcg_cut, recip_rank, Rprec) equal, bit for bit,
the plain per-document loops trec_eval runs, on random rankings: relevance levels -l 0..3,
judged-only (-J), unjudged and nonpool documents, empty rankings, queries with nothing relevant."""
from __future__ import annotations

import random
from math import log2

import pytest

from exampp.trec_eval import average_precision as ap
from exampp.trec_eval import dcg, precision
from exampp.trec_eval.gains import IdealWalk, setup_gains
from exampp.trec_eval.judged import Settings, judge
from exampp.trec_eval.measure import ratio


def loop_prefix_counts(rels, level):
    counts = [0]
    for rel in rels:
        counts.append(counts[-1] + (rel >= level))
    return counts


def loop_precision_sums(rels, level):
    sums, rel_so_far = [0.0], 0
    for i, rel in enumerate(rels):
        if rel >= level:
            rel_so_far += 1
            sums.append(sums[-1] + rel_so_far / (i + 1))
        else:
            sums.append(sums[-1])
    return sums


def loop_values(j, s, cutoffs):
    """What the measures computed with Python loops before numpy."""
    level, n = s.relevance_level, j.num_ret
    counts = loop_prefix_counts(j.rels, level)
    sums = loop_precision_sums(j.rels, level)
    rel_at = [counts[min(k, n)] for k in cutoffs]
    out = {"P": [r / k for r, k in zip(rel_at, cutoffs)],
           "recall": [r / j.num_rel for r in rel_at] if j.num_rel else [0.0] * len(cutoffs),
           "map": [ratio(sums[-1], j.num_rel) if any(r >= level for r in j.rels) else 0.0],
           "map_cut": [sums[min(k, n)] / j.num_rel for k in cutoffs] if j.num_rel else [0.0] * len(cutoffs)}
    depth = min(n, j.num_rel)
    out["Rprec"] = [counts[depth] / j.num_rel if depth else 0.0]
    out["recip_rank"] = [next((1.0 / (i + 1) for i, r in enumerate(j.rels) if r >= level), 0.0)]
    gains = [0.0]
    for i, rel in enumerate(j.rels):
        gains.append(gains[-1] + rel / log2(i + 2) if rel > 0 else gains[-1])
    ideal = IdealWalk(setup_gains((), j))
    ideal_dcg = [0.0]
    while ideal.step() > 0.0 and len(ideal_dcg) <= cutoffs[-1]:
        ideal_dcg.append(ideal_dcg[-1] + ideal.gain / log2(len(ideal_dcg) + 1))
    out["ndcg_cut"] = []
    for k in cutoffs:
        top_ideal, top = ideal_dcg[min(k, len(ideal_dcg) - 1)], gains[min(k, n)]
        out["ndcg_cut"].append(top / top_ideal if top_ideal > 0.0 else top)
    return out


MEASURES = {"P": precision.P, "recall": precision.recall, "map": ap.map, "map_cut": ap.map_cut,
            "Rprec": precision.Rprec, "recip_rank": precision.recip_rank, "ndcg_cut": dcg.ndcg_cut}


@pytest.mark.parametrize("seed", range(30))
def test_numpy_measures_equal_the_loops_exactly(seed):
    rng = random.Random(seed)
    for _ in range(20):
        docs = [f"d{i}" for i in range(rng.randint(1, 3000))]
        judged = rng.sample(docs, rng.randint(0, min(len(docs), 200)))
        grades = rng.choice([[0], [0, 1], [-1, 0, 1, 2, 3], [0, 0, 0, 1, 2, 3, 4, 7]])
        qrels = {d: rng.choice(grades) for d in judged}
        ranking = rng.sample(docs, rng.randint(0, len(docs)))  # 0: nothing left (e.g. -J on unjudged docs)
        for level in (0, 1, 2, 3):
            for judged_only in (False, True):
                s = Settings(level, judged_only)
                j = judge(ranking, qrels, s)
                cutoffs = tuple(sorted(rng.sample(range(1, 3100), 4)))
                want = loop_values(j, s, cutoffs)
                for name, measure in MEASURES.items():
                    params = measure.params(",".join(map(str, cutoffs)))
                    assert measure.calc(j, params, s) == want[name], (name, level, judged_only)
                    assert all(type(v) is float for v in measure.calc(j, params, s))  # not numpy scalars
