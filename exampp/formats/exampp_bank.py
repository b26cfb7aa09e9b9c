"""exampp's own question bank format, a question per JSON record: a record read into a
:class:`~exampp.collection.questions.Question` and written from one, and numbered records read into
a bank, as every bank format reads them (:mod:`exampp.formats.question_bank` reads and writes the
files).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from exampp.collection.questions import BankFile, Question, QuestionBank, question_id_for
from exampp.errors import InputError

_EXAMPP_FIELDS = ("facet_id", "facet_text", "answers", "choices", "correct_choice", "source", "info", "disabled")


def read_question_records(records: Iterable[tuple[int, Any]], path: str,
                          parse: Callable[[Any], tuple[Question, str | None]] | None = None) -> BankFile:
    """A bank from numbered records holding one question each: ``parse`` (default: the exampp
    format's) gives the question and its query's text or raises ValueError; that, a repeated
    question id or no question at all is an InputError naming the file (and line).

    :param records: ``(line number, record)`` pairs, in file order.
    :param path: The file, as messages name it.
    :param parse: A record's question and its query's text (None when not given).
    """
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
    """The question of an exampp-format record, and its query's text (None when not given).

    :param record: A JSON record.
    :raises ValueError: The record is no exampp question.
    """
    if not isinstance(record, dict):
        raise ValueError(f"expected a question object, found {type(record).__name__}")
    for name in ("query_id", "text"):
        if name not in record:
            raise ValueError(f"missing field {name!r}")
    text = record["text"]  # verbatim: reference ids hash the text as it is, trailing spaces included
    query_id = record["query_id"]
    question_id: Any = record.get("question_id")  # as given: Question checks it
    if question_id is None and isinstance(query_id, str) and isinstance(text, str):
        question_id = question_id_for(query_id, text)
    fields = {name: record[name] for name in _EXAMPP_FIELDS if record.get(name) is not None}
    question = Question(query_id=query_id, question_id=question_id, text=text, **fields)
    query_text = record.get("query_text")
    if query_text is not None and (not isinstance(query_text, str) or not query_text.strip()):
        raise ValueError("'query_text' must be a non-empty string")
    return question, query_text


def exampp_record(question: Question, query_text: str | None) -> dict[str, Any]:
    """The exampp-format record of a question.

    :param question: The question.
    :param query_text: Its query's text, written when given.
    """
    record: dict[str, Any] = {"query_id": question.query_id, "question_id": question.question_id,
                              "text": question.text}
    optional = {"facet_id": question.facet_id, "facet_text": question.facet_text, "query_text": query_text,
                "answers": list(question.answers), "choices": list(question.choices),
                "correct_choice": question.correct_choice, "source": question.source, "info": question.info,
                "disabled": question.disabled or None}
    record.update({k: v for k, v in optional.items() if v not in (None, [])})
    return record
