"""The EXAM++ reference tool's ("autograding workbench") question bank formats, both directions.

* Bank: gzipped JSONL, one line per query or query facet::

      {"query_id", "facet_id", "facet_text"?, "test_collection", "query_text", "info", "hash"?,
       "questions"|"items": [{"question_id", "question_text", "query_id", "facet_id", "info",
                              "gold_answers"?}]}

  Nugget banks name the item fields ``nugget_id`` / ``nugget_text``. For a facet the tool
  writes ``query_text`` as ``"<query title> / <facet text>"``; exampp keeps the title.
* CAR variant: one question per line
  ``{"query_id", "query_text", "qid", "question", "choices": {key: text}|null,
  "correctKey": key|null, "correct": text|null, "facet_id"}``.

The tool's own files hold artefacts of LLM output that exampp drops on import, with a
warning: questions whose text is blank, and exact repeats of a question (same id and text).
A repeated id with a different question is an error.
"""
from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Iterator
from typing import Any

from exampp.collection.questions import BankFile, Question, QuestionBank
from exampp.errors import InputError
from exampp.formats.choice_bank import CHOICE_KEYS as _CHOICE_KEYS  # TQA's answer-choice keys

log = logging.getLogger(__name__)

FACET_SEPARATOR = " / "  # the tool's query_text for a facet: "<title> / <facet text>"
_EXTRA_FIELDS = ("answers", "choices", "correct_choice", "source", "disabled")  # kept in item "info" on export


def read_reference_records(records: Iterable[tuple[int, Any]], path: str) -> BankFile:
    """A bank from reference-tool bank lines (question or nugget items)."""
    return _read(records, path, _reference_line)


def read_car_records(records: Iterable[tuple[int, Any]], path: str) -> BankFile:
    """A bank from the CAR variant (one question per line)."""

    def line(record: Any) -> tuple[list[Question | None], str | None]:
        question, query_text = _car_line(record)
        return [question], query_text

    return _read(records, path, line)


def _read(records: Iterable[tuple[int, Any]], path: str, parse_line) -> BankFile:
    """Parse each line into questions (ValueError -> InputError naming the line) and collect them."""
    importer = _Importer(path)
    for lineno, record in records:
        try:
            questions, query_text = parse_line(record)
        except InputError:
            raise
        except ValueError as exc:
            raise InputError(path, lineno, str(exc)) from None
        for question in questions:
            importer.add(question, query_text, lineno)
    return importer.finish()


def reference_records(bank: QuestionBank, *, nuggets: bool = False) -> Iterator[dict[str, Any]]:
    """Reference-tool bank lines, one per (query, facet) in order of first appearance."""
    id_key, text_key = ("nugget_id", "nugget_text") if nuggets else ("question_id", "question_text")
    groups: dict[tuple[str, str | None], list[Question]] = {}
    for question in bank:
        groups.setdefault((question.query_id, question.facet_id), []).append(question)
    for (query_id, facet_id), questions in groups.items():
        facet_text = next((q.facet_text for q in questions if q.facet_text is not None), None)
        items = []
        for q in questions:
            item: dict[str, Any] = {id_key: q.question_id, text_key: q.text, "query_id": query_id,
                                    "facet_id": facet_id}
            extras = {name: getattr(q, name) for name in _EXTRA_FIELDS if getattr(q, name) not in (None, (), False)}
            if not nuggets:
                item["gold_answers"] = list(extras.pop("answers", ())) or None
            info = {**(q.info or {}), **{k: list(v) if isinstance(v, tuple) else v for k, v in extras.items()}}
            item["info"] = info or None
            items.append(item)
        yield {"query_id": query_id, "facet_id": facet_id, "facet_text": facet_text,
               "test_collection": "exampp", "query_text": _tool_query_text(bank, query_id, facet_text),
               "info": None, "hash": _items_hash(questions), "items": items}


def car_records(bank: QuestionBank) -> Iterator[dict[str, Any]]:
    """CAR-variant lines. The format has no place for ``source`` or for the facet text of a
    question without a facet id (they are left out); answer keys it cannot hold (several
    answers, an answer other than the correct choice) and a query title with " / " in a facet's
    ``query_text`` (read back, it would split there) raise ValueError."""
    for q in bank:
        facet_text = q.facet_text or None if q.facet_id is not None else None  # read back only with a facet id
        query_text = _tool_query_text(bank, q.query_id, facet_text)
        if q.facet_id is not None and _split_facet(query_text) != (bank.query_texts.get(q.query_id, ""), facet_text):
            raise ValueError(f"question {q.question_id!r}: the CAR format cannot hold a query title with "
                             f"{FACET_SEPARATOR!r} for a facet; write the 'exampp' or 'reference' format")
        if len(q.answers) > 1:
            raise ValueError(f"question {q.question_id!r}: the CAR format holds one answer, not "
                             f"{len(q.answers)}; write the 'exampp' or 'reference' format")
        if len(q.choices) > len(_CHOICE_KEYS):
            raise ValueError(f"question {q.question_id!r}: the CAR format holds at most "
                             f"{len(_CHOICE_KEYS)} choices")
        choices = dict(zip(_CHOICE_KEYS, q.choices)) if q.choices else None
        key = _CHOICE_KEYS[q.correct_choice] if q.correct_choice is not None else None
        correct = q.answers[0] if q.answers else (q.choices[q.correct_choice] if q.correct_choice is not None else None)
        if q.correct_choice is not None and correct != q.choices[q.correct_choice]:
            raise ValueError(f"question {q.question_id!r}: the CAR format cannot hold an answer "
                             "that differs from the correct choice")
        yield {"query_id": q.query_id, "query_text": query_text,
               "qid": q.question_id, "question": q.text, "choices": choices, "correctKey": key,
               "correct": correct, "facet_id": q.facet_id}


class _Importer:
    """Collects imported questions, dropping the tool's blank questions and exact repeats."""

    def __init__(self, path: str):
        self.path = path
        self.bank = QuestionBank()
        self.first_line: dict[str, int] = {}
        self.blank = 0
        self.repeats = 0

    def add(self, question: Question | None, query_text: str | None, lineno: int) -> None:
        if question is None:
            self.blank += 1
            return
        if query_text:
            self.bank.query_texts.setdefault(question.query_id, query_text)
        seen = self.first_line.get(question.question_id)
        if seen is not None:
            if self.bank[question.question_id] != question:
                raise InputError(self.path, lineno, f"question id {question.question_id!r} already used on line "
                                                    f"{seen} for a different question")
            self.repeats += 1
            return
        self.bank.add(question)
        self.first_line[question.question_id] = lineno

    def finish(self) -> BankFile:
        if self.blank or self.repeats:
            log.warning("%s: dropped %d questions with blank text and %d exact repeats", self.path,
                        self.blank, self.repeats)
        if not len(self.bank):
            raise InputError(self.path, None, "empty question bank")
        return BankFile(self.bank, dict(self.first_line), self.blank + self.repeats)


def _reference_line(record: Any) -> tuple[list[Question | None], str | None]:
    if not isinstance(record, dict):
        raise ValueError(f"expected a bank object, found {type(record).__name__}")
    query_id = _required_str(record, "query_id")
    items = record.get("items") if "items" in record else record.get("questions")
    if not isinstance(items, list):
        raise ValueError("'questions'/'items' must be a list")
    facet_id = _optional_str(record, "facet_id")
    facet_text = _optional_str(record, "facet_text")
    query_text = _title(_optional_str(record, "query_text"), facet_text)
    source = _source(record.get("info"), None)
    questions: list[Question | None] = []
    for index, item in enumerate(items, start=1):
        try:
            questions.append(_reference_item(item, query_id, facet_id, facet_text, source))
        except ValueError as exc:
            raise ValueError(f"item {index}: {exc}") from None
    return questions, query_text


def _reference_item(item: Any, query_id: str, facet_id: str | None, facet_text: str | None,
                    source: str | None) -> Question | None:
    if not isinstance(item, dict):
        raise ValueError(f"expected a question object, found {type(item).__name__}")
    id_key, text_key = ("nugget_id", "nugget_text") if "nugget_id" in item else ("question_id", "question_text")
    text = _required_str(item, text_key)
    if not text.strip():
        return None
    if item.get("query_id", query_id) != query_id:
        raise ValueError(f"question's query_id {item['query_id']!r} differs from the bank's {query_id!r}")
    info = item.get("info")
    extras = info if isinstance(info, dict) else {}
    gold = item.get("gold_answers")
    if gold is not None and not (isinstance(gold, list) and all(isinstance(a, str) for a in gold)):
        raise ValueError("'gold_answers' must be a list of strings")
    return Question(query_id=query_id, question_id=_required_str(item, id_key), text=text,
                    facet_id=_optional_str(item, "facet_id") or facet_id, facet_text=facet_text,
                    answers=tuple(gold) if gold else extras.get("answers") or (), choices=extras.get("choices") or (),
                    correct_choice=extras.get("correct_choice"), source=_source(extras, source),
                    info={k: v for k, v in extras.items() if k not in _EXTRA_FIELDS} or None,
                    disabled=extras.get("disabled", False))


def _source(info: Any, default: str | None) -> str | None:
    """exampp's ``source`` kept in an ``info`` object, else the generating model the tool records there."""
    if not isinstance(info, dict):
        return default
    if "source" in info:
        return info["source"]
    model = info.get("gpt_model")
    return f"generated:{model}" if isinstance(model, str) else default


def _car_line(record: Any) -> tuple[Question | None, str | None]:
    if not isinstance(record, dict):
        raise ValueError(f"expected a question object, found {type(record).__name__}")
    question_id = _required_str(record, "qid")
    query_id = _optional_str(record, "query_id") or question_id.partition("/")[0]
    text = _required_str(record, "question")
    if not text.strip():
        return None, None
    facet_id = _optional_str(record, "facet_id")
    query_text = _optional_str(record, "query_text")
    facet_text = None
    if facet_id is not None and query_text is not None:
        query_text, facet_text = _split_facet(query_text)
    choices, correct_choice, answers = _car_answer_key(record)
    return Question(query_id=query_id, question_id=question_id, text=text, facet_id=facet_id,
                    facet_text=facet_text, answers=answers, choices=choices,
                    correct_choice=correct_choice), query_text


def _car_answer_key(record: dict) -> tuple[tuple[str, ...], int | None, tuple[str, ...]]:
    """Choices, the index of the correct one, and the answers from ``choices``/``correctKey``/``correct``."""
    choices = record.get("choices")
    key = _optional_str(record, "correctKey")
    correct = _optional_str(record, "correct")
    if choices is None:
        if key is not None:
            raise ValueError(f"'correctKey' {key!r} given without 'choices'")
        return (), None, (correct,) if correct is not None else ()
    if not isinstance(choices, dict) or not all(isinstance(v, str) for v in choices.values()):
        raise ValueError("'choices' must be an object {key: choice text} or null")
    keys, texts = list(choices), tuple(choices.values())
    if key is not None:
        if key not in choices:
            raise ValueError(f"'correctKey' {key!r} is not among the choices' keys {keys}")
        if correct is not None and correct != choices[key]:
            raise ValueError(f"'correct' {correct!r} differs from choice {key!r} ({choices[key]!r})")
        return texts, keys.index(key), (choices[key],)
    if correct is not None:
        index = texts.index(correct) if correct in texts else None
        return texts, index, (correct,)
    return texts, None, ()


def _split_facet(query_text: str) -> tuple[str, str | None]:
    """A CAR facet's ``query_text`` as (query title, facet text), split at the first " / "."""
    title, separator, facet_text = query_text.partition(FACET_SEPARATOR)
    return title, facet_text if separator else None


def _title(query_text: str | None, facet_text: str | None) -> str | None:
    suffix = f"{FACET_SEPARATOR}{facet_text}"
    if query_text is not None and facet_text and query_text.endswith(suffix):
        return query_text[: -len(suffix)]
    return query_text


def _tool_query_text(bank: QuestionBank, query_id: str, facet_text: str | None) -> str:
    title = bank.query_texts.get(query_id, "")
    return f"{title}{FACET_SEPARATOR}{facet_text}" if facet_text else title


def _items_hash(questions: list[Question]) -> int:
    """The tool's bank lines carry an integer ``hash``; exampp derives it from the question ids."""
    digest = hashlib.md5("\n".join(q.question_id for q in questions).encode("utf-8")).hexdigest()
    return int(digest[:8], 16)


def _required_str(record: dict, name: str) -> str:
    if name not in record:
        raise ValueError(f"missing field {name!r}")
    value = record[name]
    if not isinstance(value, str):
        raise ValueError(f"{name!r} must be a string, found {type(value).__name__}")
    return value


def _optional_str(record: dict, name: str) -> str | None:
    value = record.get(name)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name!r} must be a string or null, found {type(value).__name__}")
    return value
