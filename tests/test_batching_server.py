"""The simulated continuous-batching server (exampp/testing/batching_server.py): its capacity formula, its rate
limit, its prefix cache, and exampp's ``openai`` backend grading against it."""
from __future__ import annotations

import threading
import time

import openai
import pytest

from exampp.collection.questions import Question
from exampp.grading.base import Pair
from exampp.grading.registry import make_grader
from exampp.llm.backend import open_backend
from exampp.testing.batching_server import BatchingServer, PrefixCache, Simulation, ideal_seconds


def test_capacity_of_512_one_step_requests_at_batch_256_is_two_full_steps():
    # By hand: 512 sequence-steps in steps of 256 are 2 steps of 0.02 + 256 * 0.0005 = 0.148 s.
    assert ideal_seconds([1] * 512, 256, 0.02, 0.0005) == pytest.approx(0.296)
    # The longest request bounds it too: one 10-step request takes 10 steps, however empty.
    assert ideal_seconds([10, 1], 256, 0.02, 0.0005) == pytest.approx(10 * 0.02 + 11 * 0.0005)
    sim = Simulation(max_batch=256)
    jobs = [sim.submit([], decode=1) for _ in range(512)]
    assert [len(sim.step()), len(sim.step())] == [256, 256]
    assert (sim.steps, sim.full_steps, sim.in_flight, sim.job_steps) == (2, 2, 0, [1] * 512)
    assert all(job.done_steps == 1 for job in jobs)


def test_a_request_takes_a_step_per_prefill_chunk_of_uncached_words_then_its_decode_steps():
    sim = Simulation(max_batch=4, prefill_chunk=16, cache=PrefixCache(block=16))
    passage = [f"w{i}" for i in range(40)]
    first = sim.submit(passage, decode=1)
    sim.admit()
    assert first.prefill == 3  # ceil(40 / 16)
    while sim.in_flight:
        sim.step()
    second = sim.submit(passage[:32] + ["other"] * 8, decode=2)
    sim.admit()
    assert second.prefill == 1  # its first 2 blocks (32 words) were cached: ceil(8 / 16)
    assert (sim.prompt_tokens, sim.cached_tokens) == (80, 32)


@pytest.mark.slow
def test_a_server_that_takes_fewer_in_flight_than_its_batch_has_their_capacity():
    four = [1, 1, 1, 1]  # requests of one step each, as if completed
    for limit, steps in ((None, 1), (2, 2)):
        with BatchingServer(max_in_flight=limit, base=0.5) as server:
            server.sim.job_steps = four
        assert server.stats().ideal_seconds == pytest.approx(steps * 0.5 + 4 * 0.0005)  # 4 in one step, or in 2


@pytest.mark.slow
def test_beyond_max_in_flight_it_answers_429_with_retry_after():
    with BatchingServer(max_in_flight=2, base=0.5, retry_after=3) as server:
        client = openai.OpenAI(base_url=server.url, api_key="none", max_retries=0)
        ask = lambda: client.completions.create(model="judge", prompt="rate this", max_tokens=1)  # noqa: E731
        answers: list = []
        threads = [threading.Thread(target=lambda: answers.append(ask())) for _ in range(2)]
        for thread in threads:
            thread.start()
        while server.in_flight < 2:
            time.sleep(0.01)
        with pytest.raises(openai.RateLimitError) as refused:
            ask()
        for thread in threads:
            thread.join()
    assert (server.stats().completed, server.stats().refused) == (2, 1)
    assert refused.value.response.headers["Retry-After"] == "3"
    assert refused.value.response.headers["retry-after-ms"] == "3000"
    assert refused.value.message.endswith("more than 2 requests in flight")
    assert [answer.choices[0].text for answer in answers] == ["0", "0"]  # crc32("rate this") % 6
    stats = server.stats()
    assert (stats.completed, stats.refused) == (2, 1)


def test_prompts_sharing_a_passage_hit_the_prefix_cache():
    passage = " ".join(f"p{i}" for i in range(64))  # 4 blocks of 16 words
    prompts = [f"{passage} question {q} ?" for q in range(5)]  # 67 words each
    with BatchingServer() as server:
        client = openai.OpenAI(base_url=server.url, api_key="none", max_retries=0)
        for prompt in prompts:  # one at a time: each finds the blocks the ones before it cached
            client.completions.create(model="judge", prompt=prompt, max_tokens=1)
        stats = server.stats()
    assert (stats.prompt_tokens, stats.cached_tokens) == (5 * 67, 4 * 64)
    assert stats.hit_rate == pytest.approx(256 / 335)
    assert stats.completed == 5
    # The first needs ceil(67 / 16) = 5 prefill steps, the others ceil(3 / 16) = 1; each 1 decode step.
    assert stats.ideal_seconds == pytest.approx(ideal_seconds([6, 2, 2, 2, 2], 256, 0.02, 0.0005))


@pytest.mark.slow
@pytest.mark.parametrize("endpoint", ["chat", "completions"])
def test_the_openai_backend_grades_self_rating_against_it(endpoint):
    pairs = [Pair("q1", f"d{i}", f"passage {i} about the moon landing in 1969", Question("q1", f"k{j}", f"who {j}?"))
             for i in range(20) for j in range(3)]
    with BatchingServer(max_batch=16) as server:
        backend = open_backend("openai", "judge", base_url=server.url, endpoint=endpoint)
        try:
            judgments = make_grader("self-rating", backend).grade(pairs)
            usage = backend.usage
        finally:
            backend.close()
        stats = server.stats()
    assert stats.completed == len(pairs) == usage.requests
    assert usage.retries == 0
    seen = {j.grade for j in judgments}
    assert seen <= {0.0, 1.0, 2.0, 3.0, 4.0, 5.0} and len(seen) > 1
    for judgment in judgments:  # the server's digit at 0.6, each other digit at 0.08: they sum to 1
        assert judgment.answer == str(int(judgment.grade))
        expected = [0.08] * 6
        expected[int(judgment.grade)] = 0.6
        assert judgment.probabilities == pytest.approx(tuple(expected))
