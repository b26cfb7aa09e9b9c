"""What every robustness test asserts, and the plumbing to feed readers: scratch folders,
FIFOs fed by a thread (a process substitution ``<(zcat run.gz)``), standard input as a pipe.

A reader may return a result or raise :class:`~exampp.errors.InputError`, whose message is one
line ``PATH:LINE: message`` or ``PATH: message`` with PATH the file given (``<stdin>`` for
``-``). Any other exception fails the test, with the traceback hypothesis shrank it to.
"""
from __future__ import annotations

import functools
import gzip
import io
import os
import re
import sys
import tempfile
import threading
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import given, settings

from exampp.collection.ids import id_problem
from exampp.errors import ExamppError, InputError

# Examples run per test (hostile inputs tried), printed at the end of the session.
TRIED: Counter[str] = Counter()
_MESSAGE = re.compile(r"(?::(?P<line>\d+))?: (?P<message>\S.*)", re.DOTALL)


def streamed(path: Any) -> dict:
    """A run file's rankings as RunFile hands them out, starting afresh at a RESTART."""
    from exampp.collection.runs import Restart
    from exampp.formats.trec_run import RunFile

    rankings: dict = {}
    for block in RunFile(path).blocks():
        if isinstance(block, Restart):
            rankings.clear()
        else:
            rankings[block[0]] = block[1]
    return rankings


def examples(n: int) -> int:
    """``n`` examples per 100 of the profile's max_examples (the ci profile has 250, thorough 2500):
    ``n`` says how much a test gets next to the others."""
    return max(1, n * settings.default.max_examples // 100)


def tries(n: int, **strategies: Any) -> Callable:
    """``@given(**strategies)`` with ``examples(n)`` examples, each counted in :data:`TRIED`."""

    def decorate(test: Callable) -> Callable:
        @functools.wraps(test)
        def counted(*args: Any, **kwargs: Any) -> Any:
            TRIED[f"{test.__module__}::{test.__name__}"] += 1
            return test(*args, **kwargs)

        return settings(max_examples=examples(n))(given(**strategies)(counted))

    return decorate


@contextmanager
def scratch() -> Iterator[Path]:
    """A fresh folder for one example (hypothesis runs an example many times in one test)."""
    with tempfile.TemporaryDirectory(prefix="exampp-robust-") as folder:
        yield Path(folder)


def put(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _lines_in(data: bytes) -> int | None:
    """How many lines the input has once gunzipped (a CR ends one too: exampp.toml is read as
    text); None when it does not gunzip."""
    while data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            return None
    return len(data.splitlines()) + 1


def shown_as(path: str | os.PathLike[str]) -> str:
    """How a message names the input ``path``."""
    shown = "<stdin>" if path == "-" else str(path)
    return shown if shown.isprintable() else repr(shown)


def assert_located(exc: BaseException, path: str | os.PathLike[str], data: bytes | None = None) -> None:
    """``exc`` is an InputError rendered as one line ``PATH[:LINE]: message``; LINE, when
    given, is a line of ``data`` (or the one after its last, for a truncated input)."""
    assert isinstance(exc, InputError) and isinstance(exc, ExamppError), repr(exc)
    text = str(exc)
    assert len(text.splitlines()) == 1 and "\n" not in text and "\r" not in text, f"not one line: {text!r}"
    shown = shown_as(path)
    assert text.startswith(shown), f"{text!r} does not start with the path {shown!r}"
    match = _MESSAGE.fullmatch(text[len(shown):])
    assert match, f"not 'PATH:LINE: message' or 'PATH: message': {text!r}"
    if match["line"] is not None:
        assert int(match["line"]) >= 1, text
        lines = None if data is None else _lines_in(data)
        if lines is not None:
            assert int(match["line"]) <= lines + 1, f"line past the end of the input: {text!r}"


def parse(reader: Callable[[Any], Any], path: str | os.PathLike[str], data: bytes | None = None) -> Any:
    """``reader(path)`` (an iterator is read to the end); None when it raised a located
    InputError. Any other exception goes up: that is a defect."""
    kind, value = outcome(reader, path, data)
    return value if kind == "ok" else None


def read_file(reader: Callable[[Path], Any], name: str, data: bytes) -> Any:
    """:func:`parse` of ``data`` written to a file called ``name`` in a fresh folder."""
    with scratch() as folder:
        return parse(reader, put(folder / name, data), data)


def assert_ids(ids: Iterable[str], *, first_column: bool = False) -> None:
    """What a reader hands out as ids, a writer of a line format must be able to write."""
    for value in ids:
        assert id_problem(value, first_column=first_column) is None, f"reader let through id {value!r}"


def written_or_refused(write: Callable[[Path], None], path: Path) -> bool:
    """Run a writer: True when it wrote, False when it refused with ValueError (an id it cannot
    write), in which case nothing may be left behind."""
    try:
        write(path)
    except ValueError as exc:
        assert not isinstance(exc, ExamppError) or isinstance(exc, InputError), repr(exc)
        assert not path.exists(), "a refused write left a file behind"
        assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == [], "temporary file left"
        return False
    return True


def can_write(*ids: str, first_column: Iterable[str] = ()) -> bool:
    """Whether every id can go into a line format (and into a UTF-8 file at all)."""
    firsts = list(first_column)
    return all(id_problem(i) is None and encodable(i) for i in ids) and all(
        id_problem(i, first_column=True) is None and encodable(i) for i in firsts)


def encodable(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (a lone surrogate cannot)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# -- pipes ------------------------------------------------------------------------------------


def _feed(open_writer: Callable[[], Any], data: bytes) -> threading.Thread:
    """A thread writing ``data`` into what ``open_writer`` opens; a reader that stops early
    (an error on line 1) breaks the pipe, which is no concern of the writer."""

    def run() -> None:
        try:
            with open_writer() as fh:
                fh.write(data)
        except BrokenPipeError:
            pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@contextmanager
def fifo(folder: Path, name: str, data: bytes) -> Iterator[Path]:
    """A FIFO at ``folder/name`` that a thread fills with ``data``, as ``<(zcat file.gz)`` is."""
    path = folder / name
    os.mkfifo(path)
    thread = _feed(lambda: open(path, "wb"), data)
    try:
        yield path
    finally:
        if thread.is_alive():  # the reader never opened it, or stopped reading: unblock the writer
            os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
        thread.join(10)
        assert not thread.is_alive(), "the FIFO's writer is stuck"


@contextmanager
def stdin(data: bytes) -> Iterator[None]:
    """Standard input is a pipe that a thread fills with ``data``."""
    read_end, write_end = os.pipe()
    thread = _feed(lambda: open(write_end, "wb"), data)
    stream = io.TextIOWrapper(open(read_end, "rb"))
    try:
        with mock.patch.object(sys, "stdin", stream):
            yield
    finally:
        stream.close()
        thread.join(10)
        assert not thread.is_alive(), "standard input's writer is stuck"


def outcome(reader: Callable[[Any], Any], path: str | os.PathLike[str], data: bytes | None = None) -> tuple[str, Any]:
    """``("ok", result)`` or ``("error", message without the path)``, to compare two ways of
    giving a reader the same bytes."""
    try:
        result = reader(path)
        return "ok", list(result) if isinstance(result, Iterator) else result
    except InputError as exc:
        assert_located(exc, path, data)
        return "error", str(exc)[len(shown_as(path)):]
