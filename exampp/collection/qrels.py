"""Relevance judgments as data: labels per query and document (qrels), and per subtopic (intent qrels);
what a label may be.

The TREC qrels file formats, their readers and writers, are :mod:`exampp.formats.trec_qrels`.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TypeGuard

from exampp.errors import ExamppError

Label = int | float
"""A relevance label: an integer grade, or a fractional one (e.g. an EXAM label of averaged grades)."""

Qrels = dict[str, dict[str, Label]]
"""``{query_id: {docid: relevance}}``; a negative relevance means judged, unusable."""

# Measures keep one entry per grade from 0 to the highest (as trec_eval does), and pytrec_eval
# holds a grade in a C long: a grade far beyond any judging scale would exhaust memory or crash.
MAX_GRADE = 10_000


class FractionalLabelError(ExamppError, ValueError):
    """Qrels with a fractional label given to measures that count integer grades."""


def as_label(value: float) -> Label:
    """An integer-valued number as an int (written without '.0'), any other as a float.

    :param value: A relevance label.
    """
    return int(value) if isinstance(value, int) or float(value).is_integer() else float(value)


def label_problem(value: float) -> str | None:
    """Why a number cannot be a label (not finite, or beyond any judging scale), or None.

    :param value: The number.
    """
    if not isinstance(value, int) and not math.isfinite(value):  # an int of any size is finite
        return "is not a finite number"
    if abs(value) > MAX_GRADE:
        return f"is out of range (-{MAX_GRADE} to {MAX_GRADE})"
    return None


def check_integer_labels(qrels: Mapping[str, Mapping[str, Label]], measures: str) -> None:
    """Check that every label is an integer.

    :param qrels: The judgments.
    :param measures: The measures asked for, named in the message: they count relevance as integer
        grades (trec_eval's grade levels, pytrec_eval's C integers).
    :raises FractionalLabelError: Naming the first fractional label.
    """
    for qid, docs in qrels.items():
        for docid, label in docs.items():
            if not isinstance(label, int):
                raise FractionalLabelError(
                    f"{measures} take integer relevance labels; query {qid!r} docid {docid!r} has {label!r} "
                    f"(binary labels: `exampp qrels --min-grade TAU`)")


IntentQrels = dict[str, dict[str, dict[str, int]]]
"""``{query_id: {subtopic: {docid: label}}}``: relevance per subtopic (intent) of a query, for
intent-aware measures (alpha-nDCG, ERR-IA). exampp's per-question qrels number a query's exam
questions 1, 2, ... as its subtopics."""


def flatten_intent_qrels(qrels: Mapping[str, Mapping[str, Mapping[str, int]]]) -> Qrels:
    """Plain qrels from intent qrels: a document's label is its best over the query's subtopics.

    :param qrels: ``{query_id: {subtopic: {docid: label}}}``.
    """
    flat: Qrels = {}
    for qid, subtopics in qrels.items():
        docs = flat.setdefault(qid, {})
        for judged in subtopics.values():
            for docid, rel in judged.items():
                docs[docid] = max(docs.get(docid, rel), rel)
    return flat


def is_intent_qrels(qrels: Mapping[str, Mapping[str, object]]) -> TypeGuard[IntentQrels]:
    """Whether qrels are intent qrels (labels per subtopic) rather than plain ones.

    :param qrels: Qrels of either kind.
    """

    for judged in qrels.values():
        for value in judged.values():
            return isinstance(value, Mapping)
    return False
