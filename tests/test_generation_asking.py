"""The ask-read-retry loop and the journaled runner that ``bank generate`` and ``exam generate``
share, on a scripted backend: what is sent in which batch, the conversation of a retry, what is
journaled, and what a rerun asks (nothing, a stale item, failures only when told)."""
from __future__ import annotations

import json

import pytest

from exampp.generation.asking import Answered, Asking, Task, Unusable, ask, ask_all
from exampp.generation.journal import Journal
from exampp.llm.backend import Backend, BackendError, BackendSpec, Capability, Usage


class Scripted(Backend):
    """Answers each prompt with ``answer(prompt)``; keeps every batch it was sent."""

    name = "scripted"
    capabilities = frozenset({Capability.GENERATE})

    def __init__(self, answer):
        self.answer = answer
        self.batches: list[list] = []
        self.usage = Usage()

    def generate(self, prompts, *, max_new_tokens=32, temperature=0.0):
        self.batches.append(list(prompts))
        self.usage.requests += len(prompts)
        return [self.answer(prompt) for prompt in prompts]


def read(answer: str) -> int:
    if not answer.isdigit():
        raise Unusable(f"{answer!r} is no number")
    return int(answer)


def corrective(problem: str) -> str:
    return f"A number, please: {problem}"


def turns(prompt) -> int:
    return 1 if isinstance(prompt, str) else len(prompt)


def test_unusable_answers_are_asked_again_together_in_their_own_conversations():
    # "a" answers at once, "b" on its third request, "c" never
    script = {"a": ["1"], "b": ["x", "y", "2"], "c": ["no", "nope", "never"]}
    backend = Scripted(lambda p: script[p if isinstance(p, str) else p[0][1]][turns(p) // 2])
    outcomes = list(ask(backend, ["a", "b", "c"], read, corrective, Asking(max_attempts=3)))
    assert outcomes == [Answered(0, 1, None, ("1",)), Answered(1, 2, None, ("x", "y", "2")),
                        Answered(2, None, "'never' is no number", ("no", "nope", "never"))]
    assert [len(batch) for batch in backend.batches] == [3, 2, 2]  # one batch per attempt
    assert backend.batches[2][0] == (("user", "b"), ("assistant", "x"), ("user", "A number, please: 'x' is no number"),
                                     ("assistant", "y"), ("user", "A number, please: 'y' is no number"))


def test_one_attempt_asks_once():
    backend = Scripted(lambda p: "no")
    assert list(ask(backend, ["a"], read, corrective, Asking(max_attempts=1))) == [
        Answered(0, None, "'no' is no number", ("no",))]
    with pytest.raises(ValueError, match="max_attempts must be at least 1"):
        Asking(max_attempts=0)


def entries(journal: Journal) -> list[tuple[str, dict]]:
    return [(line["key"], line["value"]) for line in map(json.loads, journal.path.read_text().splitlines()[1:])]


def test_the_runner_journals_each_outcome_and_a_rerun_asks_only_what_is_not_settled(tmp_path):
    answers = {"one": "1", "two": "2", "three": "3", "bad": "?"}
    backend = Scripted(lambda p: answers[p if isinstance(p, str) else p[0][1]])
    tasks = [Task(key, key) for key in answers]
    asking = Asking(max_attempts=2)
    journal = Journal(tmp_path / "out.jsonl", {"s": 1})
    run = ask_all(backend, journal, tasks, read, corrective, asking, chunk_size=3, progress=False, now=lambda: "D")
    assert [len(batch) for batch in backend.batches] == [3, 1, 1]  # a chunk of 3 (one retried), then the last
    assert (run.asked, run.usage.requests) == (4, 5)
    assert [(o.key, o.value, o.problem, o.attempts, o.model, o.asked) for o in run.outcomes.values()] == [
        ("one", 1, None, 1, "scripted", True), ("two", 2, None, 1, "scripted", True),
        ("three", 3, None, 1, "scripted", True), ("bad", None, "'?' is no number", 2, "scripted", True)]
    assert entries(journal)[3] == ("bad", {"problem": "'?' is no number", "answers": ["?", "?"], "model": "scripted",
                                           "date": "D", "text_md5": "bae60998ffe4923b131e3d6e4c19993e"})  # md5("bad")

    # the same again: nothing asked, and the generator (an unknown backend here) is not even opened
    again = ask_all(BackendSpec("no-such-backend"), Journal(tmp_path / "out.jsonl", {"s": 1}), tasks, read, corrective,
                    asking, progress=False)
    assert again.asked == 0 and again.outcomes == run.outcomes and again.usage == Usage()
    assert not any(o.asked for o in again.outcomes.values())

    # a task whose text changed is stale; a failed one is asked again only when told
    answers["bad"] = "4"
    backend.batches.clear()
    changed = [*tasks[:2], Task("three", "three, reworded"), tasks[3]]
    answers["three, reworded"] = "33"
    rerun = ask_all(backend, Journal(tmp_path / "out.jsonl", {"s": 1}), changed, read, corrective, asking,
                    progress=False)
    assert backend.batches == [["three, reworded"]] and rerun.outcomes["three"].value == 33
    retried = ask_all(backend, Journal(tmp_path / "out.jsonl", {"s": 1}), changed, read, corrective, asking,
                      retry_failed=True, progress=False)
    assert backend.batches[1:] == [["bad"]] and retried.outcomes["bad"].value == 4 and retried.asked == 1
    assert [key for key, _ in entries(journal)] == ["one", "two", "three", "bad", "three", "bad"]


def test_a_backend_error_while_asking_says_where_the_answers_are(tmp_path):
    def answer(prompt):
        if prompt == "second":
            raise BackendError("the server is gone")
        return "1"

    journal = Journal(tmp_path / "out.jsonl", {})
    with pytest.raises(BackendError, match=r"^the server is gone \(what was answered is kept in .*out\.jsonl\.journal"
                                           r"\.jsonl: the same command again goes on from there\)$"):
        ask_all(Scripted(answer), journal, [Task("first", "first"), Task("second", "second")], read, corrective,
                Asking(), chunk_size=1, progress=False)
    assert [key for key, _ in entries(journal)] == ["first"]


def test_a_chunk_size_below_1_is_refused_before_anything_is_asked(tmp_path):
    backend = Scripted(lambda p: "1")
    for size in (0, -1):
        with pytest.raises(ValueError, match=f"^chunk_size must be at least 1, not {size}$"):
            ask_all(backend, Journal(tmp_path / "out.jsonl", {}), [Task("a", "a")], read, corrective, Asking(),
                    chunk_size=size, progress=False)
    assert backend.batches == [] and not (tmp_path / "out.jsonl.journal.jsonl").exists()
