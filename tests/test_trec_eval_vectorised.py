"""The measures that walk only the relevant, pooled or gain-holding ranks (numpy, bisection,
memoised gains) equal, bit for bit, the plain per-document loops trec_eval runs
(``trec_eval_loops``), on random rankings: relevance levels -l -2..3, judged-only (-J),
unjudged and nonpool documents, empty rankings, queries with nothing relevant, gain maps with
negative, fractional and grade -1 gains, unsorted parameters."""
from __future__ import annotations

import random
import struct
from math import log2

import pytest

import trec_eval_loops as loops
from exampp.trec_eval import (
    average_precision as ap,
    bpref,
    dcg,
    interpolated,
    normalized_gain,
    precision,
    rbp,
    unjudged,
)
from exampp.trec_eval.gains import setup_gains
from exampp.trec_eval.judged import Settings, judge
from exampp.trec_eval.measure import ratio
from trec_eval_loops import IdealWalk


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


@pytest.mark.slow
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


def _bits(values) -> list:
    """Floats by their bits (NaN's sign and -0.0 included), other values as they are."""
    return [struct.pack("<d", v) if isinstance(v, float) else v for v in values]


def _ndcg_from(dcg_and_ideal):
    results, ideal = dcg_and_ideal
    return [results / ideal if ideal > 0.0 else 0.0]


# measure -> the loop it replaced (j, params, settings) -> values
LOOPS = {
    dcg.ndcg: lambda j, p, s: _ndcg_from(loops._dcg_and_ideal(j, p)),
    dcg.dcg: lambda j, p, s: [loops._dcg_and_ideal(j, p)[0]],
    dcg.ideal_dcg: lambda j, p, s: [loops._dcg_and_ideal(j, p)[1]],
    dcg.ndcg_rel: loops._ndcg_rel,
    dcg.Rndcg: loops._rndcg,
    normalized_gain.G: loops._g,
    normalized_gain.binG: loops._bin_g,
    rbp.rbp: loops._rbp,
    rbp.rbp_resid: loops._rbp_resid,
    interpolated.iprec_at_recall: lambda j, p, s: loops.interpolated_precisions(j, p.values, s.relevance_level),
    precision.Rprec_mult: loops._rprec_mult,
    unjudged.unj: loops._unj,
    bpref.bpref: lambda j, p, s: [loops.bpref_value(j, s.relevance_level)],
    ap.infAP: loops._infap,
}


def _gain_map(rng: random.Random) -> str | None:
    """None (the defaults) or a random gain map: grades -2..5, gains negative, 0, fractional, large."""
    if rng.random() < 0.3:
        return None
    pairs = [f"{rng.randint(-2, 5)}={rng.choice([0, 1, 2, 3, -1, 0.5, 1.5, 2.25, 7, -0.75, 10])}"
             for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.3:
        pairs.append(f"p={rng.choice([0.5, 0.8, 0.95, 1.0])}")
    return ",".join(pairs)


def _params_text(measure, rng: random.Random) -> str | None:
    if measure in (interpolated.iprec_at_recall, precision.Rprec_mult):
        values = rng.sample([0.0, 0.1, 0.25, 0.5, 0.7, 1.0, 1.2, 2.0, 3.5], rng.randint(1, 5))
        return ",".join(map(str, values)) if rng.random() < 0.7 else None  # unsorted as given
    if measure is unjudged.unj:
        return ",".join(map(str, sorted(rng.sample(range(1, 400), 3))))
    if measure.param_kind.name == "PAIR_PARAMS":
        return _gain_map(rng)
    return None


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(40))
def test_sparse_measures_equal_the_loops_bit_for_bit(seed):
    rng = random.Random(1000 + seed)
    for _ in range(12):
        docs = [f"d{i}" for i in range(rng.randint(1, 400))]
        judged = rng.sample(docs, rng.randint(0, min(len(docs), 60)))
        grades = rng.choice([[0], [0, 1], [-1, 0, 1, 2, 3], [0, 0, 0, 1, 2, 3, 4, 7], [-2, -1, 0, 2]])
        qrels = {d: rng.choice(grades) for d in judged}
        ranking = rng.sample(docs, rng.randint(0, len(docs)))
        for level in (-2, -1, 0, 1, 2, 3):
            for judged_only in (False, True):
                s = Settings(level, judged_only)
                j = judge(ranking, qrels, s)  # one ranking for all measures: its memo is shared
                for measure, loop in LOOPS.items():
                    params = measure.params(_params_text(measure, rng))
                    got = measure.calc(j, params, s)
                    want = loop(judge(ranking, qrels, s), params, s)
                    assert _bits(got) == _bits(want), (measure.name, params.values, level, judged_only)
                    assert all(type(v) is float for v in got), measure.name  # not numpy scalars
