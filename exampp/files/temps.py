"""The temporary files of atomic writes (:func:`exampp.files.io.atomic_write`) and their leftovers.

A temporary file is named after the file it will replace and the process that writes it,
``.<name>.<pid>-<host>.<random>.tmp``, so that a later write into the same folder can tell the
leftovers of a writer that died mid-write (kill -9, a lost machine) from a live writer's file, and
remove only those. ``<host>`` is a digest of the machine's name: a file that a process on another
machine writes into a shared folder is never taken for a leftover, its pid meaning nothing here.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import socket
from pathlib import Path

_SWEPT: set[str] = set()  # folders this process has rid of leftovers


@functools.cache
def _host() -> str:
    return hashlib.md5(socket.gethostname().encode()).hexdigest()[:8]


def writer_prefix(prefix: str) -> str:
    """The start of a temporary file's name: ``prefix`` (``.<name>.``), this process's tag, a dot."""
    return f"{prefix}{os.getpid()}-{_host()}."


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine may still be running (someone else's process counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # someone else's process; a pid no process can have: not ours
        pass
    return True


def remove_leftovers(folder: Path) -> None:
    """Remove the temporary files in ``folder`` (a resolved path, as :func:`os.path.realpath` gives)
    that processes of this machine which are gone left behind: once per folder and process, as a
    folder is first written into (a listing per write would make writing many files into one
    folder quadratic)."""
    key = os.fspath(folder)
    if key in _SWEPT:
        return
    # .<name or digest>.<pid>-<host>.<mkstemp's random part: lower-case letters, digits, underscores>.tmp
    pattern = re.compile(rf"\..+\.(\d{{1,10}})-{_host()}\.[a-z0-9_]+\.tmp")
    try:
        names = os.listdir(folder)
    except OSError:  # a folder that cannot be listed: nothing to remove
        return
    _SWEPT.add(key)
    for name in names:
        match = pattern.fullmatch(name)
        if match is not None and not process_alive(int(match.group(1))):
            with contextlib.suppress(FileNotFoundError):  # another writer removed it first
                os.unlink(os.path.join(folder, name))
