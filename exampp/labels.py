"""EXAM labels of graded passages in four variants, and the intent-aware view of the same grades.

A passage's EXAM label summarises its grades on the query's exam questions:

- ``max``: its best grade (the EXAM++ paper's EXAM-Label);
- ``count``: how many questions it answers at grade >= tau (answering more of the exam is more
  relevant: the premise of EXAM);
- ``sum``: the sum of its grades;
- ``expected``: its best *expected* grade, sum_g g * P(grade = g), from the per-grade probabilities
  a method stores (self-rating's fast path, multiple choice). Written as integer hundredths of a
  grade, round(100 * E) (half to even), so that qrels stay integer for trec_eval, pytrec_eval and
  ir_measures: nDCG is unchanged by the scale, and a binary threshold tau reads rel=100*tau.

:func:`question_qrels` makes every exam question a subtopic of its query (intent-aware qrels for
alpha-nDCG and ERR-IA); :func:`expected_cover` is EXAM-Cover with answered-or-not replaced by its
probability. Grades are a DataFrame as :meth:`exampp.stores.grade_store.GradeStore.grades` returns them (the
expected variants need its ``probabilities`` column).
"""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import cast

import numpy as np
import pandas as pd

from exampp.collection.qrels import IntentQrels, Qrels, as_label
from exampp.collection.runs import Run
from exampp.defaults import DEPTH as DEFAULT_DEPTH, LABELS
from exampp.errors import ExamppError
from exampp.scoring import check_grades, questions_by_query, restrict_grades

PASSAGE = ["query_id", "passage_id"]


class NoProbabilities(ExamppError, ValueError):
    """Expected labels or expected cover asked of grades stored without their probabilities."""


def check_label(label: str) -> None:
    """ExamppError unless ``label`` is one of :data:`LABELS`."""
    if label not in LABELS:
        raise ExamppError(f"label {label!r}: choose one of {', '.join(LABELS)}")


def exam_labels(grades: pd.DataFrame, questions: Mapping[str, Collection[str]] | None = None, *,
                label: str = "max", tau: float | None = None) -> Qrels:
    """EXAM label of every graded passage.

    :param grades: The grades (see the module docstring; ``expected`` needs the ``probabilities`` column).
    :param questions: Each query's question ids: only these count (e.g. after a bank edit). By
        default every question graded.
    :param label: One of :data:`LABELS` (see the module docstring).
    :param tau: The grade from which a question counts as answered; needed by ``count`` only.
    :raises ValueError: ``count`` without ``tau``.
    """
    check_grades(grades)
    check_label(label)
    frame = restrict_grades(grades, questions)
    if label == "max":
        values = frame.groupby(PASSAGE, sort=True)["grade"].max()
    elif label == "sum":
        values = frame.groupby(PASSAGE, sort=True)["grade"].sum()
    elif label == "count":
        if tau is None:
            raise ValueError("label 'count' needs tau: the grade from which a question counts as answered")
        values = frame.assign(answered=frame["grade"] >= tau).groupby(PASSAGE, sort=True)["answered"].sum()
    else:
        expected = frame.assign(expected=expected_grades(frame))
        values = (expected.groupby(PASSAGE, sort=True)["expected"].max() * 100).round()
    labels: Qrels = {}
    for key, value in values.items():
        qid, pid = cast("tuple[str, str]", key)  # grouped by (query, passage)
        labels.setdefault(qid, {})[pid] = as_label(value)
    return labels


def _probabilities(grades: pd.DataFrame, what: str) -> list[tuple[float, ...]]:
    """Each row's P(grade = 0, 1, ...). A grade stored without them (self-rating's fast path falls back
    to generated text where the first token is no grade) is taken as certain; grades of a method that
    stores none at all are :class:`NoProbabilities`, naming the method."""
    if "probabilities" not in grades.columns:
        raise ValueError("grades table lacks the probabilities column: GradeStore.grades(..., probabilities=True)")
    probabilities = grades["probabilities"].tolist()
    if probabilities and all(p is None for p in probabilities):
        row = grades.iloc[0]
        method = row["method_id"] if "method_id" in grades.columns else "these grades"
        raise NoProbabilities(
            f"{what} grade probabilities, and the grades of method {method!r} carry none (e.g. "
            f"query {row['query_id']!r} passage {row['passage_id']!r}): grade with a method that stores them "
            f"(self-rating's fast path, multiple-choice)")
    return [p if p is not None else _certain(grade) for p, grade in zip(probabilities, grades["grade"].tolist())]


def _certain(grade: float) -> tuple[float, ...]:
    """The distribution of a grade known for sure: all its mass on that (integer) grade."""
    if not float(grade).is_integer() or grade < 0:
        raise NoProbabilities(f"grade {grade!r} has no probabilities and is no grade level 0, 1, ...")
    return tuple(1.0 if g == int(grade) else 0.0 for g in range(int(grade) + 1))


def expected_grades(grades: pd.DataFrame) -> np.ndarray:
    """Each row's expected grade sum_g g * P(grade = g)."""
    return np.array([float(np.dot(np.arange(len(p)), p)) for p in _probabilities(grades, "expected labels need")])


def answer_probabilities(grades: pd.DataFrame, tau: float) -> np.ndarray:
    """Each row's P(grade >= tau): the probability that the passage answers the question."""
    return np.array([float(sum(p[g] for g in range(len(p)) if g >= tau))
                     for p in _probabilities(grades, "expected cover needs")])


def exam_order(grades: pd.DataFrame, questions: Mapping[str, Sequence[str]] | None = None) -> dict[str, list[str]]:
    """Each query's exam questions in subtopic order: ``questions``' order when given, else sorted
    ids of the graded questions; question i (1-based) is subtopic i of its query."""
    if questions is not None:
        return {qid: list(ids) for qid, ids in questions.items()}
    return questions_by_query(grades)


def question_qrels(grades: pd.DataFrame, questions: Mapping[str, Sequence[str]] | None = None, *,
                   tau: float) -> IntentQrels:
    """Intent-aware qrels: every exam question is a subtopic of its query; a passage is relevant
    (label 1) to subtopic i when its grade on the query's i-th question (1-based, in
    :func:`exam_order`) is >= tau, else 0.

    :param grades: The grades (see the module docstring).
    :param questions: Each query's question ids; questions outside them are left out. By default
        every question graded.
    :param tau: The grade from which a question counts as answered.
    """
    check_grades(grades)
    order = exam_order(grades, questions)
    subtopic = {(qid, question): str(i) for qid, ids in order.items() for i, question in enumerate(ids, start=1)}
    qrels: IntentQrels = {}
    for qid, pid, question, grade in zip(grades["query_id"].tolist(), grades["passage_id"].tolist(),
                                         grades["question_id"].tolist(), grades["grade"].tolist()):
        index = subtopic.get((qid, question))
        if index is not None:
            qrels.setdefault(qid, {}).setdefault(index, {})[pid] = int(grade >= tau)
    return {qid: dict(sorted(subtopics.items(), key=lambda item: int(item[0])))
            for qid, subtopics in sorted(qrels.items())}


def expected_cover(runs: Mapping[str, Run], grades: pd.DataFrame,
                   questions: Mapping[str, Collection[str]] | None = None, *, tau: float,
                   depth: int | None = DEFAULT_DEPTH) -> pd.DataFrame:
    """Expected EXAM-Cover: columns as :func:`exampp.scoring.exam_cover` (``run, query_id, covered,
    total, cover``) with ``covered`` the expected number of the query's questions answered by the
    run's top-``depth`` passages: sum over questions of 1 - prod_p (1 - P(grade_pq >= tau)),
    grades taken as independent. A passage without a grade on a question never answers it.

    :param runs: The runs, by name.
    :param grades: The grades, with their ``probabilities`` column.
    :param questions: Each query's question ids: the exam. By default every question graded.
    :param tau: The grade from which a question counts as answered.
    :param depth: How many of each run's top passages count (None: all).
    :raises NoProbabilities: Grades of a method that stores no probabilities.
    """

    check_grades(grades)
    if questions is None:
        questions = questions_by_query(grades)
    frame = restrict_grades(grades, questions)
    frame = frame.assign(p=answer_probabilities(frame, tau))
    # P(passage answers question), per query: passage -> question -> probability
    answers: dict[str, dict[str, dict[str, float]]] = {}
    for qid, pid, question, p in zip(frame["query_id"].tolist(), frame["passage_id"].tolist(),
                                     frame["question_id"].tolist(), frame["p"].tolist()):
        answers.setdefault(qid, {}).setdefault(pid, {})[question] = p
    rows = []
    for name in sorted(runs):
        for qid in sorted(questions):
            ids = list(questions[qid])
            by_passage = answers.get(qid, {})
            missed = np.ones(len(ids))  # P(no top passage answers question i so far)
            for doc in runs[name].top(qid, depth):
                graded = by_passage.get(doc.docid)
                if graded:
                    missed *= 1.0 - np.array([graded.get(q, 0.0) for q in ids])
            covered = float(np.sum(1.0 - missed))
            rows.append((name, qid, covered, len(ids), covered / len(ids) if ids else 0.0))
    return pd.DataFrame(rows, columns=["run", "query_id", "covered", "total", "cover"])
