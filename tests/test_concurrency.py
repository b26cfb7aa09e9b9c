"""Adaptive concurrency (:mod:`exampp.llm.concurrency`): the controller on a fake clock, the asyncio
limiter, and the served backend against a server that takes N requests at once and answers 429 beyond."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

pytest.importorskip("openai")

from exampp.llm.backend import BackendError, open_backend
from exampp.llm.concurrency import Controller, Limiter, retry_after
from robustness.hostile_server import MODEL, Answer, HostileServer, Request, as_json, good, payload


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def rounds(controller: Controller, clock: Clock, n: int, *, seconds: float = 1.0,
           capacity: float | None = None) -> list[int]:
    """The limit after each of ``n`` rounds in which the limit's worth of requests start together and
    end together, ``seconds`` later (or as a server doing ``capacity`` a second takes them)."""
    limits = []
    for _ in range(n):
        size = controller.limit
        tickets = [controller.started() for _ in range(size)]
        clock.now += seconds if capacity is None else max(seconds, size / capacity)
        for ticket in tickets:
            controller.completed(ticket)
        limits.append(controller.limit)
    return limits


def test_the_limit_starts_at_the_ceiling_and_holds_there_without_overloads() -> None:
    clock = Clock()
    controller = Controller(100, clock=clock)
    assert controller.limit == 100
    assert rounds(controller, clock, 3, capacity=64) == [100, 100, 100]


def test_after_an_overload_the_limit_goes_back_by_halves_then_by_one_while_the_throughput_holds() -> None:
    clock = Clock()
    controller = Controller(1000, clock=clock)
    ticket = controller.started()
    controller.overloaded(ticket)  # 500
    controller.failed(ticket)
    assert rounds(controller, clock, 1) == [750]
    ticket = controller.started()
    controller.overloaded(ticket)  # 375, the last overload at 750
    controller.failed(ticket)
    # Every round takes as long, so the throughput rises with the limit: 375 + 187.5, + 93.75, ...
    assert rounds(controller, clock, 8) == [562, 656, 703, 726, 738, 744, 747, 748]


def test_the_limit_holds_while_the_throughput_falls_and_the_latency_grows() -> None:
    clock = Clock()
    controller = Controller(1000, clock=clock)
    ticket = controller.started()
    controller.overloaded(ticket)  # 500
    controller.failed(ticket)
    # A server that does 100 a second whatever is in flight: each round as long as its size says; a
    # round at 750 is no faster than one at 500 and takes 1.5 times as long: the limit holds there.
    assert rounds(controller, clock, 1, capacity=100) == [750]
    assert rounds(controller, clock, 3, capacity=50) == [750, 750, 750]  # the server slows down: half as fast


def test_an_overload_halves_the_limit_once_down_to_one() -> None:
    clock = Clock()
    controller = Controller(32, clock=clock)
    before = [controller.started() for _ in range(3)]
    controller.overloaded(before[0])
    assert controller.limit == 16
    controller.overloaded(before[1])  # sent before the cut: the same overload
    controller.overloaded(before[2])
    assert controller.limit == 16
    for _ in range(5):
        controller.overloaded(controller.started())
    assert controller.limit == 1
    assert controller.window == 1.0


def test_a_fixed_limit_never_moves() -> None:
    clock = Clock()
    fixed = Controller(5, adaptive=False, clock=clock)
    assert rounds(fixed, clock, 3) == [5, 5, 5]
    fixed.overloaded(fixed.started())
    assert fixed.limit == 5


def test_retry_after_reads_milliseconds_seconds_and_dates() -> None:
    assert retry_after({"retry-after-ms": "250"}) == 0.25
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after-ms": "soon", "retry-after": "2"}) == 2.0
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) < 0
    assert retry_after({"retry-after": "later"}) is None
    assert retry_after({}) is None


def test_the_limiter_gives_slots_in_order_within_the_limit_as_it_moves() -> None:
    controller = Controller(2, adaptive=False)
    limiter = Limiter(controller)
    order: list[int] = []

    async def request(i: int, hold: asyncio.Event) -> None:
        async with limiter.slot():
            order.append(i)
            await hold.wait()

    async def scenario() -> None:
        holds = [asyncio.Event() for _ in range(5)]
        tasks = [asyncio.create_task(request(i, holds[i])) for i in range(5)]
        await asyncio.sleep(0.01)
        assert (order, limiter.in_flight) == ([0, 1], 2)
        controller.window = 1.0  # as an overload would set it
        holds[0].set()
        await asyncio.sleep(0.01)
        assert (order, limiter.in_flight) == ([0, 1], 1)  # 1 still holds the one slot there is
        tasks[2].cancel()  # one that gives up waiting takes no slot
        holds[1].set()
        await asyncio.sleep(0.01)
        assert (order, limiter.in_flight) == ([0, 1, 3], 1)
        holds[3].set()
        await asyncio.sleep(0.01)
        assert (order, limiter.in_flight) == ([0, 1, 3, 4], 1)
        holds[4].set()
        await asyncio.gather(*tasks, return_exceptions=True)
        assert limiter.in_flight == 0

    asyncio.run(scenario())


class Limited:
    """A server that answers at most ``n`` completion requests at once, each after ``seconds``, and 429
    (Retry-After-Ms ``pause``) beyond; records how many it held at each answer it began."""

    def __init__(self, n: int, seconds: float, pause: int) -> None:
        self.n, self.seconds, self.pause = n, seconds, pause
        self.held = 0
        self.seen: list[int] = []  # requests held as each accepted one began
        self.refused = 0
        self._lock = threading.Lock()

    def __call__(self, request: Request) -> Answer:
        if request.method == "GET":
            return good(request)
        with self._lock:
            if self.held >= self.n:
                self.refused += 1
                return Answer(429, b'{"error": {"message": "too many"}}',
                              (("Content-Type", "application/json"), ("Retry-After-Ms", str(self.pause))))
            self.held += 1
            self.seen.append(self.held)
        try:
            time.sleep(self.seconds)
            return as_json(payload(request, request.prompt[-1]))  # an answer that tells the prompts apart
        finally:
            with self._lock:
                self.held -= 1


@pytest.mark.slow
def test_the_served_backend_settles_near_what_the_server_takes() -> None:
    n = 8
    prompts = [f"prompt {i}" for i in range(400)]
    server = Limited(n, seconds=0.08, pause=20)  # slow enough that the client, on a busy CPU, keeps up
    with HostileServer(server, lifetime=120) as hostile:
        with open_backend("openai", MODEL, base_url=hostile.url, concurrency=64) as backend:
            adaptive = backend.generate(prompts, max_new_tokens=1)
            usage = backend.usage
        half = server.seen[len(server.seen) // 2:]
        refused = server.refused
        with open_backend("openai", MODEL, base_url=hostile.url, concurrency=n,
                          adaptive_concurrency=False) as backend:
            fixed = backend.generate(prompts, max_new_tokens=1)
    assert adaptive == fixed == [p[-1] for p in prompts]
    assert refused > 0 and usage.requests == 400 and usage.retries == refused
    assert max(half) == n
    assert sum(half) / len(half) >= n / 2, (sum(half) / len(half), refused)


def test_an_overload_is_asked_again_without_spending_a_retry() -> None:
    sent: list[Request] = []

    def busy_twice(request: Request) -> Answer:
        if request.method == "GET":
            return good(request)
        sent.append(request)
        if len(sent) <= 2:
            return Answer(429 if len(sent) == 1 else 503, b'{"error": {"message": "busy"}}',
                          (("Content-Type", "application/json"), ("Retry-After-Ms", "10")))
        return good(request)

    with HostileServer(busy_twice) as server:
        with open_backend("openai", MODEL, base_url=server.url, max_retries=0) as backend:
            [text] = backend.generate(["Rate the passage."], max_new_tokens=1)
            assert (backend.usage.requests, backend.usage.retries) == (1, 2)
    assert (text, len(sent)) == ("4", 3)


def test_an_overload_for_ever_is_one_line_after_the_time_its_attempts_could_take() -> None:
    from robustness.hostile_server import failing

    with HostileServer(failing(503)) as server:
        with open_backend("openai", MODEL, base_url=server.url, timeout=0.2, max_retries=1) as backend:
            with pytest.raises(BackendError) as raised:
                backend.generate(["Rate the passage."], max_new_tokens=1)
        # Refused at once, asked again 0.5 s later (no Retry-After: the back-off), past 0.4 s: given up.
        assert str(raised.value) == (f"{server.url} answered HTTP 503 for model {MODEL}: always 503, for 0.4 s to "
                                     "one request (--timeout x (--max-retries + 1)): lower --concurrency, or try "
                                     "again later")
        assert len(server.completions()) == 2


def test_a_fixed_concurrency_from_the_config_file_or_a_flag_reaches_the_backend(tmp_path) -> None:
    from exampp.api.grade import GradeJob

    config = tmp_path / "exampp.toml"
    with HostileServer() as server:
        config.write_text(f'backend = "openai"\nmodel = "{MODEL}"\nbase_url = "{server.url}"\n'
                          "concurrency = 3\nadaptive_concurrency = false\n")
        for settings, adaptive in (({}, False), ({"adaptive_concurrency": True}, True)):
            job = GradeJob.configure(config, grader="self-rating", **settings)
            with job.backend_spec(job.grading_method()).open() as backend:
                assert (backend._controller.limit, backend._controller.adaptive) == (3, adaptive)
