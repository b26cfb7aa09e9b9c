"""Where the grader's model runs: the seam between the grading loop and its workers.

The runner (:func:`exampp.grading.runner.grade_pool`) claims chunks of pairs in the store, runs
the cascade and commits every grade; an :class:`Engine` only turns chunks into judgments. It
pulls the chunks from an iterator (so the runner claims a chunk just before it is graded) and
yields each one back with its judgments as soon as they are in, in any order, so that the
runner commits chunk by chunk while the others are being graded.

:class:`LocalEngine` grades in this process with the grader the runner was given: one chunk at a
time, or, for a grader whose backend serves concurrent calls (a served model: the requests of
several chunks then share the backend's requests in flight, and the server is not left idle while
the runner commits or a chunk's last requests drain), several chunks at once in threads.
:class:`exampp.grading.ray_engine.RayEngine` grades on Ray actors, one model replica each, several
chunks in flight.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Protocol, TypeVar

from exampp.grading.base import Grader, Judgment, Pair

Tag = TypeVar("Tag")  # what the runner attaches to a chunk to commit it when it comes back


class Engine(Protocol):
    def grade(self, chunks: Iterable[tuple[Tag, Sequence[Pair]]]) -> Iterator[tuple[Tag, list[Judgment]]]:
        """Each chunk back with the judgments of its pairs (in their order), as chunks complete.
        A chunk without pairs comes back with no judgments and costs no grader call."""
        ...


class LocalEngine:
    """Grading in this process: each chunk is graded when it is pulled, then yielded; up to
    ``in_flight`` chunks at once (default: the grader's :attr:`~exampp.grading.base.Grader.parallel_calls`),
    each in a thread of its own, yielded as they complete."""

    def __init__(self, grader: Grader, in_flight: int | None = None) -> None:
        self.grader = grader
        self.in_flight = max(1, grader.parallel_calls if in_flight is None else in_flight)

    def grade(self, chunks: Iterable[tuple[Tag, Sequence[Pair]]]) -> Iterator[tuple[Tag, list[Judgment]]]:
        if self.in_flight == 1:
            for tag, pairs in chunks:
                yield tag, self.grader.grade(pairs) if pairs else []
            return
        yield from self._threaded(iter(chunks))

    def _threaded(self, source: Iterator[tuple[Tag, Sequence[Pair]]]) -> Iterator[tuple[Tag, list[Judgment]]]:
        # Chunks are pulled (and so claimed by the runner) in this thread only, when a thread is free.
        pool = ThreadPoolExecutor(self.in_flight, thread_name_prefix="exampp-chunk")
        flight: dict[Future, Tag] = {}
        more, failure = True, None
        try:
            while True:
                while more and failure is None and len(flight) < self.in_flight:
                    item = next(source, None)
                    if item is None:
                        more = False
                    elif not item[1]:
                        yield item[0], []
                    else:
                        flight[pool.submit(self.grader.grade, item[1])] = item[0]
                if not flight:
                    break
                done, _ = wait(flight, return_when=FIRST_COMPLETED)
                for future in done:
                    tag = flight.pop(future)
                    if future.exception() is not None:
                        failure = failure or future.exception()
                    else:
                        yield tag, future.result()  # what completed is committed, even after a failure
            if failure is not None:
                raise failure
        finally:
            # A stop (an error, Ctrl-C, the runner closing this generator) waits for no chunk still out:
            # their pairs are not committed and the runner releases their claims.
            pool.shutdown(wait=False, cancel_futures=True)
