"""Agreement of EXAM labels with official relevance judgments: Cohen's κ, Krippendorff's α and
confusion tables.

Only (query, docid) pairs judged in both are compared. For a threshold τ, a passage is EXAM
relevant when its EXAM grade is ≥ τ, and officially relevant when its official grade is
≥ ``rel_level`` (as trec_eval's ``-l``). The 2×2 table takes the official label as the
truth: tp = both relevant, fp = EXAM only, fn = official only, tn = neither.

Krippendorff's α takes the EXAM label and the official grade as two coders of each passage:
nominal on the 0/1 labels of a threshold (beside κ; α corrects for chance from the pooled
labels, κ from each coder's own), ordinal on the graded labels themselves.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import NamedTuple

import numpy as np
import pandas as pd

from exampp.analysis.statistics import krippendorff_alpha
from exampp.collection.qrels import Label

Labels = Mapping[str, Mapping[str, Label]]
"""qrels-like ``{query_id: {docid: grade}}``."""


class Confusion(NamedTuple):
    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn


def cohen_kappa(table: Confusion) -> float:
    """Cohen's κ = (p_o − p_e) / (1 − p_e); NaN when chance agreement is 1 (one label used by both)
    or the table is empty.

    :param table: A 2×2 table (see the module docstring).
    """
    n = table.n
    if n == 0:
        return math.nan
    observed = (table.tp + table.tn) / n
    # chance: both say relevant independently, plus both say non-relevant independently
    exam_pos, official_pos = (table.tp + table.fp) / n, (table.tp + table.fn) / n
    expected = exam_pos * official_pos + (1 - exam_pos) * (1 - official_pos)
    if expected == 1:
        return math.nan
    return (observed - expected) / (1 - expected)


def cohen_kappa_counts(tables: np.ndarray) -> np.ndarray:
    """Cohen's κ (unweighted) over k levels of each k×k count table along the last two axes (rows
    one coder, columns the other; chance from each coder's own marginals); NaN where chance
    agreement is 1 or the table is empty. :func:`cohen_kappa` is the 2×2 case of one table.

    :param tables: k×k count tables along the last two axes.
    """
    tables = np.asarray(tables, dtype=float)
    n = tables.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.trace(tables, axis1=-2, axis2=-1) / n
        expected = (tables.sum(axis=-1) * tables.sum(axis=-2)).sum(axis=-1) / n**2
        value = (observed - expected) / (1 - expected)
    return np.where((n > 0) & (expected < 1), value, math.nan)


def weighted_kappa(tables: np.ndarray) -> np.ndarray:
    """Cohen's κ with linear weights of each k×k count table along the last two axes (rows one
    coder, columns the other, levels 0 .. k−1): 1 − Σ |i−j| o_ij / Σ |i−j| e_ij, e from each coder's
    own marginals (scikit-learn's ``cohen_kappa_score(weights="linear")``); NaN where no disagreement
    is expected (each coder uses one level, the same) or the table is empty.

    :param tables: k×k count tables along the last two axes.
    """
    tables = np.asarray(tables, dtype=float)
    levels = np.arange(tables.shape[-1])
    weights = np.abs(np.subtract.outer(levels, levels))
    n = tables.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = tables.sum(axis=-1)[..., :, None] * tables.sum(axis=-2)[..., None, :] / n[..., None, None]
        observed_cost, expected_cost = (tables * weights).sum(axis=(-2, -1)), (expected * weights).sum(axis=(-2, -1))
        value = 1 - observed_cost / expected_cost
    return np.where((n > 0) & (expected_cost > 0), value, math.nan)


def adjusted_rand(first: Iterable[object], second: Iterable[object]) -> float:
    """The adjusted Rand index of two labelings of the same items (Hubert & Arabie 1985), from the
    pair confusion counts as scikit-learn's ``adjusted_rand_score`` computes it: with tp the pairs
    together in both, tn apart in both, fp and fn together in one only,
    ARI = 2 (tp·tn − fn·fp) / ((tp+fn)(fn+tn) + (tp+fp)(fp+tn)); 1.0 when fn = fp = 0 (identical
    partitions, one item included).

    :param first: One label per item.
    :param second: Another label per item, aligned with ``first``.
    """
    a, b = list(first), list(second)
    if len(a) != len(b):
        raise ValueError(f"adjusted_rand needs two labelings of the same items, got {len(a)} and {len(b)} labels")
    cells = Counter(zip(a, b))
    rows, columns = Counter(a), Counter(b)
    n = len(a)
    squares = sum(c * c for c in cells.values())
    together_both = squares - n  # ordered pairs (i ≠ j) together in both
    together_second = sum(c * columns[y] for (_, y), c in cells.items()) - squares  # in the second only
    together_first = sum(c * rows[x] for (x, _), c in cells.items()) - squares
    apart_both = n * n - together_second - together_first - squares
    tp, fp, fn, tn = together_both, together_second, together_first, apart_both
    if fn == 0 and fp == 0:
        return 1.0
    return 2 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))


def judged_pairs(exam: Labels, official: Labels) -> list[tuple[Label, Label]]:
    """``(exam grade, official grade)`` of every (query, docid) judged in both.

    :param exam: The EXAM labels.
    :param official: The official judgments.
    """
    return [
        (grade, official[qid][docid])
        for qid, docs in exam.items()
        if qid in official
        for docid, grade in docs.items()
        if docid in official[qid]
    ]


def _count(labels: Labels) -> int:
    return sum(len(docs) for docs in labels.values())


def confusion(pairs: Iterable[tuple[Label, Label]], threshold: float, rel_level: float = 1) -> Confusion:
    """2×2 counts of EXAM ``grade >= threshold`` against official ``grade >= rel_level``.

    :param pairs: ``(exam grade, official grade)`` pairs (:func:`judged_pairs`).
    :param threshold: τ: the EXAM grade from which a passage is relevant.
    :param rel_level: The official grade from which a passage is relevant.
    """
    tp = fp = fn = tn = 0
    for exam_grade, official_grade in pairs:
        exam_rel, official_rel = exam_grade >= threshold, official_grade >= rel_level
        tp += exam_rel and official_rel
        fp += exam_rel and not official_rel
        fn += official_rel and not exam_rel
        tn += not exam_rel and not official_rel
    return Confusion(tp, fp, fn, tn)


def kappa_table(
    exam: Labels, official: Labels, *, rel_level: float = 1, thresholds: Iterable[float] | None = None
) -> pd.DataFrame:
    """κ, nominal α and the 2×2 counts for each threshold τ.

    :param exam: The EXAM labels.
    :param official: The official judgments.
    :param rel_level: The lowest official grade that counts as relevant (as trec_eval's ``-l``).
    :param thresholds: The thresholds τ; by default 1 .. the highest EXAM grade, rounded up.
    :returns: Index ``tau``; columns ``kappa, alpha, tp, fp, fn, tn, n``.
    """
    pairs = judged_pairs(exam, official)
    if thresholds is None:
        top = max((grade for grade, _ in pairs), default=0)
        thresholds = range(1, max(math.ceil(top), 1) + 1)
    rows = {}
    for tau in thresholds:
        table = confusion(pairs, tau, rel_level)
        binary = np.array([[e >= tau for e, _ in pairs], [o >= rel_level for _, o in pairs]], dtype=float)
        alpha = krippendorff_alpha(binary, "nominal") if pairs else math.nan
        rows[tau] = {"kappa": cohen_kappa(table), "alpha": alpha, **table._asdict(), "n": table.n}
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=["kappa", "alpha", "tp", "fp", "fn", "tn", "n"])
    frame.index.name = "tau"
    return frame


def ordinal_alpha(exam: Labels, official: Labels) -> float:
    """Krippendorff's α (ordinal) of the EXAM label and the official grade as two coders of every
    passage judged in both (NaN when there is none, or one value throughout).

    :param exam: The EXAM labels.
    :param official: The official judgments.
    """
    pairs = judged_pairs(exam, official)
    if not pairs:
        return math.nan
    return krippendorff_alpha(np.array(pairs, dtype=float).T, "ordinal")


def graded_confusion(exam: Labels, official: Labels) -> pd.DataFrame:
    """Counts of (EXAM grade, official grade) over the pairs judged in both.

    :param exam: The EXAM labels.
    :param official: The official judgments.
    :returns: Rows: EXAM grade; columns: official grade; every grade occurring in those pairs appears.
    """

    counts = Counter(judged_pairs(exam, official))
    exam_grades = sorted({e for e, _ in counts})
    official_grades = sorted({o for _, o in counts})
    return pd.DataFrame(
        [[counts[e, o] for o in official_grades] for e in exam_grades],
        index=pd.Index(exam_grades, name="exam"),
        columns=pd.Index(official_grades, name="official"),
        dtype=int,
    )


class Overlap(NamedTuple):
    common: int
    only_exam: int
    only_official: int


def overlap(exam: Labels, official: Labels) -> Overlap:
    """How many pairs are judged in both, and how many in only one (these are not compared).

    :param exam: The EXAM labels.
    :param official: The official judgments.
    """

    common = len(judged_pairs(exam, official))
    return Overlap(common, _count(exam) - common, _count(official) - common)
