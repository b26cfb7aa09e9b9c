"""Questions and question banks as data.

Every bank format builds on what is here: :class:`Question`, :class:`QuestionBank`, a bank read
from one file with where each question was read (:class:`BankFile`) and the reference tool's
question ids (:func:`question_id_for`). The formats are :mod:`exampp.formats`: exampp's own record
of a question and the reading of numbered records into a bank, :mod:`exampp.formats.exampp_bank`;
:mod:`exampp.formats.question_bank` picks a format by its name (or recognises it) and reads or
writes a bank in it.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from exampp.collection.ids import check_id, check_query_id
from exampp.collection.topics import Subtopic, Topic


def question_id_for(query_id: str, text: str) -> str:
    """``<query_id>/<md5 hex of the UTF-8 text>``: the id the reference tool gives a question.

    :param query_id: The question's query.
    :param text: The question's text.
    """
    return f"{query_id}/{hashlib.md5(text.encode('utf-8')).hexdigest()}"


@dataclass(frozen=True)
class Question:
    """An exam question (or nugget) of a query, as a line of exampp's bank format holds it.

    :param query_id: The query it belongs to.
    :param question_id: Its id, unique in the bank (:func:`question_id_for` gives the reference tool's).
    :param text: The question.
    :param facet_id: The query facet it asks about, if any.
    :param facet_text: That facet's text, if known.
    :param answers: Answer keys, if any.
    :param choices: Multiple-choice options, if any.
    :param correct_choice: The 0-based index of the correct option in ``choices``, if known.
    :param source: Where it came from (``generated:<model>``, ``manual``, ...), if known.
    :param info: What is known of its making: a generated question's provenance, a nugget's
        importance, an exam question's source document.
    :param disabled: Kept in the bank and its history but left out when the bank is read for
        grading and scoring.
    :raises ValueError: A field of the wrong type, an id that would not fit a line format, or a
        ``correct_choice`` out of range.
    """

    query_id: str
    question_id: str
    text: str
    facet_id: str | None = None
    facet_text: str | None = None
    answers: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    correct_choice: int | None = None
    source: str | None = None
    info: dict[str, Any] | None = field(default=None, hash=False)
    disabled: bool = False

    def __post_init__(self) -> None:
        # Field names in messages are those of the exampp format, so readers can pass them on.
        for name in ("query_id", "text", "question_id"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"{name!r} must be a non-empty string")
        for name in ("facet_id", "facet_text", "source"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise ValueError(f"{name!r} must be a string or null")
        # Ids go into line formats: query ids into runs and qrels, question ids into IRT tables,
        # facet ids into facet qrels (<query_id>/<facet_id>).
        check_query_id(self.query_id, "'query_id'")
        check_id(self.question_id, "'question_id'")
        if self.facet_id is not None:
            check_id(self.facet_id, "'facet_id'")
        for name in ("answers", "choices"):
            value = getattr(self, name)
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{name!r} must be a list of strings")
            object.__setattr__(self, name, tuple(value))
        if self.info is not None and not isinstance(self.info, dict):
            raise ValueError("'info' must be an object or null")
        if not isinstance(self.disabled, bool):
            raise ValueError("'disabled' must be true or false")
        if self.correct_choice is not None:
            if not isinstance(self.correct_choice, int) or isinstance(self.correct_choice, bool):
                raise ValueError("'correct_choice' must be an integer (0-based index into 'choices')")
            if not 0 <= self.correct_choice < len(self.choices):
                raise ValueError(f"'correct_choice' {self.correct_choice} is out of range for "
                                 f"{len(self.choices)} choices")


class QuestionBank:
    """Questions in order, with unique ids.

    :param questions: The questions, in order.
    :param query_texts: Query titles by query id, where known.
    :raises ValueError: A question id twice.
    """


    def __init__(self, questions: Iterable[Question] = (), *, query_texts: Mapping[str, str] | None = None):
        self._by_id: dict[str, Question] = {}
        self.query_texts: dict[str, str] = dict(query_texts or {})
        for question in questions:
            self.add(question)

    def add(self, question: Question) -> None:
        if question.question_id in self._by_id:
            raise ValueError(f"duplicate question id {question.question_id!r}")
        self._by_id[question.question_id] = question

    @property
    def questions(self) -> list[Question]:
        return list(self._by_id.values())

    def by_query(self) -> dict[str, list[Question]]:
        grouped: dict[str, list[Question]] = {}
        for question in self._by_id.values():
            grouped.setdefault(question.query_id, []).append(question)
        return grouped

    def enabled(self) -> "QuestionBank":
        """The bank without its disabled questions."""
        if not any(q.disabled for q in self._by_id.values()):
            return self
        return QuestionBank((q for q in self._by_id.values() if not q.disabled), query_texts=self.query_texts)

    def question_ids(self) -> dict[str, list[str]]:
        """Question ids per query: the exam as scoring takes it."""
        return {qid: [q.question_id for q in questions] for qid, questions in self.by_query().items()}

    def query_ids(self) -> list[str]:
        """Query ids in order of first appearance."""
        return list(dict.fromkeys(q.query_id for q in self._by_id.values()))

    def topics(self) -> dict[str, Topic]:
        """Topics of the queries whose text is known, with the facets their questions name."""
        topics: dict[str, Topic] = {}
        for query_id, questions in self.by_query().items():
            if query_id in self.query_texts:
                facets = {q.facet_id: q.facet_text or "" for q in questions if q.facet_id is not None}
                subtopics = tuple(Subtopic(f, t) for f, t in facets.items())
                topics[query_id] = Topic(query_id, self.query_texts[query_id], subtopics)
        return topics

    def __getitem__(self, question_id: str) -> Question:
        return self._by_id[question_id]

    def __contains__(self, question_id: object) -> bool:
        return question_id in self._by_id

    def __len__(self) -> int:
        return len(self._by_id)

    def __iter__(self) -> Iterator[Question]:
        return iter(self._by_id.values())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, QuestionBank):
            return NotImplemented
        return self.questions == other.questions and self.query_texts == other.query_texts

    def __repr__(self) -> str:
        return f"QuestionBank({len(self)} questions over {len(self.query_ids())} queries)"


@dataclass(frozen=True)
class BankFile:
    """A question bank as read from one file, with where each question was read."""

    bank: QuestionBank  # every question, disabled ones included
    lines: dict[str, int | None]  # question id -> the line it was read from (None where unknown)
    dropped: int = 0  # questions left out on reading (blank text, exact repeats, TQA's defects)
    format: str = ""  # the format read (what "auto" recognised)


