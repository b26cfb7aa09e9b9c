"""What every grading method shares: the unit of work (a pair), its result, the grader interface.

A grader turns a batch of (passage, question) pairs of the same query into judgments. Direct
graders, which judge a passage against the query itself, get pairs whose question is the
query (question id :data:`DIRECT_QUESTION_ID`, text = the query title), so that pooling,
the store and scoring treat every method alike.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from exampp.collection.question_bank import Question
from exampp.collection.reference_grades import DIRECT_QUESTION_ID
from exampp.grades import Method

__all__ = ["DIRECT_QUESTION_ID", "Grader", "Judgment", "Pair"]


@dataclass(frozen=True)
class Pair:
    """One (passage, question) pair to grade."""

    query_id: str
    passage_id: str
    passage: str  # the passage text
    question: Question  # carries text, answer key (answers / choices + correct_choice), facet


@dataclass(frozen=True)
class Judgment:
    """A grader's verdict on one pair."""

    grade: float
    answer: str | None = None  # the extracted answer or raw model output, for people to inspect
    probabilities: tuple[float, ...] | None = None  # probability of each grade level 0..n, when known


class Grader(ABC):
    """One grading method. Subclasses set ``name`` and their prompt; ``method`` is the stable id
    (method + model + prompt version) recorded with every grade they produce."""

    name: str
    direct: bool = False  # True: judges passages against the query title (no exam questions)

    @property
    @abstractmethod
    def method(self) -> Method: ...

    @abstractmethod
    def grade(self, pairs: Sequence[Pair]) -> list[Judgment]:
        """Judgments in the order of ``pairs``; batching and device handling are the grader's."""
