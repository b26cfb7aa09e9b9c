"""Killing a subprocess at a chosen moment, for the tests that a killed run resumes without loss."""
from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable


def kill_when(process: subprocess.Popen, ready: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    """SIGKILL ``process`` as soon as ``ready()`` holds; fail if it ends first or ``what`` takes too long."""
    deadline = time.monotonic() + timeout
    try:
        while not ready():
            assert process.poll() is None, "the run ended before it could be killed: " + process.stderr.read().decode()
            assert time.monotonic() < deadline, f"{what}: not in time"
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == -signal.SIGKILL


def ctrl_c_at_chunk(monkeypatch, chunk: int) -> None:
    """Generation (bank or exam) stopped by a Ctrl-C as it asks its ``chunk``-th chunk (from 1): the
    chunks before it are answered and journaled as usual."""
    from exampp.generation import asking

    asked, ask = [], asking.ask

    def stopped(*args, **kwargs):
        asked.append(1)
        if len(asked) == chunk:
            raise KeyboardInterrupt
        return ask(*args, **kwargs)

    monkeypatch.setattr(asking, "ask", stopped)
