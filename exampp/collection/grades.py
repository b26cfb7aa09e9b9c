"""Grades as data: one LLM judgment of one passage against one question, and the method that made it."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

_SEPARATOR = "|"

# The names under which grades imported from the reference tool's format are filed (its records
# tell only self-rated from question answering, and direct grades by their prompt class).
SELF_RATING = "self-rating"  # answerability rated 0-5
QA = "qa"  # extracted answer verified against a key: 1 correct, 0 wrong
DIRECT_PREFIX = "direct:"  # direct grading of a passage against the query, e.g. "direct:thomas"
DIRECT_QUESTION_ID = "direct"  # the question id direct grades are filed under (they have no question)


def text_hash(text: str) -> str:
    """Content address of a text: sha256 hex digest of its UTF-8 bytes.

    :param text: The text.
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Method:
    """How a grade was made: grading method, model, prompt (class or version).

    Two grades are comparable only when their methods are equal, so all three parts
    go into :attr:`method_id`, the key under which the store files grades.

    :param name: The grading method, e.g. ``self-rating``, ``qa``, ``direct:thomas``.
    :param model: The judge model, e.g. ``google/flan-t5-large``.
    :param prompt: The prompt's class or version, e.g. ``QuestionSelfRatedUnanswerablePromptWithChoices``.
    :raises ValueError: An empty part, or one holding ``|`` (the method id's separator).
    """

    name: str
    model: str
    prompt: str

    def __post_init__(self) -> None:
        for part in (self.name, self.model, self.prompt):
            if not part or _SEPARATOR in part:
                raise ValueError(f"method parts must be non-empty and free of {_SEPARATOR!r}: {part!r}")

    @property
    def method_id(self) -> str:
        return _SEPARATOR.join((self.name, self.model, self.prompt))

    @classmethod
    def parse(cls, method_id: str) -> "Method":
        parts = method_id.split(_SEPARATOR)
        if len(parts) != 3:
            raise ValueError(f"method id {method_id!r} is not 'name{_SEPARATOR}model{_SEPARATOR}prompt'")
        return cls(*parts)

    def __str__(self) -> str:
        return self.method_id


@dataclass(frozen=True)
class Grade:
    """The grade of one (query, passage, question) by one method.

    :param query_id: The query.
    :param passage_id: The passage graded.
    :param question_id: The exam question it was graded on.
    :param grade: Integer-valued for ratings (0-5) and correctness (0/1).
    :param method_id: The method that made it (:attr:`Method.method_id`).
    :param answer: The judge's answer text, where the method makes one.
    :param probabilities: The probability of each grade level 0, 1, ..., when the grader exposes it.
    """


    query_id: str
    passage_id: str
    question_id: str
    grade: float
    method_id: str
    answer: str | None = None
    probabilities: tuple[float, ...] | None = None
