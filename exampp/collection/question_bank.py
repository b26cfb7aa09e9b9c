"""Question banks: exam questions (or nuggets) per query, with optional facets, answer keys and choices.

exampp's own format is JSONL with one question per line::

    {"query_id", "question_id", "text", "facet_id"?, "facet_text"?, "query_text"?,
     "answers"?: [..], "choices"?: [..], "correct_choice"?: int, "source"?: "generated:<model>"|"manual"|...,
     "info"?: {..}, "disabled"?: true}

``question_id`` defaults to ``<query_id>/<md5 of text>``, the EXAM++ reference tool's scheme.
``info`` holds what is known of a question's making: for a generated one its provenance (``model``,
``prompt`` id and version, ``temperature``, ``date``), for an exam question its source document,
Bloom levels and question word. A ``disabled`` question stays in the bank (and its history) but
is left out when the bank is read for grading and scoring.
The reference tool's formats are read and written by :mod:`exampp.collection.reference_bank`,
hand-written banks by :mod:`~exampp.collection.tsv_bank` (``query_id<TAB>question[<TAB>answer...]``)
and :mod:`~exampp.collection.choice_bank` (multiple choice with answer keys), textbook exams by
:mod:`~exampp.collection.tqa_bank` (TQA's JSON), nugget banks with their importance by
:mod:`~exampp.collection.nugget_bank` (the ``nuggetizer`` package's, and the TREC RAG track's
assignment files).
"""
from __future__ import annotations

import functools
import hashlib
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from exampp.collection.ids import check_id, check_query_id
from exampp.collection.io import PathLike, atomic_write, display_name, first_nonblank, iter_lines, json_lines
from exampp.collection.topics import Subtopic, Topic
from exampp.errors import InputError

WRITE_FORMATS = ("exampp", "reference", "reference-nuggets", "nuggetizer", "car", "choices", "tsv", "tqa")
READ_FORMATS = ("auto", *WRITE_FORMATS)


def question_id_for(query_id: str, text: str) -> str:
    """``<query_id>/<md5 hex of the UTF-8 text>``: the id the reference tool gives a question."""
    return f"{query_id}/{hashlib.md5(text.encode('utf-8')).hexdigest()}"


@dataclass(frozen=True)
class Question:
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
    """Questions in order, with unique ids; ``query_texts`` holds query titles where known."""

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


def read_question_bank(path: PathLike, format: str = "auto", *, disabled: bool = False) -> QuestionBank:
    """Read a question bank (gz or plain); disabled questions only with ``disabled``.

    Formats: ``exampp`` (one question per line), ``reference`` / ``reference-nuggets`` (the
    reference tool's bank: one line per query or query facet holding ``questions`` or
    ``items``), ``nuggetizer`` (one line per topic with ``qid``, ``query`` and ``nuggets``: the
    ``nuggetizer`` package's nugget banks and the TREC RAG track's assignment files), ``car``
    (one question per line with ``qid``, ``question``, ``choices``, ``correctKey``, ``correct``),
    ``choices`` (one question per line with ``query_id``, ``question``, ``choices``,
    ``correct_key``), ``tsv`` (``query_id<TAB>question[<TAB>answer...]``),
    ``tqa`` (the TQA dataset's JSON list of lessons). ``auto`` recognises them from the first
    non-blank line: a JSON object is one of the JSONL formats (by its fields), ``[`` starts TQA's
    JSON, anything else is TSV.
    """
    bank = load_question_bank(path, format).bank
    return bank if disabled else bank.enabled()


def load_question_bank(path: PathLike, format: str = "auto") -> BankFile:
    """Read a question bank with its disabled questions, keeping each question's line number
    (for messages about it) and the format read."""
    if format not in READ_FORMATS:
        raise ValueError(f"unknown question bank format {format!r}; expected one of {', '.join(READ_FORMATS)}")
    name = display_name(path)
    first, lines = first_nonblank(iter_lines(path))
    if first is None:
        raise InputError(name, None, "empty question bank")
    start = first.lstrip()
    if format == "auto" and not start.startswith("{"):
        format = "tqa" if start.startswith("[") else "tsv"
    formats = _formats()
    if format != "auto" and not formats[format].jsonl:
        return replace(formats[format].read(lines, name), format=format)
    records = json_lines(lines, name)
    if format == "auto":  # a JSON object: its fields say which of the JSONL formats
        lineno, record = next(records)
        format = detect_format(record, name, lineno)
        records = itertools.chain([(lineno, record)], records)
    return replace(formats[format].read(records, name), format=format)


def write_question_bank(bank: QuestionBank, path: PathLike, format: str = "exampp") -> None:
    """Write ``bank`` atomically (gzipped when ``path`` ends in .gz) as one of :data:`WRITE_FORMATS`.

    ``reference`` writes one line per (query, facet) with ``items`` (questions) and
    ``reference-nuggets`` the same with nugget fields; fields those formats lack are kept in
    each item's ``info`` so that reading the file back gives the same bank. ``car`` leaves out
    ``source`` and cannot hold more than one answer. ``choices`` holds every field. ``tsv`` and
    ``tqa`` hold less (see their modules); what would read back as another question (a
    different id, lost choices) raises ValueError, and nothing is written.
    """
    if format not in WRITE_FORMATS:
        raise ValueError(f"unknown question bank format {format!r}; expected one of {', '.join(WRITE_FORMATS)}")
    written = _formats()[format]
    chunks = written.write(bank)
    if written.jsonl:
        chunks = (json.dumps(record, ensure_ascii=False) + "\n" for record in chunks)
    with atomic_write(path) as fh:
        for chunk in chunks:
            fh.write(chunk)


@dataclass(frozen=True)
class _Format:
    """How a format is read and written. A JSONL format (``jsonl``) reads numbered JSON records
    and writes records, one a line; the others read numbered lines and write text."""

    read: Callable[[Iterable[tuple[int, Any]], str], BankFile]
    write: Callable[[QuestionBank], Iterable[Any]]
    jsonl: bool = True


def _formats() -> dict[str, _Format]:
    """Every format of :data:`WRITE_FORMATS` by name."""
    # they build on the types above
    from exampp.collection import choice_bank, nugget_bank, reference_bank, tqa_bank, tsv_bank

    return {
        "exampp": _Format(read_question_records,
                          lambda bank: (exampp_record(q, bank.query_texts.get(q.query_id)) for q in bank)),
        "reference": _Format(reference_bank.read_reference_records, reference_bank.reference_records),
        "reference-nuggets": _Format(reference_bank.read_reference_records,
                                     functools.partial(reference_bank.reference_records, nuggets=True)),
        "nuggetizer": _Format(nugget_bank.read_nuggetizer_records, nugget_bank.nuggetizer_records),
        "car": _Format(reference_bank.read_car_records, reference_bank.car_records),
        "choices": _Format(choice_bank.read_choice_records, choice_bank.choice_records),
        "tsv": _Format(tsv_bank.read_tsv, tsv_bank.tsv_lines, jsonl=False),
        "tqa": _Format(tqa_bank.read_tqa, lambda bank: [tqa_bank.tqa_document(bank)], jsonl=False),
    }


def detect_format(record: Any, path: str, lineno: int) -> str:
    if isinstance(record, dict):
        if "questions" in record or "items" in record:
            return "reference"
        if "qid" in record and "nuggets" in record:
            return "nuggetizer"
        if "qid" in record and "question" in record:
            return "car"
        if "query_id" in record and "question" in record:
            return "choices"
        if "query_id" in record and "text" in record:
            return "exampp"
    raise InputError(path, lineno, "not a question bank: expected an exampp question {\"query_id\", \"text\"}, "
                                   "a reference bank line with \"questions\"/\"items\", a nuggetizer line "
                                   "{\"qid\", \"nuggets\"}, a CAR question "
                                   "{\"qid\", \"question\"}, or a multiple-choice question "
                                   "{\"query_id\", \"question\", \"choices\", \"correct_key\"}")


_EXAMPP_FIELDS = ("facet_id", "facet_text", "answers", "choices", "correct_choice", "source", "info", "disabled")


def read_question_records(records: Iterable[tuple[int, Any]], path: str,
                          parse: Callable[[Any], tuple[Question, str | None]] | None = None) -> BankFile:
    """A bank from numbered records holding one question each: ``parse`` (default: the exampp
    format's) gives the question and its query's text or raises ValueError; that, a repeated
    question id or no question at all is an InputError naming the file (and line)."""
    parse = parse or exampp_question
    bank = QuestionBank()
    first_line: dict[str, int] = {}
    for lineno, record in records:
        try:
            question, query_text = parse(record)
            if question.question_id in bank:
                raise ValueError(f"duplicate question id {question.question_id!r} "
                                 f"(first on line {first_line[question.question_id]})")
        except InputError:
            raise
        except ValueError as exc:
            raise InputError(path, lineno, str(exc)) from None
        bank.add(question)
        first_line[question.question_id] = lineno
        if query_text is not None:
            bank.query_texts.setdefault(question.query_id, query_text)
    if not len(bank):
        raise InputError(path, None, "empty question bank")
    return BankFile(bank, dict(first_line))


def exampp_question(record: Any) -> tuple[Question, str | None]:
    """The question of an exampp-format record, and its query's text (None when not given)."""
    if not isinstance(record, dict):
        raise ValueError(f"expected a question object, found {type(record).__name__}")
    for name in ("query_id", "text"):
        if name not in record:
            raise ValueError(f"missing field {name!r}")
    text = record["text"]  # verbatim: reference ids hash the text as it is, trailing spaces included
    query_id = record["query_id"]
    question_id = record.get("question_id")
    if question_id is None and isinstance(query_id, str) and isinstance(text, str):
        question_id = question_id_for(query_id, text)
    fields = {name: record[name] for name in _EXAMPP_FIELDS if record.get(name) is not None}
    question = Question(query_id=query_id, question_id=question_id, text=text, **fields)
    query_text = record.get("query_text")
    if query_text is not None and (not isinstance(query_text, str) or not query_text.strip()):
        raise ValueError("'query_text' must be a non-empty string")
    return question, query_text


def exampp_record(question: Question, query_text: str | None) -> dict[str, Any]:
    record: dict[str, Any] = {"query_id": question.query_id, "question_id": question.question_id,
                              "text": question.text}
    optional = {"facet_id": question.facet_id, "facet_text": question.facet_text, "query_text": query_text,
                "answers": list(question.answers), "choices": list(question.choices),
                "correct_choice": question.correct_choice, "source": question.source, "info": question.info,
                "disabled": question.disabled or None}
    record.update({k: v for k, v in optional.items() if v not in (None, [])})
    return record
