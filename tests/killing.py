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
