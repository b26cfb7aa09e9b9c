"""Nugget assignments: answers with their topic's nuggets, each marked supported or not.

The TREC 2024 RAG track's format, which the ``nuggetizer`` package's ``assign`` script also
writes, is JSONL, one answer per line::

    {"query": text, "qid": id, "run_id": id, "answer_text": text, "response_length": int?,
     "nuggets": [{"text": text, "importance": "vital"|"okay",
                  "assignment": "support"|"partial_support"|"not_support"}]}

A line of the ``nuggetizer``'s ``create`` output (``{"qid", "query", "nuggets": [{"text",
"importance"}]}``) has no answer; it is a nugget bank (``bank`` format ``nuggetizer``, read by
:func:`exampp.formats.question_bank.read_question_bank`). A nugget's grade in exampp's store is
its assignment's index in :data:`ASSIGNMENTS`: 0 not supported, 1 partly, 2 fully.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

from exampp.collection.ids import check_id, check_query_id
from exampp.errors import InputError
from exampp.files.io import (
    Kept,
    PathLike,
    display_name,
    excerpt,
    iter_json_lines,
    json_excerpt,
    json_name,
    write_json_lines,
)

ASSIGNMENTS = ("not_support", "partial_support", "support")  # grade 0, 1, 2
IMPORTANCE = ("vital", "okay")


@dataclass(frozen=True)
class AssignedNugget:
    """One nugget of an answer's topic; ``assignment`` None: not assigned yet."""

    text: str
    importance: str
    assignment: str | None = None

    @property
    def grade(self) -> int | None:
        """The assignment as a grade: 0 not supported, 1 partly, 2 fully."""
        return None if self.assignment is None else ASSIGNMENTS.index(self.assignment)


@dataclass(frozen=True)
class Answer:
    """One run's answer to one topic, with the topic's nuggets (assigned or not)."""

    query_id: str
    run_id: str
    text: str
    nuggets: tuple[AssignedNugget, ...] = ()
    query: str | None = None  # the topic's text, where the file gives it
    line: int | None = None  # where it was read from


@overload
def _string(record: Mapping[str, Any], key: str, name: str, line: int, *, optional: Literal[False] = False) -> str: ...


@overload
def _string(record: Mapping[str, Any], key: str, name: str, line: int, *, optional: bool) -> str | None: ...


def _string(record: Mapping[str, Any], key: str, name: str, line: int, *, optional: bool = False) -> str | None:
    value = record.get(key)
    if value is None and optional:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and key == "qid":
        value = str(value)  # numeric topic ids, as some tracks write them
    if not isinstance(value, str):
        raise InputError(name, line, f"{key!r} must be a string, found {json_name(value)}")
    return value


def _nugget(item: Any, name: str, line: int, index: int, *, assigned: bool) -> AssignedNugget:
    where = f"nuggets[{index}]"
    if not isinstance(item, dict):
        raise InputError(name, line, f"{where} must be an object, found {json_name(item)}")
    text = item.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InputError(name, line, f"{where}.text must be a non-empty string")
    importance = item.get("importance")
    if importance not in IMPORTANCE:
        raise InputError(name, line, f"{where}.importance is {json_excerpt(importance)}, not one of "
                                     f"{', '.join(IMPORTANCE)}")
    assignment = item.get("assignment")
    if assignment is None and not assigned:
        return AssignedNugget(text, importance)
    if assignment not in ASSIGNMENTS:
        raise InputError(name, line, f"{where}.assignment is {json_excerpt(assignment)}, not one of "
                                     f"{', '.join(ASSIGNMENTS)}")
    return AssignedNugget(text, importance, assignment)


def parse_answer(record: Any, name: str, line: int, *, assigned: bool = True) -> Answer:
    """One line of an assignment file.

    :param record: The line's JSON value.
    :param name: The file's name, for messages.
    :param line: The line's number, for messages.
    :param assigned: Every nugget must carry its assignment.
    :raises InputError: A malformed line.
    """
    if not isinstance(record, dict):
        raise InputError(name, line, f"expected an answer object, found {json_name(record)}")
    query_id, query, nuggets = parse_topic(record, name, line, assigned=assigned)
    run_id = _string(record, "run_id", name, line)
    try:
        check_id(run_id, "run_id")
    except ValueError as exc:
        raise InputError(name, line, str(exc)) from None
    text = _string(record, "answer_text", name, line)
    return Answer(query_id, run_id, text, nuggets, query, line)


def parse_topic(record: Mapping[str, Any], name: str, line: int, *, assigned: bool = True
                ) -> tuple[str, str | None, tuple[AssignedNugget, ...]]:
    """The topic id, the topic's text (None when not given or blank) and the nuggets of a line.

    :param record: The line's JSON object: an answer's, or a nugget bank's (``nuggetizer``'s
        ``create`` output).
    :param name: The file's name, for messages.
    :param line: The line's number, for messages.
    :param assigned: Every nugget must carry its assignment (False for a nugget bank).
    :raises InputError: A malformed line.
    """
    query_id = _string(record, "qid", name, line)
    try:
        check_query_id(query_id, "qid")
    except ValueError as exc:
        raise InputError(name, line, str(exc)) from None
    query = _string(record, "query", name, line, optional=True)
    query = query if query is not None and query.strip() else None  # blank: no text, as written for None
    nuggets = record.get("nuggets")
    if not isinstance(nuggets, list):
        raise InputError(name, line, f"'nuggets' must be a list, found {json_name(nuggets)}")
    parsed = tuple(_nugget(item, name, line, i, assigned=assigned) for i, item in enumerate(nuggets))
    seen: set[str] = set()
    for nugget in parsed:
        if nugget.text in seen:
            raise InputError(name, line, f"nugget {excerpt(nugget.text)} is listed twice")
        seen.add(nugget.text)
    return query_id, query, parsed


TopicLines = dict[str, tuple[int, tuple[tuple[str, str], ...]]]
"""topic id -> the first line listing its nuggets, and the (text, importance) it lists."""


def first_listing(topics: TopicLines, query_id: str, nuggets: Sequence[AssignedNugget], name: str, line: int
                  ) -> bool:
    """Whether a line is the first to list the nuggets of a topic.

    :param topics: The topics' first lines so far; a first line is noted there.
    :param query_id: The topic.
    :param nuggets: The nuggets the line lists.
    :param name: The file's name, for messages.
    :param line: The line's number.
    :raises InputError: The line lists other nuggets (or importance) than the topic's first line: the
        track assigns each topic's nuggets to every answer.
    """
    listed = tuple((n.text, n.importance) for n in nuggets)
    first, first_listed = topics.setdefault(query_id, (line, listed))
    if first_listed != listed:
        raise InputError(name, line, f"topic {query_id!r} has other nuggets (or importance) than on line {first}")
    return first == line


def read_assignments(path: PathLike, *, assigned: bool = True, texts: bool = True) -> list[Answer]:
    """The answers of an assignment file, in file order. Each topic's nugget texts are kept once,
    shared by its answers; what is kept is bounded (:class:`~exampp.files.io.Kept`).

    :param path: The assignment file.
    :param assigned: Every nugget must have an assignment; False also takes nuggets without one.
    :param texts: Keep the answers' and topics' texts; without, they are left out (""; None):
        scores read only the assignments.
    :raises InputError: A (run, topic) twice, or a topic whose answers list different nuggets (the
        track assigns each topic's nuggets to every answer), naming the line; or an empty file.

    """
    name = display_name(path)
    answers: list[Answer] = []
    seen: dict[tuple[str, str], int] = {}
    topics: TopicLines = {}
    kept = Kept(name)
    for line, record in iter_json_lines(path):
        answer = parse_answer(record, name, line, assigned=assigned)
        key = (answer.run_id, answer.query_id)
        if key in seen:
            raise InputError(name, line, f"run {key[0]!r} already answered topic {key[1]!r} (line {seen[key]})")
        seen[key] = line
        if first_listing(topics, answer.query_id, answer.nuggets, name, line):
            kept.add(line, *(n.text for n in answer.nuggets), records=0)
        first = topics[answer.query_id][1]  # its first line's (text, importance), shared by its answers
        nuggets = tuple(AssignedNugget(text, importance, n.assignment)
                        for (text, importance), n in zip(first, answer.nuggets))
        answer = Answer(answer.query_id, answer.run_id, answer.text if texts else "", nuggets,
                        answer.query if texts else None, line)
        kept.add(line, answer.run_id, answer.text, answer.query or "", records=1 + len(nuggets))
        answers.append(answer)
    if not answers:
        raise InputError(name, None, "no answers: the file is empty")
    return answers


def assignment_record(answer: Answer) -> dict[str, Any]:
    """An answer as a line of the track's assignment file (a topic without text: ``"query": ""``,
    which reads back as None).

    :param answer: The answer with its assigned nuggets.
    """
    record: dict[str, Any] = {"query": answer.query or "", "qid": answer.query_id,
                              "nuggets": [{"text": n.text, "importance": n.importance,
                                           **({} if n.assignment is None else {"assignment": n.assignment})}
                                          for n in answer.nuggets],
                              "run_id": answer.run_id, "answer_text": answer.text,
                              "response_length": len(answer.text.split())}
    return record


def write_assignments(answers: Iterable[Answer], path: PathLike) -> int:
    """Write answers in the track's format, atomically.

    :param answers: The answers with their assigned nuggets.
    :param path: The file to write; gzipped when it ends in .gz.
    :returns: The number written.
    """

    return write_json_lines(map(assignment_record, answers), path)


def by_topic(answers: Iterable[Answer]) -> Iterator[tuple[str, list[Answer]]]:
    """Answers grouped by topic, topics in order of first appearance.

    :param answers: The answers.
    """

    groups: dict[str, list[Answer]] = {}
    for answer in answers:
        groups.setdefault(answer.query_id, []).append(answer)
    yield from groups.items()
