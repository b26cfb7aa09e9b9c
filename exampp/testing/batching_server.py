"""A simulated continuous-batching inference server on 127.0.0.1, OpenAI-compatible, without a model.

:class:`BatchingServer` speaks what exampp's ``openai`` backend uses (``GET /v1/models``, ``POST
/v1/chat/completions`` and ``/v1/completions``, with ``logprobs``/``top_logprobs``; the HTTP side is
:mod:`exampp.testing.loopback`'s) and answers every prompt with a grade digit, chosen by the prompt's CRC-32,
at log-probability ln 0.6, the other five digits at ln 0.08 each as its top alternatives.

The time an answer takes is that of a continuous-batching server (vLLM, SGLang), simulated by one
scheduler thread rather than by a sleep per request. Requests queue; every step the scheduler runs
up to ``max_batch`` of them (those running, then the longest waiting, first come first served), and
a step takes ``base + per_seq * batch`` seconds whatever its requests do. A request needs one step
per ``prefill_chunk`` tokens of its prompt that the prefix cache lacks (rounded up; tokens are
whitespace words), then one step per token it generates (one: the digit). The prefix cache keeps
prompts' leading words in blocks of ``block`` words, each block keyed by the words up to its end
(vLLM's automatic prefix caching), least recently used out past ``cache_blocks``; a request's
blocks are cached once its prefill is done, and the blocks a later prompt starts with skip its
prefill. With ``max_in_flight``, a request beyond that many in flight (queued or running) is
answered 429 with Retry-After (``retry_after`` seconds), as hosted APIs limit concurrency.

Its :meth:`BatchingServer.stats` report what a run achieved against the server's capacity. A
workload whose requests needed s_1..s_n steps (the cache hits as they came) takes at least

    ideal = max(ceil(S / max_batch), max s_i) * base + per_seq * S,   S = s_1 + ... + s_n

seconds (:func:`ideal_seconds`: the steps cost ``base`` each and ``per_seq`` per request in them;
a step holds at most ``max_batch`` requests, and a request's steps come one after another), so its
capacity is n / ideal requests/s (``max_batch`` no more than ``max_in_flight`` where that is set) and
the utilisation of a run is ideal / its wall time (first request in to last answer out). The
scheduler keeps simulated time: a step that starts late (another thread held the interpreter) is
caught up on, up to :data:`LAG` seconds behind, so that the server's pace is its own and not the
test machine's.
"""
from __future__ import annotations

import math
import threading
import time
import zlib
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from exampp.testing.loopback import Loopback, envelope, error_body, json_handler

LAG = 0.05  # seconds the scheduler may run behind simulated time and still catch up
DIGITS = "012345"
_CHOSEN, _OTHER = math.log(0.6), math.log(0.08)  # the answer's probability, each other digit's


def ideal_seconds(steps: Sequence[int], max_batch: int, base: float, per_seq: float) -> float:
    """The least time in which a server of ``max_batch`` (a step taking ``base + per_seq * batch``
    seconds) completes requests needing ``steps`` steps each: every step full but for the last, and
    no fewer steps than the longest request's."""
    if not steps:
        return 0.0
    total = sum(steps)
    return max(-(-total // max_batch), max(steps)) * base + per_seq * total


class PrefixCache:
    """Prompts' leading words in blocks of ``block``, each keyed by all the words up to its end; least
    recently used out past ``capacity`` blocks."""

    def __init__(self, block: int = 16, capacity: int = 1 << 16) -> None:
        self.block = block
        self.capacity = capacity
        self._blocks: OrderedDict[int, None] = OrderedDict()

    def _keys(self, words: Sequence[str]) -> list[int]:
        keys, key = [], 0
        for end in range(self.block, len(words) + 1, self.block):
            key = hash((key, tuple(words[end - self.block:end])))  # chained: a block's key names its prefix
            keys.append(key)
        return keys

    def cached(self, words: Sequence[str]) -> int:
        """How many of ``words``' leading words the cache holds (whole blocks)."""
        hits = 0
        for key in self._keys(words):
            if key not in self._blocks:
                break
            self._blocks.move_to_end(key)
            hits += 1
        return hits * self.block

    def add(self, words: Sequence[str]) -> None:
        for key in self._keys(words):
            self._blocks[key] = None
            self._blocks.move_to_end(key)
        while len(self._blocks) > self.capacity:
            self._blocks.popitem(last=False)


@dataclass(eq=False)
class Job:
    """One request in the simulation: its prompt's words, the tokens it generates, its steps."""

    words: Sequence[str]
    decode: int
    prefill: int = 0  # steps, known once it is admitted (the cache is looked up then)
    done_steps: int = 0
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def steps(self) -> int:
        return self.prefill + self.decode


class Simulation:
    """The scheduler's state, with no clock: :meth:`admit` fills the batch, :meth:`advance` runs one step."""

    def __init__(self, *, max_batch: int = 256, prefill_chunk: int = 16, cache: PrefixCache | None = None) -> None:
        self.max_batch = max_batch
        self.prefill_chunk = prefill_chunk
        self.cache = cache if cache is not None else PrefixCache()
        self.waiting: deque[Job] = deque()
        self.running: list[Job] = []
        self.steps = self.full_steps = 0
        self.job_steps: list[int] = []  # steps of each request completed
        self.prompt_tokens = self.cached_tokens = 0

    def submit(self, words: Sequence[str], decode: int = 1) -> Job:
        job = Job(words, decode)
        self.waiting.append(job)
        return job

    @property
    def in_flight(self) -> int:
        return len(self.waiting) + len(self.running)

    def admit(self) -> int:
        """Fill the batch from the queue; its size."""
        while self.waiting and len(self.running) < self.max_batch:
            job = self.waiting.popleft()
            cached = self.cache.cached(job.words)
            job.prefill = -(-(len(job.words) - cached) // self.prefill_chunk)
            self.prompt_tokens += len(job.words)
            self.cached_tokens += cached
            self.running.append(job)
        return len(self.running)

    def advance(self) -> list[Job]:
        """One step of every running request; those it completes (their events not yet set)."""
        self.steps += 1
        self.full_steps += len(self.running) == self.max_batch
        finished = []
        for job in self.running:
            job.done_steps += 1
            if job.done_steps == job.prefill:
                self.cache.add(job.words)
            if job.done_steps == job.steps:
                finished.append(job)
                self.job_steps.append(job.steps)
        self.running = [job for job in self.running if job.done_steps < job.steps]
        return finished

    def step(self) -> list[Job]:
        self.admit()
        return self.advance()


@dataclass(frozen=True)
class Stats:
    """What the server did: requests, steps, simulated capacity and how much of it a run used."""

    completed: int
    refused: int  # answered 429 (beyond max_in_flight)
    seconds: float  # first request in to last answer out
    steps: int
    full_share: float  # share of the steps that ran a full batch
    busy_share: float  # share of ``seconds`` the server spent stepping
    ideal_seconds: float  # :func:`ideal_seconds` of the requests completed
    prompt_tokens: int
    cached_tokens: int  # prefill tokens the prefix cache saved

    @property
    def capacity(self) -> float:
        """Requests/s at which the server would complete this workload with every step full."""
        return self.completed / self.ideal_seconds if self.ideal_seconds else 0.0

    @property
    def rate(self) -> float:
        return self.completed / self.seconds if self.seconds else 0.0

    @property
    def utilisation(self) -> float:
        return self.ideal_seconds / self.seconds if self.seconds else 0.0

    @property
    def hit_rate(self) -> float:
        """Share of the prompt tokens served from the prefix cache."""
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


class BatchingServer(Loopback):
    """Serve ``name`` on 127.0.0.1 as a simulated continuous-batching server (see the module); use as a
    context manager. ``port`` 0 takes a free one."""

    def __init__(self, name: str = "judge", *, max_batch: int = 256, base: float = 0.02, per_seq: float = 0.0005,
                 prefill_chunk: int = 16, block: int = 16, cache_blocks: int = 1 << 16,
                 max_in_flight: int | None = None, retry_after: float = 1.0, port: int = 0) -> None:
        self.name = name
        self.base, self.per_seq = base, per_seq
        self.max_in_flight = max_in_flight
        self.retry_after = retry_after
        self.sim = Simulation(max_batch=max_batch, prefill_chunk=prefill_chunk,
                              cache=PrefixCache(block, cache_blocks))
        self.refused = 0
        self._busy = 0.0  # seconds spent stepping
        self._first: float | None = None  # when the first completion request came
        self._last = 0.0  # when the last one was answered
        self._stopping = False
        self._work = threading.Condition()  # guards the simulation and the figures
        self._scheduler = threading.Thread(target=self._schedule, name="batching-scheduler", daemon=True)
        super().__init__(json_handler, port)

    def __enter__(self) -> "BatchingServer":
        self._scheduler.start()
        return super().__enter__()

    def __exit__(self, *exc: object) -> None:
        with self._work:
            self._stopping = True
            self._work.notify_all()
        self._scheduler.join()
        super().__exit__(*exc)

    @property
    def batch_limit(self) -> int:
        """The largest batch the server runs: ``max_batch``, or fewer where it takes fewer in flight."""
        return min(self.sim.max_batch, self.max_in_flight or self.sim.max_batch)

    def step_seconds(self, batch: int) -> float:
        return self.base + self.per_seq * batch

    @property
    def in_flight(self) -> int:
        with self._work:
            return self.sim.in_flight

    def stats(self) -> Stats:
        with self._work:
            sim = self.sim
            seconds = self._last - self._first if self._first is not None else 0.0
            return Stats(completed=len(sim.job_steps), refused=self.refused, seconds=seconds, steps=sim.steps,
                         full_share=sim.full_steps / sim.steps if sim.steps else 0.0,
                         busy_share=min(self._busy / seconds, 1.0) if seconds else 0.0,
                         ideal_seconds=ideal_seconds(sim.job_steps, self.batch_limit, self.base, self.per_seq),
                         prompt_tokens=sim.prompt_tokens, cached_tokens=sim.cached_tokens)

    # --- the scheduler ---------------------------------------------------------------------------

    def _schedule(self) -> None:
        clock = 0.0  # when the last step ended, in simulated time
        while True:
            with self._work:
                while not self.sim.in_flight and not self._stopping:
                    self._work.wait()
                if self._stopping:  # what is in flight is never answered: its handlers are told so
                    for job in [*self.sim.waiting, *self.sim.running]:
                        job.done.set()
                    return
                seconds = self.step_seconds(self.sim.admit())
            start = max(clock, time.perf_counter() - LAG)
            clock = start + seconds
            time.sleep(max(clock - time.perf_counter(), 0.0))
            with self._work:
                finished = self.sim.advance()
                self._busy += seconds
                if finished:
                    self._last = time.perf_counter()
            for job in finished:
                job.done.set()

    # --- answering (called by loopback's handler, a thread per connection) -------------------

    def answer(self, method: str, path: str, headers: Any, body: dict[str, Any]) -> tuple[int, dict[str, str], dict]:
        if method == "GET" and path.endswith("/models"):
            return 200, {}, {"object": "list", "data": [
                {"id": self.name, "object": "model", "created": 0, "owned_by": "exampp-tests"}]}
        if method != "POST" or not path.endswith(("/chat/completions", "/completions")):
            return 404, {}, error_body(f"no route {method} {path}", "NotFoundError", 404)
        if body.get("model") != self.name:
            return 404, {}, error_body(f"The model `{body.get('model')}` does not exist.", "NotFoundError", 404)
        chat = path.endswith("/chat/completions")
        prompt = "\n".join(m["content"] for m in body["messages"]) if chat else body["prompt"]
        with self._work:
            if self._first is None:
                self._first = time.perf_counter()
            if self.max_in_flight is not None and self.sim.in_flight >= self.max_in_flight:
                self.refused += 1
                return 429, {"Retry-After": str(math.ceil(self.retry_after)),
                             "retry-after-ms": str(round(self.retry_after * 1000))}, error_body(
                    f"more than {self.max_in_flight} requests in flight", "rate_limit_exceeded", 429)
            job = self.sim.submit(prompt.split())
            self._work.notify()
        job.done.wait()
        if job.done_steps < job.steps:  # stopped meanwhile
            return 503, {}, error_body("the server is shutting down", "ServiceUnavailable", 503)
        top = (body.get("top_logprobs") if body.get("logprobs") else None) if chat else body.get("logprobs")
        return 200, {}, digit_completion(self.name, prompt, len(job.words), chat, top)


def digit_completion(name: str, prompt: str, prompt_tokens: int, chat: bool, top: int | None) -> dict:
    """The answer to ``prompt``: a digit, with ``top`` alternatives (the digits) where asked.

    :param name: the model's name
    :param prompt: the prompt, whose CRC-32 chooses the digit
    :param prompt_tokens: the prompt's length in tokens, for the usage
    :param chat: a chat completion, else a completion
    :param top: how many alternatives to give (None or 0: none)
    """
    digit = DIGITS[zlib.crc32(prompt.encode()) % len(DIGITS)]
    alternatives = [(digit, _CHOSEN)] + [(d, _OTHER) for d in DIGITS if d != digit]
    alternatives = alternatives[:top] if top else []
    choice: dict[str, Any] = {"index": 0, "finish_reason": "stop", "logprobs": None}
    if alternatives and chat:
        choice["logprobs"] = {"content": [{"token": digit, "logprob": _CHOSEN, "bytes": list(digit.encode()),
                                           "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())}
                                                            for t, lp in alternatives]}]}
    elif alternatives:
        choice["logprobs"] = {"tokens": [digit], "token_logprobs": [_CHOSEN], "top_logprobs": [dict(alternatives)],
                              "text_offset": [0]}
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 1, "total_tokens": prompt_tokens + 1}
    return envelope(name, digit, chat, choice, usage)
