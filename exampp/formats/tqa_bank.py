"""Textbook exams in the JSON of TQA (Textbook Question Answering, Kembhavi et al., CVPR 2017).

TQA's files (``tqa_v1_train.json``, ...) hold a list of lessons::

    [{"globalID": "L_0002", "lessonName": "...", "topics": {..}, ...,
      "questions": {"nonDiagramQuestions": {"NDQ_000001": {
                        "globalID": "NDQ_000001", "questionType": "Multiple Choice",
                        "beingAsked": {"processedText", "rawText"},
                        "answerChoices": {"a": {"idStructural": "a.", "processedText", "rawText"}, ..},
                        "correctAnswer": {"processedText": "a", "rawText"}}, ..},
                    "diagramQuestions": {..}}}]

Read as the reference tool's TQA loader reads them: a lesson is a query (``globalID`` its id,
``lessonName`` its text), a non-diagram question a question (its TQA id the question id,
``beingAsked.processedText`` the text, the ``processedText`` of ``answerChoices`` the choices,
``correctAnswer.processedText`` the key of the correct one, whose text is the answer).
Diagram questions, which need their image, are left out. A question whose answer key does
not fit its choices (a key that names no choice, fewer than two choices, a blank one: the
dataset has a few) is dropped with a warning, as the reference tool drops it; a file that is
not shaped like TQA's is an error naming the lesson and question, and the line where the
question's id is (line 1 when the file is one line, as TQA's own are).

Query ids: TREC CAR Y3 names lesson ``L_0002`` ``tqa2:L_0002`` (so do the reference tool's
generated CAR bank and graded files); ``exampp bank import --query-prefix tqa2:`` lines them up.

Written, a lesson per query holds its multiple-choice questions; facets, ``source`` and
``info`` are left out, and of the answers only the correct choice's text is kept
(:func:`left_out`). A question without keyed choices raises ValueError.
"""
from __future__ import annotations

import bisect
import json
import logging
import re
from collections.abc import Iterable
from typing import Any

from exampp.collection.questions import BankFile, Question, QuestionBank
from exampp.errors import InputError
from exampp.files.io import held_lines, parse_json
from exampp.formats.choice_bank import CHOICE_KEYS, answer_key, check_choices, correct_answers

log = logging.getLogger(__name__)

_OBJECT_KEY = re.compile(r'"([^"\\]*)"\s*:\s*\{')  # a question's id: a key whose value is an object
_GLOBAL_ID = re.compile(r'"globalID"\s*:\s*"([^"\\]*)"')  # a lesson's id
_NOT_HELD = ("facet_id", "facet_text", "source", "info")


class _Defect(ValueError):
    """A question the dataset holds but that cannot be graded as multiple choice: dropped."""


def read_tqa(lines: Iterable[tuple[int, str]], path: str) -> BankFile:
    """A bank from the numbered lines of a TQA JSON file."""
    text = "\n".join(line for _, line in held_lines(lines, path))
    document = parse_json(text, path)
    if not isinstance(document, list):
        raise InputError(path, None, "expected TQA's JSON: a list of lessons")
    where = _Where(text)
    bank = QuestionBank()
    found: dict[str, int | None] = {}
    dropped: list[str] = []
    for index, lesson in enumerate(document, start=1):
        if not isinstance(lesson, dict) or not isinstance(lesson.get("globalID"), str) or not lesson["globalID"]:
            raise InputError(path, None, f"lesson {index}: expected a lesson object with a 'globalID' string")
        lesson_id = lesson["globalID"]
        try:
            name, questions = _lesson(lesson)
        except ValueError as exc:
            raise InputError(path, where.line(where.ids, lesson_id), f"lesson {lesson_id!r}: {exc}") from None
        for question_id, item in questions.items():
            line = where.line(where.keys, question_id) or where.line(where.ids, lesson_id)
            try:
                question = _question(lesson_id, question_id, item)
                if question.question_id in bank:
                    raise ValueError("the question id is used twice")
            except _Defect as exc:
                dropped.append(f"{question_id}: {exc}")
                continue
            except ValueError as exc:
                raise InputError(path, line, f"lesson {lesson_id!r}, question {question_id!r}: {exc}") from None
            bank.add(question)
            found[question.question_id] = line
            if name:
                bank.query_texts.setdefault(lesson_id, name)
    if dropped:
        log.warning("%s: dropped %d questions whose answer key does not fit their choices, as the reference "
                    "tool does (%s)", path, len(dropped),
                    "; ".join(dropped[:3]) + ("; ..." if len(dropped) > 3 else ""))
    if not len(bank):
        raise InputError(path, None, "no non-diagram multiple-choice question in the TQA lessons")
    return BankFile(bank, found, len(dropped))


def _lesson(lesson: dict) -> tuple[str | None, dict]:
    """A lesson's name and non-diagram questions."""
    name = lesson.get("lessonName")
    if name is not None and not isinstance(name, str):
        raise ValueError("'lessonName' must be a string")
    questions = _object(lesson.get("questions", {}), "questions")
    return name, _object(questions.get("nonDiagramQuestions", {}), "nonDiagramQuestions")


def _object(value: Any, name: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{name!r} must be an object")
    return value


def _question(lesson_id: str, question_id: str, item: Any) -> Question:
    if not isinstance(item, dict):
        raise ValueError(f"expected a question object, found {type(item).__name__}")
    text = _processed_text(item, "beingAsked")
    choices = item.get("answerChoices")
    if not isinstance(choices, dict):
        raise ValueError("'answerChoices' must be an object {key: {\"processedText\": ..}}")
    texts = {key: _processed_text(choices, key) for key in choices}
    key = _processed_text(item, "correctAnswer")
    if not text.strip():
        raise _Defect("blank question text")
    try:
        keyed, correct = answer_key(texts, key, key_field="correctAnswer")
    except ValueError as exc:
        raise _Defect(str(exc)) from None
    assert correct is not None  # answer_key names the correct one of the choices given
    return Question(query_id=lesson_id, question_id=question_id, text=text, choices=keyed, correct_choice=correct,
                    answers=(keyed[correct],))


def _processed_text(item: dict, name: str) -> str:
    value = item.get(name)
    if not isinstance(value, dict) or not isinstance(value.get("processedText"), str):
        raise ValueError(f"{name!r} must be an object with a string 'processedText'")
    return value["processedText"]


class _Where:
    """Lines of a JSON text where an object key (a question's id) or a ``globalID`` value (a
    lesson's) first appears: TQA's ids are unique in the dataset, so the first is the one."""

    def __init__(self, text: str):
        self._breaks = [match.start() for match in re.finditer("\n", text)]
        self.keys: dict[str, int] = {}
        self.ids: dict[str, int] = {}
        for pattern, found in ((_OBJECT_KEY, self.keys), (_GLOBAL_ID, self.ids)):
            for match in pattern.finditer(text):
                found.setdefault(match.group(1), match.start())

    def line(self, offsets: dict[str, int], name: str) -> int | None:
        offset = offsets.get(name)
        return None if offset is None else bisect.bisect(self._breaks, offset) + 1


def tqa_document(bank: QuestionBank) -> str:
    """``bank`` as TQA's JSON: a lesson per query, in order of first appearance."""
    lessons: dict[str, dict[str, Any]] = {}
    for q in bank:
        if not q.choices:
            raise ValueError(f"question {q.question_id!r} has no choices, which the tqa format needs; "
                             "write the 'choices' or 'exampp' format")
        check_choices(q, "tqa")
        assert q.correct_choice is not None  # check_choices refuses choices without an answer key
        if q.query_id not in lessons:
            lessons[q.query_id] = {"globalID": q.query_id, "lessonName": bank.query_texts.get(q.query_id, ""),
                                   "questions": {"nonDiagramQuestions": {}, "diagramQuestions": {}}}
        keys = CHOICE_KEYS[: len(q.choices)]
        lessons[q.query_id]["questions"]["nonDiagramQuestions"][q.question_id] = {
            "globalID": q.question_id, "questionType": "Multiple Choice",
            "beingAsked": {"processedText": q.text, "rawText": q.text},
            "answerChoices": {key: {"idStructural": f"{key}.", "processedText": choice, "rawText": choice}
                              for key, choice in zip(keys, q.choices)},
            "correctAnswer": {"processedText": keys[q.correct_choice], "rawText": keys[q.correct_choice]},
        }
    return json.dumps(list(lessons.values()), indent=2, ensure_ascii=False) + "\n"


def left_out(question: Question) -> list[str]:
    """The fields of ``question`` that TQA's JSON leaves out (set ones only)."""
    lost = [name for name in _NOT_HELD if getattr(question, name) is not None]
    if question.answers != correct_answers(question):
        lost.append("answers")
    return lost
