"""Canary questions: each pooled text graded, besides its own query's exam, against a few questions
of other queries' exams (``exampp grade --canaries N``).

An honest passage answers another topic's question about as rarely as the pool's texts do; a text
the judge finds to answer several unrelated questions moves the judge by something other than what
it says about its topic (an instruction to rate it high, a list of stuffed questions), whatever its
wording, with any method and backend. ``exampp audit`` flags it (:mod:`exampp.audit.canary`).

The canaries of a pooled (query, passage) are chosen by a stable hash, so a rerun asks the same
questions and grades nothing new: the other queries' exam questions are ordered by the hash of the
query id and each question's id, and each passage takes ``N`` consecutive ones from an offset given
by the hash of the query id and its passage id (one question close to the query's topic then meets
a few of its passages, not all of them). A canary is filed with the id ``OTHER_QUERY/QUESTION``
(:func:`canary_question_id`) under the pooled query's id with :data:`MARK` appended
(:func:`canary_query_id`; its passage too), and its grade under the grader's method id with
:data:`MARK` appended (:func:`canary_method_id`), a method of its own: the measures, qrels and
leaderboards read the grades of one method id, and never see these. The query ids are apart as
well, since the store joins grades by content: a passage pooled for two queries would otherwise show
the other query's real grade of the canary's text as a grade of a question of this query.
"""
from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import replace

from exampp.collection.grades import Method
from exampp.collection.questions import Question
from exampp.grading.base import Grader, Judgment, Pair
from exampp.llm.backend import Usage

MARK = "+canaries"


def canary_method_id(method_id: str) -> str:
    """The method id the canary grades of ``method_id``'s grader are filed under."""
    return method_id + MARK


def is_canary_method(method_id: str) -> bool:
    return method_id.endswith(MARK)


def canary_query_id(query_id: str) -> str:
    """The query id the canaries of ``query_id``'s pooled passages are filed under."""
    return query_id + MARK


def pooled_query_id(canary_query: str) -> str:
    """The pooled query of a canary query id (:func:`canary_query_id`)."""
    return canary_query.removesuffix(MARK)


def is_canary_query(query_id: str) -> bool:
    return query_id.endswith(MARK)


def canary_question_id(query_id: str, question_id: str) -> str:
    """The id a question of query ``query_id`` has as a canary of another query."""
    return f"{query_id}/{question_id}"


def _hash(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\t".join(parts).encode()).digest()[:8], "big")


def canary_order(query_id: str, exam: Mapping[str, Sequence[Question]]) -> list[Question]:
    """The questions of the other queries of ``exam`` that may be canaries of ``query_id``, in the
    order of the hash of (``query_id``, their query id, their id), each as a question of
    ``query_id`` with its canary id. Left out: questions whose text is one of the query's own, and
    those whose canary id is one of its own questions' ids (the store maps each id to one text)."""
    own = exam.get(query_id, ())
    own_texts = {q.text for q in own}
    own_ids = {q.question_id for q in own}
    candidates = [(_hash(query_id, other, q.question_id), other, q)
                  for other, questions in exam.items() if other != query_id
                  for q in questions
                  if q.text not in own_texts and canary_question_id(other, q.question_id) not in own_ids]
    candidates.sort(key=lambda item: (item[0], item[1], item[2].question_id))
    return [replace(q, query_id=query_id, question_id=canary_question_id(other, q.question_id))
            for _, other, q in candidates]


def choose_canaries(query_id: str, passage_id: str, order: Sequence[Question], n: int) -> list[Question]:
    """The ``n`` canaries of one pooled passage (all of ``order`` when it holds fewer): consecutive
    in ``order`` (:func:`canary_order` of its query), from an offset the hash of (``query_id``,
    ``passage_id``) gives, wrapping round."""
    if n <= 0 or not order:
        return []
    start = _hash(query_id, passage_id) % len(order)
    return [order[(start + i) % len(order)] for i in range(min(n, len(order)))]


def canary_pairs(passages: Mapping[str, Mapping[str, str]], exam: Mapping[str, Sequence[Question]],
                 n: int) -> list[Pair]:
    """Every pooled (query, passage) of ``passages`` with each of its ``n`` canaries from ``exam``
    (the questions a grader grades, per query), in pool order, filed under :func:`canary_query_id`."""
    pairs = []
    for qid, texts in passages.items():
        order = canary_order(qid, exam)
        filed = canary_query_id(qid)
        for pid, text in texts.items():
            pairs += [Pair(filed, pid, text, replace(question, query_id=filed))
                      for question in choose_canaries(qid, pid, order, n)]
    return pairs


class CanaryGrader(Grader):
    """``grader`` itself, its grades filed under the canary method id."""

    def __init__(self, grader: Grader) -> None:
        self.grader = grader
        self.name = grader.name
        self.direct = grader.direct
        self.whole_passages = grader.whole_passages
        self.parallel_calls = grader.parallel_calls

    @property
    def method(self) -> Method:
        return Method.parse(canary_method_id(self.grader.method.method_id))

    def grade(self, pairs: Sequence[Pair]) -> list[Judgment]:
        return self.grader.grade(pairs)

    def usable(self, question: Question) -> bool:
        return self.grader.usable(question)

    @property
    def usage(self) -> Usage | None:
        return self.grader.usage
