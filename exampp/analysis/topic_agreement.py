"""Agreement of two qrels topic by topic, then the mean over topics: the way autojudge-evaluate's
``qrel-evaluate`` computes it (``exampp agree --per-topic``).

Each topic compares the union of both sides' documents, a document one side lacks graded 0 there,
every grade clipped to its side's scale [0, max grade]. Per topic: set precision, recall and F1 of
the documents relevant on each side (grade >= its threshold; 0.0 where undefined, NaN for a topic
where neither side holds a relevant document), Jaccard (NaN when neither holds one), Cohen's κ of
the binary labels for every pair of thresholds 1 .. max grade (NaN when both sides are constant), κ
with linear weights and Krippendorff's α (ordinal) of the graded labels (NaN unless both scales have
the same max grade; κ also when both are constant), and the adjusted Rand index of the binary labels
at the thresholds. The mean skips NaN topics.

exampp's own ``agree`` pools instead every (query, document) judged on both sides into one table
(:mod:`exampp.analysis.label_agreement`): a different definition, not a rounding of this one.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from exampp.analysis.label_agreement import Labels, adjusted_rand, cohen_kappa_counts, weighted_kappa
from exampp.analysis.statistics import krippendorff_alpha

COUNTS = ("tp", "fp", "fn")
"""Columns that are counts, not averaged."""


def kappa_columns(truth_max: int, predicted_max: int) -> dict[str, tuple[int, int]]:
    """The binary κ columns: name -> (truth threshold, predicted threshold); ``kappa@1`` when both
    scales are binary, else ``kappa@{t}v{p}`` for every pair of thresholds (qrel-evaluate's names).

    :param truth_max: The truth's max grade.
    :param predicted_max: The prediction's max grade.
    """
    if truth_max == predicted_max == 1:
        return {"kappa@1": (1, 1)}
    return {f"kappa@{t}v{p}": (t, p) for t in range(1, truth_max + 1) for p in range(1, predicted_max + 1)}


def _binary_kappa(truth: np.ndarray, predicted: np.ndarray) -> float:
    if len(set(truth)) < 2 and len(set(predicted)) < 2:
        return math.nan  # no variance on either side: qrel-evaluate's NaN (κ would be 0 or undefined)
    table = np.zeros((2, 2))
    np.add.at(table, (truth.astype(int), predicted.astype(int)), 1)
    return float(cohen_kappa_counts(table))


def topic_row(truth: np.ndarray, predicted: np.ndarray, *, truth_max: int, predicted_max: int,
              truth_threshold: int = 1, predicted_threshold: int = 1) -> dict[str, float]:
    """Every measure of one topic (see the module docstring) on its aligned grade vectors.

    :param truth: The truth's grade of each document of the topic (0 where it has none), unclipped.
    :param predicted: The prediction's grades, aligned with ``truth``.
    :param truth_max: The truth's max grade (grades are clipped to [0, truth_max]).
    :param predicted_max: The prediction's max grade.
    :param truth_threshold: The truth grade from which a document is relevant.
    :param predicted_threshold: The predicted grade from which a document is relevant.
    """
    relevant_t, relevant_p = truth >= truth_threshold, predicted >= predicted_threshold
    tp, fp, fn = (int(np.sum(relevant_t & relevant_p)), int(np.sum(~relevant_t & relevant_p)),
                  int(np.sum(relevant_t & ~relevant_p)))
    if tp + fp + fn:
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    else:
        precision = recall = f1 = math.nan  # no relevant document on either side: no set to compare
    t, p = np.clip(truth, 0, truth_max), np.clip(predicted, 0, predicted_max)
    clipped_t, clipped_p = t >= truth_threshold, p >= predicted_threshold
    together = int(np.sum(clipped_t | clipped_p))
    row = {"precision": precision, "recall": recall, "f1": f1, "tp": tp, "fp": fp, "fn": fn,
           "jaccard": int(np.sum(clipped_t & clipped_p)) / together if together else math.nan}
    for name, (at_t, at_p) in kappa_columns(truth_max, predicted_max).items():
        row[name] = _binary_kappa(t >= at_t, p >= at_p)
    same_scale = truth_max == predicted_max
    constant = len(set(t)) < 2 and len(set(p)) < 2
    table = np.zeros((truth_max + 1, truth_max + 1))
    if same_scale:
        np.add.at(table, (t.astype(int), p.astype(int)), 1)
    row["kappa_w"] = float(weighted_kappa(table)) if same_scale and not constant else math.nan
    row["alpha_ordinal"] = krippendorff_alpha(np.array([t, p], dtype=float), "ordinal") if same_scale else math.nan
    row["ari"] = adjusted_rand(clipped_t, clipped_p)
    return row


def topic_agreement(truth: Labels, predicted: Labels, *, truth_max: int, predicted_max: int,
                    truth_threshold: int = 1, predicted_threshold: int = 1) -> pd.DataFrame:
    """Every measure per topic, for every topic either side judges (sorted).

    :param truth: The truth's integer grades ``{topic: {document: grade}}``.
    :param predicted: The prediction's integer grades.
    :param truth_max: The truth's max grade (grades are clipped to [0, truth_max]).
    :param predicted_max: The prediction's max grade.
    :param truth_threshold: The truth grade from which a document is relevant (>= 1).
    :param predicted_threshold: The predicted grade from which a document is relevant (>= 1).
    :returns: Index topic; columns precision, recall, f1, tp, fp, fn, jaccard, the binary κ columns
        (:func:`kappa_columns`), kappa_w, alpha_ordinal, ari.
    """
    for name, value in (("truth_threshold", truth_threshold), ("predicted_threshold", predicted_threshold),
                        ("truth_max", truth_max), ("predicted_max", predicted_max)):
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    rows = {}
    for topic in sorted(truth.keys() | predicted.keys()):
        t_docs: Mapping[str, float] = truth.get(topic, {})
        p_docs: Mapping[str, float] = predicted.get(topic, {})
        docs = sorted(t_docs.keys() | p_docs.keys())
        rows[topic] = topic_row(np.array([t_docs.get(d, 0) for d in docs]), np.array([p_docs.get(d, 0) for d in docs]),
                                truth_max=truth_max, predicted_max=predicted_max, truth_threshold=truth_threshold,
                                predicted_threshold=predicted_threshold)
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "topic"
    return table.astype({name: int for name in COUNTS})


def averaged(table: pd.DataFrame) -> list[str]:
    """The columns the mean over topics is taken of: every one but the counts.

    :param table: A :func:`topic_agreement` table.
    """
    return [column for column in table.columns if column not in COUNTS]
