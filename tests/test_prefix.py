"""Cache-friendly order for served judges: which prompts wait for another (exampp.llm.prefix), the
passage-first self-rating prompt, and the openai backend sending a passage's prompts after the first of
them, against the simulated continuous-batching server (exampp/testing/batching_server.py)."""
from __future__ import annotations

import math
import threading
import time
import zlib
from pathlib import Path

import pytest

from exampp.collection.questions import Question
from exampp.grading.base import Pair
from exampp.grading.method_prompts import SELF_RATING, SELF_RATING_PASSAGE_FIRST, SELF_RATING_PROMPTS
from exampp.grading.registry import make_grader, parse_method
from exampp.grading.runner import grade_pairs
from exampp.llm.backend import BackendError, open_backend
from exampp.llm.prefix import PREFIX_MIN, leaders
from exampp.stores.grade_store import GradeStore
from exampp.testing.batching_server import DIGITS, BatchingServer, PrefixCache, Simulation
from exampp.testing.openai_server import OpenAIServer, Seen

INSTRUCTION = SELF_RATING.template.split("Question: ")[0]
BLOCK = 16  # words a block of the simulated server's prefix cache holds (its default)


def passage(k: int, words: int = 40) -> str:
    """A passage whose words are its own: no two passages share a first word."""
    return " ".join(f"p{k}w{i}" for i in range(words))


def pairs_of(passages: list[str], questions: int) -> list[Pair]:
    """``questions`` questions on each passage, a passage's pairs together; no two questions share a first word."""
    return [Pair(f"q{k}", f"d{k}", text, Question(f"q{k}", f"Q{k}.{j}", f"Q{k}.{j} is it said there?"))
            for k, text in enumerate(passages) for j in range(questions)]


def rendered(pairs: list[Pair], prompt=SELF_RATING_PASSAGE_FIRST) -> list[str]:
    return [prompt.render(context=p.passage, question=p.question.text) for p in pairs]


# --- which prompts wait ------------------------------------------------------------------------------


def test_passage_first_prompts_wait_for_the_first_prompt_of_their_passage():
    texts = rendered(pairs_of([passage(0), passage(1), passage(2)], 3))
    assert leaders(texts) == [None, 0, 0, None, 3, 3, None, 6, 6]


def test_a_passage_split_up_in_the_call_still_waits_for_its_first_prompt():
    pairs = pairs_of([passage(0), passage(1)], 2)
    texts = rendered([pairs[0], pairs[2], pairs[1], pairs[3]])
    assert leaders(texts) == [None, None, 0, 1]


def test_question_first_prompts_never_wait():
    # The papers' prompt puts the question first: prompts of one passage part after the instruction.
    pairs = pairs_of([passage(0), passage(1), passage(2)], 3)
    assert leaders(rendered(pairs, SELF_RATING)) == [None] * 9


def test_what_every_prompt_of_the_call_shares_forms_no_group():
    # One passage's prompts alone: they share the passage with each other, which the call shares too.
    assert leaders(rendered(pairs_of([passage(0)], 4))) == [None] * 4


def test_a_shared_part_shorter_than_prefix_min_forms_no_group():
    head = "x" * 50
    short, long = "a" * (PREFIX_MIN - 1), "a" * PREFIX_MIN
    assert leaders([head + short + "1", head + short + "2", head + "b"]) == [None, None, None]
    assert leaders([head + long + "1", head + long + "2", head + "b"]) == [None, 0, None]
    # A prompt that ends where the group's shared part ends is in it.
    assert leaders([head + long, head + long + "2", head + "b"]) == [None, 0, None]


def test_no_prompt_one_prompt_and_identical_prompts():
    assert leaders([]) == []
    assert leaders(["a" * 1000]) == [None]
    # Identical prompts share everything the call shares: nothing beyond it to wait for.
    assert leaders(["a" * 1000] * 3) == [None, None, None]


# --- the passage-first prompt --------------------------------------------------------------------------


def test_passage_first_is_the_self_rating_prompt_with_context_before_question():
    assert SELF_RATING_PROMPTS["passage-first"] is SELF_RATING_PASSAGE_FIRST
    assert SELF_RATING_PASSAGE_FIRST.template == INSTRUCTION + "Context: {context}\nQuestion: {question}"
    assert SELF_RATING.template == INSTRUCTION + "Question: {question}\nContext: {context}"
    method = parse_method("self-rating(prompt=passage-first)")
    assert str(method) == "self-rating(prompt=passage-first)"
    assert method.method_id("judge").method_id == "self-rating|judge|self-rating-passage-first@v1"
    assert parse_method("self-rating").method_id("judge").method_id == "self-rating|judge|self-rating@v1"


def test_fitting_cuts_the_passage_before_the_question_and_keeps_the_question():
    question, context = "what is it?", "word " * 400
    with BatchingServer() as server:
        # 4 characters a token, estimated: 800 characters, the instruction about 550 of them
        backend = open_backend("openai", "judge", base_url=server.url, max_input_tokens=200)
        try:
            fitted = backend.fit(SELF_RATING_PASSAGE_FIRST, context=context, question=question)
            assert backend.usage.cut_contexts == 1
        finally:
            backend.close()
    room = 4 * (200 - math.ceil(len(SELF_RATING_PASSAGE_FIRST.render(context="", question=question)) / 4))
    assert fitted == INSTRUCTION + f"Context: {context[:room]}\nQuestion: {question}"


# --- against the simulated server ----------------------------------------------------------------------


def cached_words(words: list[str], finished: list[list[str]]) -> int:
    """The simulated cache's hit for ``words`` when ``finished`` prompts have been prefilled: whole blocks."""
    shared = max((next((i for i, (a, b) in enumerate(zip(words, other)) if a != b), min(len(words), len(other)))
                  for other in finished), default=0)
    return shared // BLOCK * BLOCK


def graded(tmp: Path, warm: list[Pair], pairs: list[Pair], *, leader_first: bool) -> tuple[list, int]:
    """The store's grades (with answers and probabilities, as filed) and the prefix cache's hits after
    grading ``warm``, then ``pairs``, with self-rating(prompt=passage-first) on a fresh simulated server."""
    with BatchingServer() as server, GradeStore(tmp / f"{leader_first}.sqlite") as store:
        backend = open_backend("openai", "judge", base_url=server.url)
        backend.leader_first = leader_first
        try:
            grader = make_grader("self-rating(prompt=passage-first)", backend)
            grade_pairs(warm, grader, store, progress=False)
            grade_pairs(pairs, grader, store, progress=False)
        finally:
            backend.close()
        rows = store.grades(probabilities=True).values.tolist()
        return rows, server.stats().cached_tokens


@pytest.mark.slow
def test_leader_first_has_the_server_compute_each_passage_once_with_the_same_grades(tmp_path):
    # Why the counts are not timing-dependent: the server caches a request's blocks when its prefill is
    # done, before it answers. The warm-up pair is graded (answered) before the rest is sent, so every
    # prompt finds its blocks: the instruction and "Context:". With leader-first a prompt waits for its
    # passage's first to be answered, so it finds that one's blocks too: instruction, passage and
    # "Question:". Nothing in the cache can match further, whatever else has been answered meanwhile
    # (no two passages share a first word, no two questions either: checked below), so each prompt's
    # hit is exactly that, and no order does better: the first of a passage's prompts to be admitted
    # finds none of its passage's blocks. All at once, the server's own simulation, with no clock, admits
    # every prompt before any prefill is done: only the warm-up's blocks. The openai backend without
    # leader-first sends as the limiter allows, so its count depends on timing, within those two.
    warm = pairs_of(["warm " + passage(9)], 1)
    pairs = pairs_of([passage(k) for k in range(4)], 5)
    warm_words = rendered(warm)[0].split()
    words = [text.split() for text in rendered(pairs)]
    others = [[w for p, w in zip(pairs, words) if p.passage != pair.passage] for pair in pairs]
    mates = [[w for j, (p, w) in enumerate(zip(pairs, words)) if p.passage == pair.passage and j != i]
             for i, pair in enumerate(pairs)]
    assert [cached_words(w, [warm_words] + o) for w, o in zip(words, others)] == [80] * 20  # instruction: 5 blocks
    assert {cached_words(w, [m]) for w, ms in zip(words, mates) for m in ms} == {128}  # and the passage: 8
    sure = 4 * 80 + 16 * 128  # a passage's first finds the instruction, its other 4 the passage too

    sim = Simulation(cache=PrefixCache(BLOCK))
    for batch in ([warm_words], words):  # all at once, after the warm-up is done
        for w in batch:
            sim.submit(w)
        while sim.in_flight:
            sim.step()
    all_at_once = sim.cached_tokens
    assert all_at_once == 20 * 80

    first_rows, first_cached = graded(tmp_path, warm, pairs, leader_first=True)
    plain_rows, plain_cached = graded(tmp_path, warm, pairs, leader_first=False)
    assert first_cached == sure > all_at_once
    assert all_at_once <= plain_cached <= sure
    assert first_rows == plain_rows
    # The grades are the server's answers to these very prompts, in the pairs' order.
    expected = {(p.passage_id, p.question.question_id): float(DIGITS[zlib.crc32(text.encode()) % len(DIGITS)])
                for p, text in zip(warm + pairs, rendered(warm + pairs))}
    assert {(row[1], row[2]): row[4] for row in first_rows} == expected


def test_a_prompt_is_sent_once_the_first_of_its_passage_has_ended_even_in_failure():
    # The server sees a follower only after its leader's answer was made (the client waits for it to
    # arrive), so the order of these events is the order checked, whatever the timing. The leaders are
    # slow, so that a follower sent at once (as before) arrives while its leader is still answered.
    pairs = pairs_of([passage(0), passage(1)], 3)
    texts = rendered(pairs)
    events: list[tuple[str, int]] = []
    lock = threading.Lock()

    def reply(request: Seen) -> str:
        i = texts.index(request.prompt)
        with lock:
            events.append(("in", i))
        if i in (0, 3):
            time.sleep(0.2)
        with lock:
            events.append(("out", i))
        if i == 3:  # the second passage's leader: the connection drops, unanswered
            raise ConnectionAbortedError("dropped")
        return "4"

    with OpenAIServer(reply=reply, logprobs=False) as server:
        backend = open_backend("openai", "tiny", base_url=server.url, max_retries=0)
        try:
            with pytest.raises(BackendError, match=f"^{server.url} closed the connection for model tiny before "
                                                     "its answer was whole: Server disconnected"):
                backend.generate(texts, max_new_tokens=1)
            failed = events[:]
            assert backend.generate(texts[:3], max_new_tokens=1) == ["4"] * 3  # the backend goes on
        finally:
            backend.close()
    assert {("in", 0), ("out", 0), ("in", 1), ("in", 2), ("in", 3), ("out", 3)} <= set(failed)
    for leader, followers in ((0, (1, 2)), (3, (4, 5))):  # those of the failed leader may have been cancelled
        assert all(failed.index(("out", leader)) < failed.index(("in", f)) for f in followers if ("in", f) in failed)
