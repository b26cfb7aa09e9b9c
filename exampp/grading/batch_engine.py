"""Grading through the OpenAI Batch API (``exampp grade --backend openai --batch-api``), in rounds.

:class:`BatchEngine` pulls every chunk (the runner claims each) and grades it with a
:class:`~exampp.llm.openai.batch.Book` attached to the backend: a chunk whose requests all have answers
comes back at once (the runner commits it); the others stop at their first request without one,
recorded. The recorded requests go to the Batch API as batches, which are polled until they end and
downloaded into the store; then the chunks that waited are graded again, from the start, their answers
now in the book. A method that asks twice, the second request depending on the first answer (``qa``
then its ``verify=llm`` question, a reply asked again at another temperature), takes another round,
until every chunk is graded. The answers are dropped from the store once every grade is committed.

Before anything is submitted, the open batches the store keeps for the server and model (a job killed
while they ran) are awaited: their requests are not submitted again. Claims last
:data:`~exampp.stores.grade_store.CLAIM_SECONDS`: a batch that runs longer may see another process on the same store
grade its pairs directly meanwhile (the grades are the same; the Batch API's are then not needed).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace

from exampp.files.io import PathLike
from exampp.grading.base import Grader, Judgment, Pair
from exampp.grading.engine import Tag
from exampp.llm.openai.backend import OpenAIBackend
from exampp.llm.openai.batch import POLL_SECONDS, BatchClient, Book, Deferred
from exampp.progress import notice
from exampp.stores.grade_store import GradeStore


class BatchEngine:
    """Grade ``grader`` (bound to ``backend``) through the Batch API of ``backend``'s server, keeping the
    batches and their answers in the grade store at ``store`` (a connection of its own). ``price``:
    dollars per million prompt and completion tokens, for the estimate; ``report``: where progress goes."""

    def __init__(self, grader: Grader, backend: OpenAIBackend, store: PathLike, *, poll_seconds: float = POLL_SECONDS,
                 price: tuple[float, float] | None = None, report: Callable[[str], None] = notice) -> None:
        self.grader = grader
        self.backend = backend
        self.store_path = store
        self.poll_seconds = poll_seconds
        self.price = price
        self.report = report

    def grade(self, chunks: Iterable[tuple[Tag, Sequence[Pair]]]) -> Iterator[tuple[Tag, list[Judgment]]]:
        backend = self.backend
        with GradeStore(self.store_path) as store:
            client = BatchClient(backend, store.batches, self.grader.method.method_id, poll_seconds=self.poll_seconds,
                                 price=self.price, report=self.report)
            leader_first = backend.leader_first
            try:
                book = client.book()
                client.finish_open(book)  # a killed job's batches first: their requests are not submitted again
                # Every prompt of a call is looked up before the first Deferred ends it: none waits for another.
                backend.book, backend.leader_first = book, False
                waiting: list[tuple[Tag, Sequence[Pair]]] = []
                yield from self._round(book, chunks, waiting)
                while waiting:
                    if not book.recorded and not store.batches.pending(backend.url, backend.model):
                        raise RuntimeError("chunks wait for the Batch API with no request recorded for it")
                    if book.recorded:
                        client.submit(book.recorded)
                        book.recorded = {}
                    client.finish_open(book)
                    graded, waiting = waiting, []
                    yield from self._round(book, graded, waiting)
                # Every chunk is committed (the runner resumed us after each): the answers are not needed.
                # Kept until now, since chunks share requests (qa's verify question for the same answer).
                store.batches.forget_answers(backend.url, backend.model, self.grader.method.method_id)
            finally:
                backend.book, backend.leader_first = None, leader_first
                client.close()

    def _round(self, book: Book, chunks: Iterable[tuple[Tag, Sequence[Pair]]],
               waiting: list[tuple[Tag, Sequence[Pair]]]) -> Iterator[tuple[Tag, list[Judgment]]]:
        """Grade each chunk: yield those that complete, and add the others to ``waiting``."""
        for tag, pairs in chunks:
            judgments = self._try(book, pairs) if pairs else []
            if judgments is None:
                waiting.append((tag, pairs))
            else:
                yield tag, judgments

    def _try(self, book: Book, pairs: Sequence[Pair]) -> list[Judgment] | None:
        """The chunk's judgments, or None where a request of it awaits the Batch API (recorded). An
        attempt cut short counts nothing in the backend's usage: the one that completes counts it all."""
        before = replace(self.backend.usage)
        try:
            return self.grader.grade(pairs)
        except Deferred:
            self.backend.restore_usage(before)
            return None
