"""The measures a human sample corrects, written over the pairs of a pool.

Every measure here is a function of a few *population totals*, each a weighted sum over the
pool's pairs of one *target* of the pair's human label: P@k at relevance level L is, per run,
Σ_d w_rd·1[y_d ≥ L] with w_rd = 1/(k·|Q|) for the run's top-k pairs; nDCG@k is, per run and
query, DCG (Σ_d disc(rank)·gain(y_d)) divided by an ideal DCG that depends on how many of the
query's pooled pairs reach each grade (Σ_d 1[y_d ≥ g]). Estimating the totals is the estimators'
job (:mod:`exampp.assess.estimators`); this module says which totals a measure needs and how it
combines them, for point estimates and bootstrap replicates alike.

Definitions follow trec_eval (``P.k``, ``ndcg_cut.k``, gain = the label, ``-c``: a query a run
does not answer scores 0) with the pool as the judged set: a pair outside the pool counts as not
relevant, so the *fully judged* value of a run is its measure on human labels of every pooled pair.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from exampp.errors import ExamppError

SUPPORTED = ("P", "nDCG")
# the TREC RAG track's nugget measures, as exampp.analysis.nugget_scores scores them
NUGGET_MEASURES = ("V_strict", "A_strict", "V", "A", "W_strict", "W")
# the track's citation-support measures, as exampp.analysis.support_scores scores them; each sentence with a
# citation is one unit, its label its citations' mean support (precision) or best support (recall)
SUPPORT_MEASURES = ("weighted_precision", "weighted_recall")


class MeasureError(ExamppError, ValueError):
    """A measure the assessment estimators cannot compute."""


@dataclass(frozen=True)
class AssessMeasure:
    """``P@k`` (relevant: human grade ≥ ``rel``) or ``nDCG@k`` (gain: the human grade), named as given."""

    name: str
    kind: str
    cutoff: int
    rel: float = 1.0

    @classmethod
    def parse(cls, name: str, rel_level: float = 1.0) -> "AssessMeasure":
        """``P@10``, ``P(rel=2)@10``, ``nDCG@10`` (ir_measures' syntax); ``rel_level`` as trec_eval's
        ``-l``, unless the name carries its own ``rel=``."""
        import ir_measures

        if name in NUGGET_MEASURES or name in SUPPORT_MEASURES:
            return cls(name, name, 0, 2.0)
        try:
            measure = ir_measures.parse_measure(name)
        except (NameError, ValueError, SyntaxError, AssertionError) as exc:
            raise MeasureError(f"unknown measure {name!r} ({exc}); the human sample corrects P@k and nDCG@k, "
                               f"the nugget measures {', '.join(NUGGET_MEASURES)} and the support measures "
                               f"{', '.join(SUPPORT_MEASURES)}") from None
        if measure.NAME not in SUPPORTED:
            raise MeasureError(f"{name}: the human sample corrects {', '.join(s + '@k' for s in SUPPORTED)} "
                               f"(means of pair labels, and nDCG by its ratio); not {measure.NAME}")
        cutoff = measure.params.get("cutoff")
        if not isinstance(cutoff, int) or cutoff < 1:
            raise MeasureError(f"{name}: give a cutoff, e.g. {measure.NAME}@10")
        if measure.NAME == "nDCG" and set(measure.params) - {"cutoff"}:
            raise MeasureError(f"{name}: nDCG takes only a cutoff here (its gain is the human grade)")
        rel = float(measure.params.get("rel", rel_level))
        return cls(name, measure.NAME, cutoff, rel)


def discount(cutoff: int) -> np.ndarray:
    """1/log2(i + 1) for ranks i = 1..cutoff."""
    return 1.0 / np.log2(np.arange(2, cutoff + 2))


@dataclass(frozen=True)
class Target:
    """A transformation of a pair's human label that totals sum: ``binary`` 1[y ≥ level], or
    ``gain`` scale·max(y, 0)."""

    kind: str
    level: float = 0.0
    scale: float = 1.0

    def of(self, labels: np.ndarray) -> np.ndarray:
        if self.kind == "binary":
            return (labels >= self.level).astype(float)
        return self.scale * np.maximum(labels, 0.0)


@dataclass(frozen=True)
class Layout:
    """The pool's pairs as the measures see them. ``rankings[r][q]``: the pair indices a run ranks for
    a query, best first (at most the largest cutoff); ``query_of[d]``: the query index of pair d."""

    runs: tuple[str, ...]
    queries: tuple[str, ...]
    query_of: np.ndarray
    rankings: tuple[tuple[np.ndarray, ...], ...]
    importance: np.ndarray | None = None  # nugget pairs: each nugget's weight, 1 vital, 0.5 okay
    shares: np.ndarray | None = None  # support units: each sentence's weight in its run's measure

    @property
    def n_pairs(self) -> int:
        return len(self.query_of)


@dataclass(frozen=True)
class Totals:
    """The totals one measure needs: ``matrix`` (totals x pairs) and the target each row sums."""

    matrix: sparse.csr_matrix
    targets: tuple[Target, ...]  # one per row


def measure_totals(measure: AssessMeasure, layout: Layout, levels: np.ndarray) -> Totals:
    """The rows for ``measure``: P@k one per run; nDCG@k one DCG per run and query, then one count
    of pairs at grade ≥ g per query and grade level g in ``levels`` (the scale's levels above 0)."""
    n_runs, n_queries = len(layout.runs), len(layout.queries)
    rows: list[int] = []
    cols: list[int] = []
    values: list[float] = []
    if measure.kind in NUGGET_MEASURES:
        return _nugget_totals(measure, layout)
    if measure.kind in SUPPORT_MEASURES:
        return _support_totals(measure, layout)
    if measure.kind == "P":
        weight = 1.0 / (measure.cutoff * n_queries)
        for r, per_query in enumerate(layout.rankings):
            for ranked in per_query:
                top = ranked[:measure.cutoff]
                rows.extend([r] * len(top))
                cols.extend(top)
                values.extend([weight] * len(top))
        matrix = sparse.csr_matrix((values, (rows, cols)), shape=(n_runs, layout.n_pairs))
        return Totals(matrix, (Target("binary", measure.rel),) * n_runs)
    disc = discount(measure.cutoff)
    for r, per_query in enumerate(layout.rankings):
        for q, ranked in enumerate(per_query):
            top = ranked[:measure.cutoff]
            rows.extend([r * n_queries + q] * len(top))
            cols.extend(top)
            values.extend(disc[:len(top)])
    base = n_runs * n_queries
    for q in range(n_queries):
        members = np.flatnonzero(layout.query_of == q)
        for g in range(len(levels)):
            rows.extend([base + q * len(levels) + g] * len(members))
            cols.extend(members)
            values.extend([1.0] * len(members))
    matrix = sparse.csr_matrix((values, (rows, cols)), shape=(base + n_queries * len(levels), layout.n_pairs))
    targets = (Target("gain"),) * base + tuple(Target("binary", float(level)) for _ in range(n_queries)
                                               for level in levels)
    return Totals(matrix, targets)


def _nugget_totals(measure: AssessMeasure, layout: Layout) -> Totals:
    """One row per run: the mean over the topics it answered of its answer's share of the topic's
    (vital, for V) nuggets supported (strict: support only; else partial support counts half;
    W: weighted by importance), as :func:`exampp.analysis.nugget_scores.answer_scores` scores an answer."""
    if layout.importance is None:
        raise MeasureError(f"{measure.name} is a nugget measure: it needs nugget pairs")
    rows: list[int] = []
    cols: list[int] = []
    values: list[float] = []
    for r, per_query in enumerate(layout.rankings):
        answered = [pairs for pairs in per_query if len(pairs)]
        for pairs in answered:
            weight = layout.importance[pairs]
            if measure.kind.startswith("V"):
                weight = (weight == 1.0).astype(float)
            elif not measure.kind.startswith("W"):
                weight = np.ones(len(pairs))
            if weight.sum() == 0:
                continue  # a score over no nuggets is 0
            rows.extend([r] * len(pairs))
            cols.extend(pairs)
            values.extend(weight / weight.sum() / len(answered))
    matrix = sparse.csr_matrix((values, (rows, cols)), shape=(len(layout.runs), layout.n_pairs))
    strict = measure.kind.endswith("_strict")
    return Totals(matrix, (Target("binary", 2.0) if strict else Target("gain", scale=0.5),) * len(layout.runs))


def _support_totals(measure: AssessMeasure, layout: Layout) -> Totals:
    """One row per run: Σ share·weight over its sentences, the weight of a support label 0/1/2 being
    0/0.5/1 (:data:`exampp.analysis.support_scores.WEIGHT`); the shares (:func:`exampp.assess.population.
    support_population`) make it the run's mean over its answers of weighted precision or recall."""
    if layout.shares is None:
        raise MeasureError(f"{measure.name} is a citation-support measure: it needs the judge's support file "
                           "(--support)")
    rows = np.repeat(np.arange(len(layout.runs)), [sum(len(p) for p in q) for q in layout.rankings])
    cols = np.concatenate([p for q in layout.rankings for p in q] or [np.zeros(0, dtype=int)])
    matrix = sparse.csr_matrix((layout.shares[cols], (rows, cols)), shape=(len(layout.runs), layout.n_pairs))
    return Totals(matrix, (Target("gain", scale=0.5),) * len(layout.runs))


def measure_values(measure: AssessMeasure, layout: Layout, levels: np.ndarray, totals: np.ndarray,
                   known: np.ndarray | None = None) -> np.ndarray:
    """The measure of every run from its totals: ``totals`` (rows of :func:`measure_totals`, replicates)
    -> (runs, replicates). Estimated totals can be impossible; nDCG keeps them possible: each query's
    count at grade ≥ g is at least ``known`` (queries x levels: the labelled pairs seen at that grade)
    and each query's nDCG lies in [0, 1]."""
    if measure.kind != "nDCG":
        return totals
    n_runs, n_queries = len(layout.runs), len(layout.queries)
    base = n_runs * n_queries
    dcg = totals[:base].reshape(n_runs, n_queries, -1)
    counts = totals[base:].reshape(n_queries, len(levels), -1)
    counts = np.maximum(counts, 0.0 if known is None else known[:, :, None])
    ideal = _ideal_dcg(counts, np.diff(np.concatenate([[0.0], levels])), discount(measure.cutoff))
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(ideal[None] > 0, np.clip(dcg / ideal[None], 0.0, 1.0), 0.0)
    return ratio.mean(axis=1)


def _ideal_dcg(counts: np.ndarray, steps: np.ndarray, disc: np.ndarray) -> np.ndarray:
    """Ideal DCG@k of each query and replicate from C_g, the number of pairs at grade ≥ g (fractional
    where estimated): the i-th best gain is Σ_g step_g·1[C_g ≥ i], so IDCG = Σ_g step_g·D(min(k, C_g))
    with D(c) = Σ_{i ≤ c} disc(i), linear between integers."""
    cumulative = np.concatenate([[0.0], np.cumsum(disc)])
    c = np.minimum(counts, len(disc))
    whole = np.floor(c).astype(int)
    frac = c - whole
    nxt = np.where(whole < len(disc), disc[np.minimum(whole, len(disc) - 1)], 0.0)
    partial = cumulative[whole] + frac * nxt
    return (partial * steps[None, :, None]).sum(axis=1)


def run_weights(measure: AssessMeasure, layout: Layout) -> sparse.csr_matrix:
    """(runs x pairs): each pair's weight in each run's measure, for the sampling design (nDCG: the
    discount over the number of queries, the ideal DCG taken as 1)."""
    totals = measure_totals(measure, layout, np.ones(0))
    if measure.kind != "nDCG":
        return totals.matrix
    n_runs, n_queries = len(layout.runs), len(layout.queries)
    collapse = sparse.kron(sparse.eye(n_runs), np.ones((1, n_queries)) / n_queries)
    return sparse.csr_matrix(collapse @ totals.matrix[:n_runs * n_queries])


def known_counts(layout: Layout, levels: np.ndarray, sampled: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(queries x levels): how many labelled pairs of each query reach each grade level (their
    assessors' mean grade)."""
    counts = np.zeros((len(layout.queries), len(levels)))
    queries = layout.query_of[sampled]
    for g, level in enumerate(levels):
        np.add.at(counts[:, g], queries, (labels >= level).astype(float))
    return counts


def grade_levels(labels: np.ndarray) -> np.ndarray:
    """The grade levels above 0 of a human scale, as seen in ``labels`` (integers 1..max)."""
    top = int(math.ceil(float(np.max(labels, initial=0.0))))
    return np.arange(1, max(top, 1) + 1, dtype=float)
