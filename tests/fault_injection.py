"""The ``exampp`` command (with the fake grader) that kills itself with SIGKILL at the N-th call
of a file operation, to test what a crash at exactly that point leaves behind::

    EXAMPP_FAULT=fsync:3 python tests/fault_injection.py qrels -w WS     # killed at the 3rd os.fsync
    EXAMPP_FAULT=replace:0 EXAMPP_FAULT_COUNT=FILE python tests/fault_injection.py ...   # never; FILE gets the count

os.fsync is called when an output's content is complete, before it replaces its target
(os.replace): killing at the one leaves a finished temporary file, at the other the moment
before an output appears under its final name.
"""
from __future__ import annotations

import atexit
import os
import signal
import sys

import fake_grader


def _inject(operation: str, at: int, count_file: str | None) -> None:
    original = getattr(os, operation)
    calls = 0

    def faulty(*args, **kwargs):
        nonlocal calls
        calls += 1
        if calls == at:
            os.kill(os.getpid(), signal.SIGKILL)
        return original(*args, **kwargs)

    setattr(os, operation, faulty)
    if count_file:
        atexit.register(lambda: open(count_file, "w").write(str(calls)))


if __name__ == "__main__":
    operation, _, at = os.environ["EXAMPP_FAULT"].partition(":")
    _inject(operation, int(at), os.environ.get("EXAMPP_FAULT_COUNT"))
    fake_grader.register()
    from exampp.cli import main

    main(args=sys.argv[1:], prog_name="exampp")
