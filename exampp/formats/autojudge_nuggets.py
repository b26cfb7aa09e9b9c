"""Nugget banks in TREC AutoJudge's format (``autojudge_base.nugget_data.NuggetBanks``, format
version v3), both directions: JSONL, one topic's ``NuggetBank`` per line::

    {"query_id": .., "title_query": .., "format_version": "v3",
     "nugget_bank": {question text: {"question", "question_id", "answers": {text: {"answer"}},
                                     "query_id", "importance", "metadata"}},
     "claim_bank": {claim text: {"claim", "claim_id", "query_id", "importance", "metadata"}}}

(``nugget_bank`` and ``claim_bank`` may also be lists, as RAGTIME 2026's banks have them.)

Read, each question (and each claim) is a question of the bank's topic: ``query_id`` (else the
bank's ``metadata.topic_id`` or ``metadata.query_id``), the text, the answers' texts as answer keys,
``importance`` in ``info``, the ``title_query`` as the query's text. A question's id is its
``question_id`` (a claim's ``claim_id``), except AutoJudge's default id, the md5 of the text, which
is the same in every topic: that becomes exampp's ``<query_id>/<md5 of the text>``, and is written
back as the bare md5. A claim keeps ``"claim": true`` in its ``info`` and is written back as a
claim (a topic's claims after its questions). exampp's fields that AutoJudge has no place for go
to the question's ``metadata``: ``facet_id``, ``facet_text``, ``source``, ``choices``,
``correct_choice``, ``disabled`` and the rest of ``info`` (and a claim's answers, which
AutoJudge's claims lack); read back, any other ``metadata`` key joins ``info``. So an exampp bank
written and read back is the same bank. Left out on reading: references, sub-nuggets, aggregator
types, creators, quality, and the bank's other fields.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from exampp.collection.questions import BankFile, Question, QuestionBank, question_id_for
from exampp.errors import InputError
from exampp.files.io import excerpt, json_name

FORMAT_VERSION = "v3"
# exampp's fields kept in a NuggetQuestion's metadata (info apart: its importance has a field of its own)
_IN_METADATA = ("facet_id", "facet_text", "source", "choices", "correct_choice", "disabled")
CLAIM = "claim"
"""The ``info`` key that marks a question read from a bank's ``claim_bank``."""


def _md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def read_nugget_banks_records(records: Iterable[tuple[int, Any]], path: str) -> BankFile:
    """A bank from numbered ``NuggetBank`` lines.

    :param records: (line number, JSON value) pairs.
    :param path: The file's name, for messages.
    :raises InputError: Each problem, naming the line.
    """
    bank = QuestionBank()
    lines: dict[str, int | None] = {}
    for lineno, record in records:
        if not isinstance(record, Mapping):
            raise InputError(path, lineno, f"expected a NuggetBank object, found {json_name(record)}")
        query_id = _query_id(record, path, lineno)
        title = record.get("title_query")
        if isinstance(title, str) and title.strip():
            bank.query_texts.setdefault(query_id, title)
        for kind, nuggets in (("question", record.get("nugget_bank")), (CLAIM, record.get("claim_bank"))):
            for nugget in _entries(nuggets, kind, path, lineno):
                try:
                    question = _question(query_id, nugget, kind)
                except ValueError as exc:
                    raise InputError(path, lineno, f"{kind} {excerpt(nugget[kind])}: {exc}") from None
                if question.question_id in bank:
                    first = lines[question.question_id]
                    raise InputError(path, lineno, f"question id {question.question_id!r} is also on line {first}: "
                                                   "exampp's question ids are unique in a bank")
                bank.add(question)
                lines[question.question_id] = lineno
    if not len(bank):
        raise InputError(path, None, "empty question bank: no nugget_bank or claim_bank entries")
    return BankFile(bank, lines)


def _query_id(record: Mapping[str, Any], path: str, lineno: int) -> str:
    given = record.get("metadata")
    metadata: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    for value in (record.get("query_id"), metadata.get("topic_id"), metadata.get("query_id")):
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)  # as AutoJudge's reports take an int topic id
        if isinstance(value, str):
            return value
    raise InputError(path, lineno, "the bank names no topic: no query_id (nor metadata.topic_id)")


def _entries(nuggets: Any, kind: str, path: str, lineno: int) -> list[Mapping[str, Any]]:
    """A bank's questions (or claims): a dict keyed by text, or a list."""
    if nuggets is None:
        return []
    if isinstance(nuggets, Mapping):
        entries = [dict(value, **{kind: value.get(kind, key)}) if isinstance(value, Mapping) else value
                   for key, value in nuggets.items()]
    elif isinstance(nuggets, list):
        entries = nuggets
    else:
        raise InputError(path, lineno, f"a bank's {kind}s must be an object or a list, found {json_name(nuggets)}")
    for entry in entries:
        if not isinstance(entry, Mapping) or not isinstance(entry.get(kind), str):
            raise InputError(path, lineno, f"expected a {kind} object with a {kind!r} text, found {json_name(entry)}")
    return entries


def _question(query_id: str, nugget: Mapping[str, Any], kind: str) -> Question:
    text = nugget[kind]
    given = nugget.get(f"{kind}_id")
    if given is None or given == _md5(text):  # AutoJudge's default id: the same in every topic
        question_id = question_id_for(query_id, text)
    elif isinstance(given, str):
        question_id = given
    else:
        raise ValueError(f"{kind}_id {json_name(given)} is not a string")
    metadata = nugget.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise ValueError(f"metadata must be an object, found {json_name(metadata)}")
    metadata = dict(metadata)
    info: dict[str, Any] = {}
    stored = metadata.pop("info", None)
    if stored is not None:
        if not isinstance(stored, Mapping):
            raise ValueError("metadata.info must be an object")
        info.update(stored)
    fields = {name: metadata.pop(name) for name in _IN_METADATA if metadata.get(name) is not None}
    answers = metadata.pop("answers", None) if kind == CLAIM else nugget.get("answers")  # a claim has none
    info.update(metadata)  # another tool's metadata
    if nugget.get("importance") is not None:
        info["importance"] = nugget["importance"]
    if kind == CLAIM:
        info[CLAIM] = True
    return Question(query_id, question_id, text, answers=tuple(_answers(answers)),
                    info=info or None, **fields)


def _answers(answers: Any) -> Iterator[str]:
    if answers is None:
        return
    if isinstance(answers, Mapping):
        answers = [value.get("answer", key) if isinstance(value, Mapping) else value for key, value in answers.items()]
    if not isinstance(answers, list):
        raise ValueError(f"answers must be an object or a list, found {json_name(answers)}")
    for answer in answers:
        text = answer.get("answer") if isinstance(answer, Mapping) else answer
        if not isinstance(text, str):
            raise ValueError(f"an answer must be a text, found {json_name(answer)}")
        yield text


def nugget_banks_records(bank: QuestionBank) -> Iterator[dict[str, Any]]:
    """The bank's ``NuggetBank`` lines, one per topic in order of first appearance.

    :param bank: The bank.
    :raises ValueError: Two questions (or claims) of a topic with the same text, or a question with the same
        answer twice: the format keys them by their text.
    """
    for query_id, questions in bank.by_query().items():
        record: dict[str, Any] = {"query_id": query_id}
        if query_id in bank.query_texts:
            record["title_query"] = bank.query_texts[query_id]
        record["format_version"] = FORMAT_VERSION
        held: dict[str, dict[str, dict[str, Any]]] = {"nugget_bank": {}, "claim_bank": {}}
        for question in questions:
            info = dict(question.info or {})
            kind = CLAIM if info.pop(CLAIM, False) is True else "question"
            entries = held["claim_bank" if kind == CLAIM else "nugget_bank"]
            if question.text in entries:
                raise ValueError(f"questions {entries[question.text][f'{kind}_id']!r} and {question.question_id!r} "
                                 f"of topic {query_id!r} have the same text, which AutoJudge's banks key by")
            entries[question.text] = _nugget(question, kind, info)
        record.update({key: entries for key, entries in held.items() if entries})
        yield record


def _nugget(question: Question, kind: str, info: dict[str, Any]) -> dict[str, Any]:
    question_id = question.question_id
    if question_id == question_id_for(question.query_id, question.text):
        question_id = _md5(question.text)  # AutoJudge's own id of the text
    nugget: dict[str, Any] = {kind: question.text, f"{kind}_id": question_id}
    if question.answers and kind != CLAIM:
        repeated = next((a for n, a in enumerate(question.answers) if a in question.answers[:n]), None)
        if repeated is not None:
            raise ValueError(f"question {question.question_id!r} has the answer {excerpt(repeated)} twice, "
                             "which AutoJudge's banks key answers by")
        nugget["answers"] = {answer: {"answer": answer} for answer in question.answers}
    nugget["query_id"] = question.query_id
    importance = info.get("importance")
    if isinstance(importance, (int, str)) and not isinstance(importance, bool):  # the field's types
        nugget["importance"] = info.pop("importance")
    metadata = {name: getattr(question, name) for name in _IN_METADATA
                if getattr(question, name) is not None and getattr(question, name) not in ((), False)
                or name == "correct_choice" and question.correct_choice is not None}
    metadata = {name: list(value) if isinstance(value, tuple) else value for name, value in metadata.items()}
    if question.answers and kind == CLAIM:  # a claim has no answers field
        metadata["answers"] = list(question.answers)
    if info:
        metadata["info"] = info
    if metadata:
        nugget["metadata"] = metadata
    return nugget
