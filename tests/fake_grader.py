"""A deterministic grader for tests: grade = md5(passage text, question text) mod 6.

It records every pair it sees, can sleep per call (so that a subprocess can be killed
mid-run), and registers itself in the method registry as "fake" (a method without a backend). Run as a script it is the
``exampp`` command with that grader available::

    FAKE_GRADER_SLEEP=0.2 python tests/fake_grader.py grade examples/runs/ --grader fake ...

With ``FAKE_GRADER_LOG=FILE`` it appends a line ``<md5 of passage>\t<md5 of question>`` per pair
it grades to FILE, so that tests can see which process graded what.
"""
from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from exampp.collection.grades import Method
from exampp.collection.questions import Question
from exampp.grading.base import Grader, Judgment, Pair
from exampp.grading.method import GradingMethod

NAME = "fake"


def fake_grade(passage: str, question: str) -> int:
    """The grade the fake grader gives: independent of ids, a function of the two texts only."""
    return int(hashlib.md5(f"{passage}\x00{question}".encode("utf-8")).hexdigest(), 16) % 6


class FakeGrader(Grader):
    name = NAME

    def __init__(self, sleep: float = 0.0, direct: bool = False, requires_answers: bool = False,
                 log: str | None = None):
        self.sleep = sleep
        self.log = log
        self.direct = direct
        self.requires_answers = requires_answers
        self.seen: list[tuple[str, str]] = []  # (passage text, question text) per pair graded
        self.calls = 0

    @property
    def method(self) -> Method:
        return Method(NAME, "md5-mod-6", "v1")

    def usable(self, question: Question) -> bool:
        return bool(question.answers) or not self.requires_answers

    def grade(self, pairs: Sequence[Pair]) -> list[Judgment]:
        self.calls += 1
        self.seen.extend((p.passage, p.question.text) for p in pairs)
        return judge(pairs, self.sleep, self.log)


def judge(pairs: Sequence[Pair], sleep: float, log: str | None) -> list[Judgment]:
    """The fake judgments of ``pairs``, after ``sleep`` seconds, each pair logged to ``log`` when given."""
    if sleep:
        time.sleep(sleep)
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.writelines(f"{_md5(p.passage)}\t{_md5(p.question.text)}\n" for p in pairs)
    grades = [fake_grade(p.passage, p.question.text) for p in pairs]
    return [Judgment(float(g), answer=f"g{g}") for g in grades]


def _md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class FakeMethod(GradingMethod):
    """The fake grader as a grading method without a model, bound and run as any method is."""

    name = NAME
    description = "md5 of the two texts mod 6 (tests)"
    default_backend = None
    judge = "md5-mod-6"
    top_grade = 5
    tau = 4.0

    @property
    def prompt_id(self) -> str:
        return "v1"

    def grade(self, backend, pairs: Sequence[Pair]) -> list[Judgment]:
        return judge(pairs, float(os.environ.get("FAKE_GRADER_SLEEP", "0")), os.environ.get("FAKE_GRADER_LOG"))


def use_method(monkeypatch, cls: type[GradingMethod] = FakeMethod) -> None:
    """Make ``cls`` a known grading method for one test (``monkeypatch`` removes it afterwards)."""
    from exampp.grading import method, registry

    registry.methods()  # discovered first, so that the test's entry is the one removed afterwards
    monkeypatch.setitem(method.registered(), cls.name, cls)


def register() -> None:
    from exampp.grading import method

    method.register(FakeMethod)


if __name__ == "__main__":
    register()
    from exampp.cli import main

    main(args=sys.argv[1:], prog_name="exampp")
