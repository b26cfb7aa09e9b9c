"""Multiple-choice question banks with answer keys, as written by hand: JSONL, one question per line::

    {"query_id", "question", "choices": ["...", ...] | {key: "...", ...}, "correct_key": key,
     "question_id"?, "facet_id"?, "facet_text"?, "query_text"?, "answers"?: [..],
     "source"?, "info"?: {..}, "disabled"?: true}

``correct_key`` names the correct choice by its key, never by its text: for an object, one of
its keys; for a list, the lower-case letter of its place (``a`` the first, ``b`` the second...).
A question needs 2 or more choices and a key among them. A line without ``choices`` (and
without ``correct_key``) is an open question, so that an exam mixing both fits in one file.
``answers`` (what question-answering grading checks an answer against) defaults to the
correct choice's text; ``question_id`` to ``<query_id>/<md5 of the question>``. The other
fields are those of the exampp format. The format holds every field of a question; choice
keys are not kept (they are written as a list).
"""
from __future__ import annotations

import string
from collections.abc import Iterable, Iterator
from typing import Any

from exampp.collection.questions import BankFile, Question, QuestionBank
from exampp.formats.exampp_bank import exampp_question, read_question_records

CHOICE_KEYS = string.ascii_lowercase  # the keys of a list's choices, as in TQA and the reference tool's CAR bank
# Fields of the choice form that the exampp form spells otherwise (or that it must not take from this one).
_OWN_FIELDS = ("question", "choices", "correct_key", "text", "correct_choice")


def read_choice_records(records: Iterable[tuple[int, Any]], path: str) -> BankFile:
    """A bank from numbered multiple-choice records (ValueError -> InputError naming the line)."""
    return read_question_records(records, path, choice_question)


def choice_question(record: Any) -> tuple[Question, str | None]:
    """The question of one record of the choice form, and its query's text."""
    if not isinstance(record, dict):
        raise ValueError(f"expected a question object, found {type(record).__name__}")
    if "question" not in record:
        raise ValueError("missing field 'question'")
    text = record["question"]
    if not isinstance(text, str) or not text.strip():
        raise ValueError("no question text: 'question' must be a non-empty string")
    choices, correct = answer_key(record.get("choices"), record.get("correct_key"))
    exampp = {name: value for name, value in record.items() if name not in _OWN_FIELDS}
    exampp.update(text=text, choices=list(choices), correct_choice=correct)
    if record.get("answers") is None and correct is not None:
        exampp["answers"] = [choices[correct]]
    return exampp_question(exampp)


def answer_key(choices: Any, key: Any, *, key_field: str = "correct_key") -> tuple[tuple[str, ...], int | None]:
    """The choice texts and the index of the correct one, from ``choices`` (a list, or an
    object {key: text}; None: an open question) and ``key`` naming the correct choice.
    ValueError for fewer than 2 choices, a blank one, no key, or a key not among the choices."""
    if choices is None:
        if key is not None:
            raise ValueError(f"{key_field!r} {key!r} given without 'choices'")
        return (), None
    if isinstance(choices, list):
        if len(choices) > len(CHOICE_KEYS):
            raise ValueError(f"{len(choices)} choices in a list, whose keys go from a to z; "
                             "give 'choices' as an object {key: choice text}")
        keyed = dict(zip(CHOICE_KEYS, choices))
    elif isinstance(choices, dict):
        keyed = choices
    else:
        raise ValueError("'choices' must be a list of choice texts or an object {key: choice text}")
    for name, text in keyed.items():
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"choice {name!r} must be a non-empty string")
    if len(keyed) < 2:
        raise ValueError(f"a multiple-choice question needs 2 or more choices, found {len(keyed)}")
    if key is None:
        raise ValueError(f"choices without an answer key: {key_field!r} must name the correct choice")
    if not isinstance(key, str) or key not in keyed:
        raise ValueError(f"{key_field!r} {key!r} is not among the choices' keys {', '.join(keyed)}")
    return tuple(keyed.values()), list(keyed).index(key)


def choice_records(bank: QuestionBank) -> Iterator[dict[str, Any]]:
    """Records of the choice form; ValueError for a question whose choices it cannot hold (no
    answer key, fewer than 2, more than 26)."""
    for q in bank:
        record: dict[str, Any] = {"query_id": q.query_id, "question_id": q.question_id, "question": q.text}
        for name in ("facet_id", "facet_text"):
            if getattr(q, name) is not None:
                record[name] = getattr(q, name)
        if q.query_id in bank.query_texts:
            record["query_text"] = bank.query_texts[q.query_id]
        if q.choices:
            check_choices(q, "choices")
            assert q.correct_choice is not None  # check_choices refuses choices without an answer key
            record["choices"] = list(q.choices)
            record["correct_key"] = CHOICE_KEYS[q.correct_choice]
        if q.answers != correct_answers(q):
            record["answers"] = list(q.answers)
        optional = {"source": q.source, "info": q.info, "disabled": q.disabled or None}
        record.update({name: value for name, value in optional.items() if value is not None})
        yield record


def choice_problem(question: Question) -> str | None:
    """What makes ``question``'s choices unfit for multiple-choice grading (no answer key, fewer
    than 2 choices, a blank one), or None: what :func:`answer_key` refuses."""
    if not question.choices:
        return None
    if question.correct_choice is None:
        return "has choices without an answer key (which choice is correct)"
    if len(question.choices) < 2:
        return f"has {len(question.choices)} choice: a multiple-choice question needs 2 or more"
    if not all(choice.strip() for choice in question.choices):
        return "has a blank choice"
    return None


def check_choices(question: Question, format: str) -> None:
    """ValueError when ``question``'s choices cannot be written as keyed choices in ``format``."""
    problem = choice_problem(question)
    if problem is None and len(question.choices) > len(CHOICE_KEYS):
        problem = f"has {len(question.choices)} choices, more than the {len(CHOICE_KEYS)} keys a to z"
    if problem is not None:
        raise ValueError(f"question {question.question_id!r} {problem}, which the {format} format cannot "
                         "hold; write the 'exampp' format")


def correct_answers(question: Question) -> tuple[str, ...]:
    """The answers a question read from keyed choices has by default: the correct choice's text."""
    return (question.choices[question.correct_choice],) if question.correct_choice is not None else ()
