"""Progress on stderr: a bar with items/s and an ETA on a terminal; in a log or a pipe (nohup, CI),
a line every :data:`LOG_EVERY` seconds instead, so that a long step is never silent."""
from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

LOG_EVERY = 10.0  # seconds between two progress lines where stderr is not a terminal


class ProgressLines:
    """A bar's stand-in for logs: ``update(n)`` counts, and prints ``desc: done/total unit (share),
    rate, ETA`` when :data:`LOG_EVERY` seconds have passed since the start or the last line."""

    def __init__(self, total: int, *, unit: str, desc: str, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.unit, self.desc = total, unit, desc
        self.done = 0
        self._stream = stream
        self._clock = clock
        self._start = self._last = clock()

    def update(self, n: int = 1) -> None:
        self.done += n
        now = self._clock()
        if now - self._last >= LOG_EVERY:
            self._last = now
            print(self.line(now - self._start), file=self._stream or sys.stderr, flush=True)

    def line(self, elapsed: float) -> str:
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = f"ETA {duration((self.total - self.done) / rate)}" if rate > 0 else "ETA unknown"
        share = f" ({self.done / self.total:.0%})" if self.total else ""
        return (f"{self.desc}: {self.done:,}/{self.total:,} {self.unit}s{share}, "
                f"{rate:.3g} {self.unit}s/s, {eta}")

    def close(self) -> None:
        """Nothing to clear: each line stands on its own."""


def notice(line: str) -> None:
    """A line on stderr saying what a step is doing while the user waits (a retry, a pause)."""
    print(line, file=sys.stderr, flush=True)


class Tally:
    """Lines for what may happen by the hundred (requests retried): the first is said at once, the
    rest are counted by reason and said together, at most one line every :data:`LOG_EVERY` seconds,
    so that a user waiting on a struggling server hears of it without a flood."""

    def __init__(self, subject: str, *, clock: Callable[[], float] = time.monotonic,
                 say: Callable[[str], None] = notice) -> None:
        self.subject = subject
        self._clock, self._say = clock, say
        self._counts: dict[str, int] = {}
        self._last: float | None = None
        self._lock = threading.Lock()

    def add(self, reason: str) -> None:
        """One more event, for ``reason`` (e.g. "timed out", "HTTP 500")."""
        with self._lock:
            self._counts[reason] = self._counts.get(reason, 0) + 1
            now = self._clock()
            if self._last is not None and now - self._last < LOG_EVERY:
                return
            since = "" if self._last is None else f" in the last {duration(now - self._last)}"
            counts, self._counts, self._last = self._counts, {}, now
        total = sum(counts.values())
        reasons = ", ".join(f"{reason} {n:,}" if total > 1 else reason for reason, n in counts.items())
        self._say(f"{self.subject}: retrying {total:,} request{'s' if total > 1 else ''}{since} ({reasons})")


def duration(seconds: float) -> str:
    """``seconds`` as people read a wait: 45s, 3m05s, 2h07m."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def progress_bar(total: int, enabled: bool, *, unit: str, desc: str) -> Any:
    """Where progress is wanted (and there is work): a tqdm bar on a terminal with tqdm installed,
    else :class:`ProgressLines`; None where it is not."""
    if not enabled or total == 0:
        return None
    if sys.stderr.isatty():
        try:
            from tqdm import tqdm
        except ImportError:
            pass
        else:
            return tqdm(total=total, unit=unit, desc=desc, file=sys.stderr, dynamic_ncols=True)
    return ProgressLines(total, unit=unit, desc=desc)


@contextmanager
def ticking(total: int, enabled: bool, *, unit: str, desc: str) -> Iterator[Callable[..., Any]]:
    """A function to call as each of ``total`` steps ends (``tick()``, or ``tick(n)``): it moves
    the progress :func:`progress_bar` shows, and does nothing where none is shown."""
    bar = progress_bar(total, enabled, unit=unit, desc=desc)
    try:
        yield bar.update if bar is not None else (lambda n=1: None)
    finally:
        if bar is not None:
            bar.close()
