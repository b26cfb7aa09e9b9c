"""What every grading method shares: the unit of work (a pair), its verdict, the grader the runner drives.

A :class:`Grader` turns a batch of (passage, question) pairs of the same query into judgments; it
is a grading method (:class:`~exampp.grading.method.GradingMethod`, a value object) bound to the
backend that runs its model (:meth:`GradingMethod.bind`). Direct methods, which judge a passage
against the query itself, get pairs whose question is the query (question id
:data:`DIRECT_QUESTION_ID`, text = the query title), so that pooling, the store and scoring treat
every method alike.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from exampp.collection.grades import Method
from exampp.collection.questions import Question
from exampp.llm.backend import Usage

__all__ = ["Grader", "Judgment", "Pair"]


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
    """What the runner drives: ``method`` is the store id (method + judge + prompt version)
    recorded with every grade, ``grade`` judges pairs, ``usable`` says which questions it can grade."""

    name: str
    direct: bool = False  # True: judges passages against the query title (no exam questions)
    whole_passages: bool = False  # True: a passage's pairs are graded in one call (a listwise prompt)
    parallel_calls: int = 1  # grade() calls that may run at once, in threads (a served backend takes several)

    @property
    @abstractmethod
    def method(self) -> Method: ...

    @abstractmethod
    def grade(self, pairs: Sequence[Pair]) -> list[Judgment]:
        """Judgments in the order of ``pairs``."""

    def usable(self, question: Question) -> bool:
        """Whether this grader can grade ``question`` (it has the answer key or choices needed)."""
        return True

    @property
    def usage(self) -> Usage | None:
        """What its model has consumed so far (requests, tokens); None where it has none."""
        return None
