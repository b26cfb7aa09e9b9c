"""IRT response matrices from grades: systems x questions.

A system answers a question correctly when one of its top-k passages for the question's query
answers it with grade >= τ — exactly what EXAM-Cover counts, so a row's mean over one query's
questions is the system's EXAM-Cover on that query (a query the system does not answer gives 0
for all its questions).
"""
from __future__ import annotations

from collections.abc import Collection, Mapping

import numpy as np
import pandas as pd

from exampp.collection.runs import Run
from exampp.defaults import DEPTH as DEFAULT_DEPTH
from exampp.formats.response_matrix import Responses
from exampp.scoring import answered_questions, questions_by_query


def responses_from_grades(
    grades: pd.DataFrame,
    runs: Mapping[str, Run],
    questions: Mapping[str, Collection[str]] | None = None,
    *,
    tau: float = 1,
    depth: int | None = DEFAULT_DEPTH,
) -> Responses:
    """Systems x questions: 1 when one of the run's top-``depth`` passages for the question's
    query answers it with grade >= ``tau``.

    Rows are run names (sorted), columns question ids ordered by query then id.

    :param grades: The grades (as :mod:`exampp.scoring` takes them).
    :param runs: The runs, by name.
    :param questions: Each query's question ids (e.g. from the bank): the exam. By default the
        questions seen in the grades.
    :param tau: The grade from which a question counts as answered.
    :param depth: How many of each run's top passages count (None: all).
    """

    if questions is None:
        questions = questions_by_query(grades)
    question_query: dict[str, str] = {}
    for qid in sorted(questions):
        for question in sorted(questions[qid]):
            if question_query.setdefault(question, qid) != qid:
                raise ValueError(f"question id {question!r} belongs to queries {question_query[question]!r} "
                                 f"and {qid!r}")
    column = {question: j for j, question in enumerate(question_query)}
    answered = answered_questions(grades, tau)
    names = sorted(runs)
    matrix = np.zeros((len(names), len(column)))
    for i, name in enumerate(names):
        for qid in questions:
            for doc in runs[name].top(qid, depth):
                hits = [column[q] for q in answered.get((qid, doc.docid), ()) if question_query.get(q) == qid]
                matrix[i, hits] = 1.0
    frame = pd.DataFrame(matrix, index=pd.Index(names, name="system"), columns=list(column))
    return Responses(frame, None, question_query)
