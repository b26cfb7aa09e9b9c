"""The local engine with several chunks in flight (a served backend's ``parallel_calls``): the same
judgments as one chunk at a time, at most ``in_flight`` grader calls at once, chunks pulled only
when a thread is free, what completed before a failure still handed back, and the runner storing
exactly the grades the one-at-a-time engine stores."""
from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest

from exampp.collection.questions import Question
from exampp.grading.base import Judgment, Pair
from exampp.grading.engine import LocalEngine
from exampp.grading.runner import grade_pairs
from exampp.stores.grade_store import GradeStore
from fake_grader import FakeGrader, fake_grade


class Overlapping(FakeGrader):
    """The fake grader, each call taking ``sleep`` seconds, counting the calls that overlap; the
    call whose first passage is ``fail`` raises."""

    def __init__(self, sleep: float = 0.05, fail: str | None = None, parallel_calls: int = 1):
        super().__init__(sleep=sleep)
        self.fail = fail
        self.parallel_calls = parallel_calls
        self.running = self.most = 0
        self.lock = threading.Lock()

    def grade(self, pairs: Sequence[Pair]) -> list[Judgment]:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            if pairs[0].passage == self.fail:
                time.sleep(self.sleep / 25)  # fails well before the chunks beside it complete
                raise RuntimeError(f"cannot grade {self.fail}")
            return super().grade(pairs)
        finally:
            with self.lock:
                self.running -= 1


def pairs(n: int) -> list[Pair]:
    question = Question("q1", "q1/a", "what is it?")
    return [Pair("q1", f"p{i}", f"passage {i}", question) for i in range(n)]


def chunks(items: list[Pair], size: int) -> list[tuple[int, list[Pair]]]:
    return [(begin, items[begin:begin + size]) for begin in range(0, len(items), size)]


def test_several_chunks_in_flight_give_each_chunk_its_own_judgments_and_never_more_calls_than_threads():
    grader = Overlapping(parallel_calls=3)
    work = chunks(pairs(40), 4)
    pulled: list[int] = []

    def source():
        for tag, chunk in work:
            pulled.append(tag)
            yield tag, chunk

    seen = {}
    for tag, judgments in LocalEngine(grader).grade(source()):
        assert len(pulled) - len(seen) <= 3  # a chunk is pulled (claimed) only when a thread takes it
        seen[tag] = [j.grade for j in judgments]
    assert seen == {tag: [float(fake_grade(p.passage, p.question.text)) for p in chunk] for tag, chunk in work}
    assert grader.most == 3 and grader.calls == 10


def test_one_call_at_a_time_unless_the_grader_takes_more():
    grader = Overlapping(sleep=0.01)
    assert LocalEngine(grader).in_flight == 1
    list(LocalEngine(grader).grade(chunks(pairs(12), 3)))
    assert grader.most == 1


def test_an_empty_chunk_comes_back_without_a_call():
    grader = Overlapping(parallel_calls=2)
    back = dict(LocalEngine(grader).grade([("a", []), ("b", pairs(2)), ("c", [])]))
    assert back["a"] == back["c"] == [] and len(back["b"]) == 2 and grader.calls == 1


def test_a_failing_chunk_is_raised_after_the_chunks_that_completed_are_handed_back():
    grader = Overlapping(sleep=0.5, fail="passage 4", parallel_calls=3)
    back = []
    with pytest.raises(RuntimeError, match="cannot grade passage 4"):
        for tag, _ in LocalEngine(grader).grade(chunks(pairs(12), 2)):
            back.append(tag)
    # chunks 0 and 2 ran beside the failing one (4) and completed after it failed: they are handed back;
    # nothing was pulled once the failure was known.
    assert sorted(back) == [0, 2] and grader.calls == 2


@pytest.mark.slow
def test_the_runner_stores_the_same_grades_with_chunks_in_flight(tmp_path):
    items = pairs(50)
    stored = []
    for name, parallel in (("one", 1), ("four", 4)):
        grader = Overlapping(sleep=0.1, parallel_calls=parallel)  # long enough for the threads to overlap
        with GradeStore(tmp_path / f"{name}.sqlite") as store:
            summary = grade_pairs(items, grader, store, chunk_size=4, progress=False)
            assert summary.graded == 50
            stored.append(sorted((r.passage_id, r.grade) for r in store.records()))
        assert grader.most == parallel
    assert stored[0] == stored[1]
