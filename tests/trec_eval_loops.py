"""trec_eval's measures as its C code runs them: a plain loop over every rank (these were
exampp's own implementations before the measures learnt to walk only the pooled documents).
tests/test_trec_eval_vectorised.py checks the product against them, bit for bit."""
from __future__ import annotations

from collections.abc import Sequence
from math import log2

from exampp.trec_eval.gains import Level, setup_gains
from exampp.trec_eval.interpolated import lround
from exampp.trec_eval.judged import NONPOOL, UNJUDGED, JudgedRanking, Settings
from exampp.trec_eval.measure import Params, c_log2, ratio
from exampp.trec_eval.rbp import _persistence

MIN_COST = 1.0
INFAP_EPSILON = 0.00001

def gain_of(grade: int, levels: Sequence[Level]) -> float:
    for level in levels:
        if level.grade == grade:
            return level.gain
    return 0.0


class IdealWalk:
    """The ideal ranking's gains, rank by rank: highest gain first, each level as often as judged.

    Mirrors the ``cur_level`` / ``num_at_level`` bookkeeping the graded measures share; ``gain``
    is the ideal gain at the current rank, 0 once every level is used up.
    """

    def __init__(self, levels: Sequence[Level]):
        self._levels = levels
        self._cur = len(levels) - 1
        self._num_at_level = 0
        self.gain = levels[self._cur].gain if self._cur >= 0 else 0.0

    def step(self) -> float:
        self._num_at_level += 1
        while self._cur >= 0 and self._num_at_level > self._levels[self._cur].count:
            self._num_at_level = 1
            self._cur -= 1
            self.gain = self._levels[self._cur].gain if self._cur >= 0 else 0.0
        return self.gain


def _dcg_and_ideal(j: JudgedRanking, p: Params) -> tuple[float, float]:
    levels = setup_gains(p.values, j)
    ideal = IdealWalk(levels)
    results_dcg = ideal_dcg = 0.0
    i = 0
    while i < j.num_ret or ideal.gain > 0.0:
        if i < j.num_ret:
            gain = gain_of(j.rels[i], levels)
            if gain != 0:
                results_dcg += gain / log2(i + 2)
        if ideal.gain > 0.0 and ideal.step() > 0.0:
            ideal_dcg += ideal.gain / log2(i + 2)
        i += 1
    return results_dcg, ideal_dcg


def _ndcg_rel(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    """nDCG averaged over the ranks of the relevant (positive gain) documents; unretrieved ones
    take the nDCG at the end of the ranking."""
    levels = setup_gains(p.values, j)
    ideal = IdealWalk(levels)
    results_dcg = ideal_dcg = total = 0.0
    num_rel = num_rel_ret = 0
    i = 0
    while i < j.num_ret or ideal.gain > 0.0:
        gain = 0.0
        if i < j.num_ret:
            gain = gain_of(j.rels[i], levels)
            if gain != 0:
                results_dcg += gain / log2(i + 2)
        if ideal.gain > 0.0 and ideal.step() > 0.0:
            num_rel += 1
            ideal_dcg += ideal.gain / log2(i + 2)
        if gain > 0:
            total += ratio(results_dcg, ideal_dcg)
            num_rel_ret += 1
        i += 1
    total += ratio((num_rel - num_rel_ret) * results_dcg, ideal_dcg)
    return [total / num_rel if total > 0.0 else 0.0]


def _rndcg(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    """nDCG averaged at the R-levels: the ranks where the ideal ranking's gain drops."""
    if j.num_rel == 0:
        return [0.0]
    levels = setup_gains(p.values, j)
    ideal = IdealWalk(levels)
    old_ideal_gain = ideal.gain
    results_dcg = ideal_dcg = total = 0.0
    num_changes = 0
    i = 0
    while i < j.num_ret and ideal.gain > 0.0:
        gain = gain_of(j.rels[i], levels)
        if ideal.step() != old_ideal_gain:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                num_changes += 1
            old_ideal_gain = ideal.gain
        if gain != 0:
            results_dcg += gain / log2(i + 2)
        if ideal.gain > 0.0:
            ideal_dcg += ideal.gain / log2(i + 2)
        i += 1
    if i < j.num_ret:
        for i in range(i, j.num_ret):
            gain = gain_of(j.rels[i], levels)
            if gain != 0:
                results_dcg += gain / log2(i + 2)
        i = j.num_ret
        if ideal_dcg > 0.0:
            total += results_dcg / ideal_dcg
            num_changes += 1
    while ideal.gain > 0.0:
        if ideal.step() != old_ideal_gain:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                num_changes += 1
            old_ideal_gain = ideal.gain
        if ideal.gain > 0.0:
            ideal_dcg += ideal.gain / log2(i + 2)
        i += 1
    return [ratio(total, num_changes)]


def _g(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    levels = setup_gains(p.values, j)
    ideal = IdealWalk(levels)
    results_g = sum_results = sum_ideal = sum_cost = 0.0
    i = 0
    while i < j.num_ret or ideal.gain > 0.0:
        if ideal.gain > 0.0:
            ideal_gain = ideal.step()
            if ideal_gain > 0.0:
                sum_ideal += ideal_gain
            cost = ideal_gain if ideal_gain >= MIN_COST else MIN_COST
        else:
            cost = MIN_COST
        if i < j.num_ret:
            gain = gain_of(j.rels[i], levels)
            sum_results += gain
            sum_cost += cost
            if gain != 0:
                results_g += ratio(gain, c_log2(2 + sum_cost - sum_results))  # negative gains reach log2 <= 0
        i += 1
    return [results_g / sum_ideal if sum_ideal > 0.0 else 0.0]


def _bin_g(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    rel_so_far = 0
    total = 0.0
    for i, rel in enumerate(j.rels):
        if rel >= s.relevance_level:
            rel_so_far += 1
            total += 1.0 / log2(3 + i - rel_so_far)
    return [ratio(total, j.num_rel) if rel_so_far else 0.0]


def _rbp(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    persistence = _persistence(p)
    levels = setup_gains(p.values, j)
    # gains outside [0, 1] are rescaled to it (min-max over the levels)
    gains = [level.gain for level in levels]
    low, high = min(gains, default=0.0), max(gains, default=0.0)
    if low < 0 or high > 1:
        for level in levels:
            level.gain = ratio(level.gain - low, high - low)
    total = 0.0
    weight = 1.0
    for rel in j.rels:
        gain = gain_of(rel, levels)
        if gain != 0:
            total += gain * weight
        weight *= persistence
    return [(1.0 - persistence) * total]


def _rbp_resid(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    """The most RBP could still grow if every unjudged document (and every rank below) were relevant.
    Only ``p=`` of its parameters counts (gains do not)."""
    persistence = _persistence(p)
    unjudged = 0
    total = 0.0
    weight = 1.0
    for rel in j.rels:
        if rel < 0:
            unjudged += 1
            total += weight
        weight *= persistence
    return [weight + (1 - persistence) * total if unjudged else 0.0]


def interpolated_precisions(j: JudgedRanking, recall_levels: Sequence[float], level: int) -> list[float]:
    """Interpolated precision at each recall level (levels in the order given)."""
    cutoffs = [lround(r * j.num_rel) for r in recall_levels]
    values = [0.0] * len(cutoffs)
    cut = len(cutoffs) - 1
    while cut >= 0 and cutoffs[cut] > j.num_rel_ret:
        cut -= 1
    # walk up from the bottom, keeping the best precision seen at or below each rank
    int_precis = ratio(j.num_rel_ret, j.num_ret)
    rel_so_far = j.num_rel_ret
    i = j.num_ret
    while i > 0 and rel_so_far > 0:
        precis = rel_so_far / i
        if int_precis < precis:
            int_precis = precis
        if j.rels[i - 1] >= level:
            while cut >= 0 and rel_so_far == cutoffs[cut]:
                values[cut] = int_precis
                cut -= 1
            rel_so_far -= 1
        i -= 1
    while cut >= 0:
        values[cut] = int_precis
        cut -= 1
    return values


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


def _unj(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    counts = [0]
    for rel in j.rels:
        counts.append(counts[-1] + (rel in (NONPOOL, UNJUDGED)))
    return [counts[min(k, j.num_ret)] / k for k in p.values]


def bpref_value(j: JudgedRanking, level: int) -> float:
    """Fraction of preferences (relevant above judged nonrelevant) the ranking keeps; unjudged docs skipped."""
    num_nonrel = sum(j.level_count(grade) for grade in range(level))
    nonrel_so_far = 0
    bpref = 0.0
    for rel in j.rels:
        if rel in (NONPOOL, UNJUDGED):
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


def _infap(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    """Inferred AP (Yilmaz & Aslam): precision above each relevant document estimated from the judged ones."""
    nonrel_so_far = rel_so_far = pool_unjudged_so_far = 0
    inf_ap = 0.0
    for i, rel in enumerate(j.rels):
        if rel == NONPOOL:
            continue
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
