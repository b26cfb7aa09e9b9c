"""Nugget banks in the ``nuggetizer`` package's format (AutoNuggetizer, TREC 2024 RAG), both directions.

A line of the package's ``create`` output holds one topic's nuggets::

    {"qid": id, "query": text, "nuggets": [{"text": text, "importance": "vital"|"okay"}]}

A nugget is read as a question of its topic whose id is ``<qid>/<md5 of the text>``
(:func:`~exampp.collection.questions.question_id_for`) and whose ``info`` holds its
``importance``; the topic's text goes to the bank's query texts. The track's assignment files
(:mod:`exampp.formats.nugget_assignments`: the same keys, with ``run_id``, ``answer_text`` and
an ``assignment`` per nugget) read as the bank of their nuggets: every answer of a topic lists
the same nuggets, which are read once; a topic whose lines list other nuggets (or importance) is
an error naming the line.

Written, a line per topic (in order of first appearance) holds its nuggets with their
importance; a topic without a known text is written with ``"query": ""`` (read back, a blank
query is no text). The format holds nothing else: a question without an ``importance`` of
``vital`` or ``okay`` in its ``info`` and one whose id is not the one its text gives (read back,
it would be another question) raise ValueError naming the question; facets, answers, choices,
``source`` and the rest of ``info`` are left out (:func:`left_out` says which a question loses).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from exampp.collection.questions import BankFile, Question, QuestionBank, question_id_for
from exampp.errors import InputError
from exampp.files.io import json_name
from exampp.formats.nugget_assignments import IMPORTANCE, TopicLines, first_listing, parse_topic

_NOT_HELD = ("facet_id", "facet_text", "answers", "choices", "correct_choice", "source")  # beside info


def read_nuggetizer_records(records: Iterable[tuple[int, Any]], path: str) -> BankFile:
    """A bank from numbered nugget-bank (or assignment) lines.

    :param records: (line number, JSON value) pairs.
    :param path: The file's name, for messages.
    :raises InputError: Each problem, naming the line.
    """
    bank = QuestionBank()
    lines: dict[str, int | None] = {}
    topics: TopicLines = {}
    for lineno, record in records:
        if not isinstance(record, dict):
            raise InputError(path, lineno, f"expected a topic's nuggets object, found {json_name(record)}")
        query_id, query, nuggets = parse_topic(record, path, lineno, assigned=False)
        first = first_listing(topics, query_id, nuggets, path, lineno)
        if query is not None:
            bank.query_texts.setdefault(query_id, query)
        if not first:  # another answer to a topic already read
            continue
        for nugget in nuggets:
            # a line lists a text once (parse_topic), and an id is its topic's and its text's
            question = Question(query_id, question_id_for(query_id, nugget.text), nugget.text,
                                info={"importance": nugget.importance})
            bank.add(question)
            lines[question.question_id] = lineno
    if not len(bank):
        raise InputError(path, None, "empty question bank")
    return BankFile(bank, lines)


def nuggetizer_records(bank: QuestionBank) -> Iterator[dict[str, Any]]:
    """The bank's lines, one per topic in order of first appearance.

    :param bank: The bank.
    :raises ValueError: A question the format cannot hold (see the module docstring).
    """
    for query_id, questions in bank.by_query().items():
        nuggets = []
        for q in questions:
            importance = (q.info or {}).get("importance")
            if importance not in IMPORTANCE:
                raise ValueError(f"question {q.question_id!r} has no importance (info.importance vital or okay), "
                                 "which the nuggetizer format needs; write the 'exampp' format")
            expected = question_id_for(q.query_id, q.text)
            if q.question_id != expected:
                raise ValueError(f"question {q.question_id!r}: the nuggetizer format has no id, and read back this "
                                 f"nugget would be {expected!r}; write the 'exampp' or 'reference-nuggets' format")
            nuggets.append({"text": q.text, "importance": importance})
        yield {"qid": query_id, "query": bank.query_texts.get(query_id, ""), "nuggets": nuggets}


def left_out(question: Question) -> list[str]:
    """The fields of a question that the nuggetizer format leaves out (set ones only).

    :param question: The question.
    """

    lost = [name for name in _NOT_HELD if getattr(question, name) not in (None, ())]
    if set(question.info or {}) - {"importance"}:
        lost.append("info")
    return lost
