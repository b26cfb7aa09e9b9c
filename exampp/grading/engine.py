"""Where the grader's model runs: the seam between the grading loop and its workers.

The runner (:func:`exampp.grading.runner.grade_pool`) claims chunks of pairs in the store, runs
the cascade and commits every grade; an :class:`Engine` only turns chunks into judgments. It
pulls the chunks from an iterator (so the runner claims a chunk just before it is graded) and
yields each one back with its judgments as soon as they are in, in any order, so that the
runner commits chunk by chunk while the others are being graded.

:class:`LocalEngine` grades in this process, one chunk at a time, with the grader the runner
was given. :class:`exampp.grading.ray_engine.RayEngine` grades on Ray actors, one model replica
each, several chunks in flight.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol, TypeVar

from exampp.grading.base import Grader, Judgment, Pair

Tag = TypeVar("Tag")  # what the runner attaches to a chunk to commit it when it comes back


class Engine(Protocol):
    def grade(self, chunks: Iterable[tuple[Tag, Sequence[Pair]]]) -> Iterator[tuple[Tag, list[Judgment]]]:
        """Each chunk back with the judgments of its pairs (in their order), as chunks complete.
        A chunk without pairs comes back with no judgments and costs no grader call."""
        ...


class LocalEngine:
    """Grading in this process: each chunk is graded when it is pulled, then yielded."""

    def __init__(self, grader: Grader) -> None:
        self.grader = grader

    def grade(self, chunks: Iterable[tuple[Tag, Sequence[Pair]]]) -> Iterator[tuple[Tag, list[Judgment]]]:
        for tag, pairs in chunks:
            yield tag, self.grader.grade(pairs) if pairs else []
