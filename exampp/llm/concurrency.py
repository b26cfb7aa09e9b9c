"""How many requests a served judge keeps in flight: as many as the server sustains, found as it goes.

A continuous-batching server (vLLM, SGLang, TGI) answers hundreds of requests at once in about the
time it answers a few, and queues what it cannot batch: more requests in flight never lower its
throughput, and a client that sends a few at a time sets the pace itself. A hosted API instead limits
the rate or the requests in flight and answers 429 beyond, and a small server (Ollama, one request at
a time) answers late. :class:`Controller` is the requests-in-flight limit, AIMD as TCP's congestion
window is, but starting at its ``ceiling`` (``--concurrency``). A 429, a 503 or a time-out halves it
(never below 1), once per overload: requests sent before the cut that fail after it are the same
overload. The refused request itself waits as its Retry-After says, holding no slot. Afterwards the
limit grows a round (as many completions as the limit) at a time, while the round's throughput does
not fall by :data:`GAIN` below the best round's since the overload or its latency holds (within
:data:`SLACK` of the best round's): by half the way back to where the last overload came (BIC-TCP's
binary search), then by one past it. Not adaptive, the limit is the ceiling, always.

The controller is pure logic on a clock given to it (tests drive a fake one); :class:`Limiter` is
the asyncio side, a semaphore whose size follows the controller, first come first served.
"""
from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from email.utils import parsedate_to_datetime
from typing import NamedTuple

GAIN = 0.1  # a round's throughput this much below the best one's is a fall
SLACK = 1.5  # a round's mean latency up to this many times the best round's holds
MAX_PAUSE = 60.0  # seconds a Retry-After is waited at most (the SDK waits no longer)
OVERLOAD = frozenset({429, 503})  # the answers that say the server has too much to do


class Ticket(NamedTuple):
    """One request's slot: its number among those started, and when it started."""

    number: int
    started: float


class Controller:
    """The requests-in-flight limit (:attr:`limit`) for a server that takes at most ``ceiling`` at once,
    adapted to the completions and overloads reported to it (``adaptive``), timed by ``clock``."""

    _full: bool  # the round has had the limit's worth in flight (set by _new_round)

    def __init__(self, ceiling: int, *, adaptive: bool = True, clock: Callable[[], float] = time.monotonic) -> None:
        if ceiling < 1:
            raise ValueError(f"a concurrency limit must be at least 1, not {ceiling}")
        self.ceiling = ceiling
        self.adaptive = adaptive
        self.clock = clock
        self.window = float(ceiling)
        self.in_flight = 0  # requests started and not ended
        self._started = 0  # tickets given
        self._recovered = 0  # tickets up to this one were sent before the last cut
        self._best_latency = math.inf
        self._overloaded_at = float(ceiling)  # the limit at the last overload
        self._best_rate = 0.0  # the best round's throughput since the last overload
        self._idle_since = clock()
        self._new_round()

    @property
    def limit(self) -> int:
        """Requests in flight allowed now."""
        return max(1, int(self.window))

    def started(self) -> Ticket:
        """A request is sent: its ticket, to report its end with. A time with none in flight is left
        out of the round's: idle, the client says nothing of the server."""
        now = self.clock()
        if self.in_flight == 0:
            self._round_start += now - self._idle_since
        self._started += 1
        self.in_flight += 1
        self._full = self._full or self.in_flight >= self.limit
        return Ticket(self._started, now)

    def failed(self, ticket: Ticket) -> None:
        """The request of ``ticket`` ended without an answer."""
        self._ended(self.clock())

    def _ended(self, now: float) -> None:
        self.in_flight -= 1
        if self.in_flight == 0:
            self._idle_since = now

    def completed(self, ticket: Ticket) -> None:
        """The request of ``ticket`` was answered; at a round's end the limit grows, or holds. A round
        that never had the limit in flight (fewer requests to send) tells nothing of it: the limit holds."""
        now = self.clock()
        self._ended(now)
        self._count += 1
        self._latency += now - ticket.started
        if not self.adaptive or self._count < self._round_size:
            return
        if not self._full or self.window >= self.ceiling:
            self._new_round()
            return
        rate = self._count / max(now - self._round_start, 1e-9)
        latency = self._latency / self._count
        self._best_latency = min(self._best_latency, latency)
        holding = rate >= self._best_rate * (1 - GAIN)
        self._best_rate = max(self._best_rate, rate)
        if holding or latency <= self._best_latency * SLACK:
            # Back quickly towards where the last overload came, by half the way a round, then on by
            # one: most of the time is spent near what the server takes.
            self.window = min(self.window + max(1.0, (self._overloaded_at - self.window) / 2), float(self.ceiling))
        self._new_round()

    def overloaded(self, ticket: Ticket | None) -> None:
        """An attempt of ``ticket``'s request got a 429 or a 503, or timed out: the limit halves, unless
        this overload was met already."""
        if not self.adaptive:
            return
        if ticket is not None and ticket.number <= self._recovered:
            return
        self._overloaded_at = self.window
        self.window = max(1.0, self.window / 2)
        self._recovered = self._started
        self._best_rate = 0.0  # the rounds to come run at another limit: nothing to compare them with
        self._new_round()

    def _new_round(self) -> None:
        self._round_start = self.clock()
        self._round_size = self.limit
        self._count = 0
        self._latency = 0.0
        self._full = self.in_flight >= self.limit


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The seconds an answer's ``Retry-After-Ms`` or ``Retry-After`` header (seconds or an HTTP date)
    asks to wait, as the openai SDK reads them; None where there is none that reads."""
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            if scale != 1.0:
                continue
            try:
                seconds = parsedate_to_datetime(value).timestamp() - time.time()
            except (TypeError, ValueError):
                continue
        if math.isfinite(seconds):
            return seconds
    return None


class Limiter:
    """At most ``controller.limit`` slots held at once; the waiting get them in the order they asked. Use
    on one event loop."""

    def __init__(self, controller: Controller) -> None:
        self.controller = controller
        self.in_flight = 0
        self._waiting: deque[asyncio.Future[None]] = deque()

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[Ticket]:
        """Hold a slot for one request: its ticket. Leaving without an error reports it completed."""
        await self._acquire()
        ticket = self.controller.started()
        try:
            yield ticket
        except BaseException:
            self.controller.failed(ticket)
            self._release()
            raise
        self.controller.completed(ticket)
        self._release()

    async def _acquire(self) -> None:
        if not self._waiting and self.in_flight < self.controller.limit:
            self.in_flight += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        self._grant()
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # granted as it was cancelled: the slot goes on
                self._release()
            else:
                with contextlib.suppress(ValueError):  # given up on while waiting: taken out of the line already
                    self._waiting.remove(waiter)
            raise

    def _release(self) -> None:
        self.in_flight -= 1
        self._grant()

    def _grant(self) -> None:
        """Slots to the first waiting while there are slots."""
        while self._waiting and self.in_flight < self.controller.limit:
            waiter = self._waiting.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)
