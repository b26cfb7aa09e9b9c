"""The bank review's tables (:mod:`exampp.api.bank_review` reads the workspace and writes them): per
question its counts and flags, the questions too broad and unanswered, the gaps, and the extracted
answers grouped. Pure functions of the grades, the exam and the official judgments.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from exampp.collection.qrels import Qrels
from exampp.report.records import table_rows

UNANSWERED, TOO_BROAD = "unanswered", "too-broad"  # the flags of the questions table
NO_ANSWER = "(no answer)"  # the group of empty and unanswerable extracted answers
EXAMPLES = 3  # passage ids shown per too-broad question and per answer group

QUESTION_COLUMNS = ["query_id", "question_id", "text"]
TOO_BROAD_COLUMNS = QUESTION_COLUMNS + ["non_relevant", "relevant", "precision", "answered", "graded",
                                        "non_relevant_examples"]
UNANSWERED_COLUMNS = QUESTION_COLUMNS + ["graded", "best_grade"]
GAP_COLUMNS = ["query_id", "passage_id", "official", "best_grade", "best_question", "best_question_text", "text"]
ANSWER_COLUMNS = ["query_id", "question_id", "question", "answer", "normalized", "count", "answered", "passages"]


class ReviewTables(NamedTuple):
    """The bank review's tables (see :class:`~exampp.report.bank_review_page.BankReview`), the gaps'
    ``text`` still empty.

    :ivar questions: Every exam question with its counts and flags (:func:`question_summary`).
    :ivar too_broad: The questions flagged too broad (:func:`too_broad`); empty without judgments.
    :ivar gaps: The relevant passages no question catches (:func:`gaps`); empty without judgments.
    :ivar answers: The extracted answers grouped (:func:`group_answers`); empty when not grouped.
    :ivar relevant_ungraded: Officially relevant passages of the exam's queries not graded
        (:func:`relevant_ungraded`; 0 without judgments).
    """

    questions: pd.DataFrame
    too_broad: pd.DataFrame
    gaps: pd.DataFrame
    answers: pd.DataFrame
    relevant_ungraded: int

    def named_passages(self) -> set[str]:
        """The passages the tables name: the gaps and the too-broad questions' examples."""
        return set(self.gaps["passage_id"]) | {pid for ids in self.too_broad["non_relevant_examples"]
                                               for pid in ids.split()}


def review_tables(grades: pd.DataFrame, questions: pd.DataFrame, judgments: Qrels | None, tau: float,
                  rel_level: float = 1, *, group: bool = True) -> ReviewTables:
    """The bank review's tables of one method's grades.

    :param grades: The stored grades (of any questions: those of the exam are kept).
    :param questions: The exam: ``query_id, question_id, text`` in bank order.
    :param judgments: Official qrels; None: no too-broad questions and no gaps.
    :param tau: The grade at which a question counts as answered.
    :param rel_level: The official grade from which a passage is relevant.
    :param group: Group the extracted answers (for a method that keeps them: :func:`answers_note`).
    """
    exam = exam_grades(grades, questions, judgments)
    summary = question_summary(exam, questions, tau, rel_level)
    answers = group_answers(exam, questions, tau) if group else _empty(ANSWER_COLUMNS)
    if judgments is None:
        return ReviewTables(summary, _empty(TOO_BROAD_COLUMNS), _empty(GAP_COLUMNS), answers, 0)
    return ReviewTables(summary, too_broad(summary, exam, tau, rel_level), gaps(exam, questions, tau, rel_level),
                        answers, relevant_ungraded(exam, judgments, summary["query_id"].unique(), rel_level))


def exam_grades(grades: pd.DataFrame, questions: pd.DataFrame, judgments: Qrels | None = None) -> pd.DataFrame:
    """The grades of the exam's questions (the store may hold grades of questions since removed),
    with ``order``: the question's place in the exam, for ties and bank order.

    :param grades: The stored grades.
    :param questions: The exam: ``query_id, question_id, text`` in bank order.
    :param judgments: Official qrels: adds ``official``, the passage's official grade
        (:func:`official_labels`), looked up once here.
    """
    order = questions[["query_id", "question_id"]].assign(order=np.arange(len(questions)))
    graded = grades.merge(order, on=["query_id", "question_id"], how="inner")
    return graded if judgments is None else graded.assign(official=official_labels(graded, judgments))


def official_labels(grades: pd.DataFrame, judgments: Qrels) -> pd.Series:
    """Each grade's passage's official grade (NaN where unjudged).

    :param grades: The grades.
    :param judgments: The official qrels.
    """
    return pd.Series([judgments.get(q, {}).get(p, np.nan) for q, p in zip(grades["query_id"], grades["passage_id"])],
                     index=grades.index, dtype=float)


def question_summary(grades: pd.DataFrame, questions: pd.DataFrame, tau: float, rel_level: float = 1) -> pd.DataFrame:
    """Per exam question: passages ``graded``, ``answered`` (grade ≥ ``tau``), ``best_grade``; where the
    grades carry ``official`` also how many answering passages are officially ``relevant``,
    ``non_relevant``, ``unjudged``, and ``precision`` = relevant / (relevant + non_relevant); then
    ``flags``.

    :param grades: The exam's grades (:func:`exam_grades`, with judgments for the official counts).
    :param questions: The exam: ``query_id, question_id, text`` in bank order.
    :param tau: The grade at which a question counts as answered.
    :param rel_level: The official grade from which a passage is relevant.
    """
    has_official = "official" in grades
    g = grades.assign(answered=grades["grade"] >= tau)
    keys = ["query_id", "question_id"]
    columns = {"graded": ("grade", "size"), "answered": ("answered", "sum"), "best_grade": ("grade", "max")}
    if has_official:
        label = g["official"]
        g = g.assign(relevant=g["answered"] & (label >= rel_level), non_relevant=g["answered"] & (label < rel_level))
        columns.update(relevant=("relevant", "sum"), non_relevant=("non_relevant", "sum"))
    per = g.groupby(keys).agg(**columns).reset_index() if len(g) else pd.DataFrame(columns=keys + list(columns))
    table = questions[QUESTION_COLUMNS].merge(per, on=keys, how="left")
    counts = [c for c in columns if c != "best_grade"]
    table[counts] = table[counts].fillna(0).astype(int)
    table["best_grade"] = table["best_grade"].astype(float)
    if has_official:
        table["unjudged"] = table["answered"] - table["relevant"] - table["non_relevant"]
        judged = table["relevant"] + table["non_relevant"]
        table["precision"] = (table["relevant"] / judged.where(judged > 0)).astype(float)
    flags = [[flag for flag, on in ((UNANSWERED, row.answered == 0),
                                    (TOO_BROAD, has_official and row.non_relevant > row.relevant)) if on]
             for row in table_rows(table)]
    return table.assign(flags=[",".join(f) for f in flags])


def too_broad(summary: pd.DataFrame, grades: pd.DataFrame, tau: float, rel_level: float = 1,
              examples: int = EXAMPLES) -> pd.DataFrame:
    """The questions flagged too broad, most non-relevant answering passages first, then lowest
    precision, then bank order; with examples of those non-relevant passages (highest grade first,
    then by id).

    :param summary: :func:`question_summary` with judgments.
    :param grades: The exam's grades with ``official`` (:func:`exam_grades` with judgments).
    :param tau: The grade at which a question counts as answered.
    :param rel_level: The official grade from which a passage is relevant.
    :param examples: How many non-relevant passages to show per question, at most.
    """
    broad = summary[summary["flags"].str.split(",").map(lambda flags: TOO_BROAD in flags)]
    broad = broad.assign(order=broad.index).sort_values(["non_relevant", "precision", "order"],
                                                        ascending=[False, True, True], kind="stable")
    wrong = grades[(grades["grade"] >= tau) & (grades["official"] < rel_level)]
    wrong = wrong.sort_values(["grade", "passage_id"], ascending=[False, True], kind="stable")
    shown = wrong.groupby(["query_id", "question_id"])["passage_id"].agg(lambda ids: " ".join(ids.iloc[:examples]))
    broad["non_relevant_examples"] = [shown.get((q, question), "")
                                      for q, question in zip(broad["query_id"], broad["question_id"])]
    return broad[TOO_BROAD_COLUMNS].reset_index(drop=True)


def unanswered(summary: pd.DataFrame) -> pd.DataFrame:
    """The questions that no graded passage answers, in bank order.

    :param summary: :func:`question_summary`.
    """
    return summary[summary["answered"] == 0][UNANSWERED_COLUMNS].reset_index(drop=True)


def gaps(grades: pd.DataFrame, questions: pd.DataFrame, tau: float, rel_level: float = 1) -> pd.DataFrame:
    """Officially relevant passages graded for their query whose best grade over the query's questions
    is below ``tau``: :data:`GAP_COLUMNS` (``text`` empty; the job fills it), highest official grade
    first, then lowest best grade, then query and passage id.

    :param grades: The exam's grades with ``order`` and ``official`` (:func:`exam_grades` with
        judgments): of equally graded questions, the first in the bank is best.
    :param questions: The exam: ``query_id, question_id, text`` in bank order.
    :param tau: The grade at which a question counts as answered.
    :param rel_level: The official grade from which a passage is relevant.
    """
    if grades.empty:
        return _empty(GAP_COLUMNS)
    best = (grades.sort_values(["query_id", "passage_id", "grade", "order"], ascending=[True, True, False, True],
                               kind="stable")
            .drop_duplicates(["query_id", "passage_id"]))
    gap = best[(best["official"] >= rel_level) & (best["grade"] < tau)]
    texts = questions.set_index(["query_id", "question_id"])["text"]
    gap = gap.assign(official=_integral(gap["official"]), best_grade=_integral(gap["grade"]),
                     best_question=gap["question_id"],
                     best_question_text=[texts.get((q, question), "")
                                         for q, question in zip(gap["query_id"], gap["question_id"])],
                     text="")
    gap = gap.sort_values(["official", "best_grade", "query_id", "passage_id"], ascending=[False, True, True, True],
                          kind="stable")
    return gap[GAP_COLUMNS].reset_index(drop=True)


def relevant_ungraded(grades: pd.DataFrame, judgments: Qrels, query_ids: Iterable[str], rel_level: float = 1) -> int:
    """How many officially relevant passages of some queries have no grade (were not pooled).

    :param grades: The grades.
    :param judgments: The official qrels.
    :param query_ids: The queries.
    :param rel_level: The official grade from which a passage is relevant.
    """
    graded = set(zip(grades["query_id"], grades["passage_id"]))
    return sum(1 for q in query_ids for pid, label in judgments.get(q, {}).items()
               if label >= rel_level and (q, pid) not in graded)


def answer_methods() -> list[str]:
    """The grading methods whose stored ``answer`` is an answer to the question (checked against a key)."""
    from exampp.grading.registry import methods

    return [name for name, cls in methods().items() if {"answers", "choices"} & set(cls.needs)]


def answers_note(method_id: str) -> str | None:
    """None when a method's grades keep extracted answers, else why there are none to group.

    :param method_id: The grading method's id in the store.
    """
    from exampp.grading.registry import stored_method

    known = stored_method(method_id)
    if known is not None and known.name in answer_methods():
        return None
    kind = "is not known here" if known is None else f"({known.name}) keeps no extracted answers"
    return (f"{method_id} {kind}: answers are grouped for methods that extract one "
            f"({', '.join(answer_methods())})")


def group_answers(grades: pd.DataFrame, questions: pd.DataFrame, tau: float, examples: int = EXAMPLES) -> pd.DataFrame:
    """Each question's extracted answers grouped by their normalised form: :data:`ANSWER_COLUMNS`.

    ``answer`` is the group's most frequent spelling (the first seen on a tie), ``count`` how many
    passages gave it, ``answered`` how many of those are graded ≥ ``tau``, ``passages`` up to
    ``examples`` of their ids. Empty and unanswerable answers ("unanswerable", "no answer", ...)
    form one group, :data:`NO_ANSWER`. Questions in bank order, groups most frequent first, then by answer.

    :param grades: The exam's grades, with their answers.
    :param questions: The exam: ``query_id, question_id, text`` in bank order.
    :param tau: The grade at which a question counts as answered.
    :param examples: How many passage ids to show per group, at most.
    """

    from exampp.grading.rating_parsing import is_unanswerable
    from exampp.grading.verify import normalize

    def key(spelling: str) -> str:
        # An answer of stopwords only ("Because") normalises to nothing: it stays itself, lower-cased.
        return "" if not spelling or is_unanswerable(spelling) else normalize(spelling) or spelling.lower()

    if grades.empty:
        return _empty(ANSWER_COLUMNS)
    spelling = grades["answer"].fillna("").astype(str).str.strip()
    g = grades.assign(spelling=spelling, normalized=spelling.map(key), hit=grades["grade"] >= tau)
    g = g.sort_values(["order", "passage_id"], kind="stable")
    table = g.groupby(["order", "query_id", "question_id", "normalized"], sort=False).agg(
        count=("passage_id", "size"), answered=("hit", "sum"),
        passages=("passage_id", lambda ids: " ".join(ids.iloc[:examples])),
        answer=("spelling", lambda s: Counter(s).most_common(1)[0][0]),  # Counter keeps first-seen order on ties
    ).reset_index()
    table["answer"] = table["answer"].where(table["normalized"] != "", NO_ANSWER)
    texts = questions.set_index(["query_id", "question_id"])["text"]
    table["question"] = [texts.get(key, "") for key in zip(table["query_id"], table["question_id"])]
    table = table.sort_values(["order", "count", "answer"], ascending=[True, False, True], kind="stable")
    return table[ANSWER_COLUMNS].reset_index(drop=True)


def _integral(values: pd.Series) -> pd.Series:
    """Whole numbers as integers (official and self-rating grades print as 3, not 3.0)."""
    return values.astype(int) if values.notna().all() and (values % 1 == 0).all() else values.astype(float)


def _empty(columns: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame(columns=list(columns))
