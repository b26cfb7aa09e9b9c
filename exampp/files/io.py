"""Reading and writing files the way every reader and writer here needs.

Inputs: plain or gzipped (detected by magic bytes), UTF-8, line-numbered; ``-`` is standard
input. Every input is opened exactly once, so a FIFO or a process substitution
(``<(zcat run.gz)``) reads the same as the file it streams. Decoding and truncation problems
become :class:`InputError` naming file and line, so that no reader has to repeat that handling.
A line is read only up to :data:`MAX_LINE_BYTES`: a longer one (a file of one endless line, a
gzip bomb of NULs) is refused before it fills memory, and messages quote what they read by
:func:`excerpt`, so that an error is one short line whatever the input.

Outputs: :func:`atomic_write` replaces a regular file only once the new content is complete,
and writes *through* what must not be replaced: ``-`` and ``/dev/stdout`` print, a device node
or a FIFO is written into, and a symbolic link keeps pointing where it did while its target
gets the new content.
"""
from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import itertools
import json
import os
import re
import stat
import sys
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import IO, Any, TextIO, TypeGuard, cast

from exampp.errors import InputError, OutputError
from exampp.files.temps import remove_leftovers, writer_prefix

PathLike = str | os.PathLike[str]
STDIO = "-"
STDIN_NAME = "<stdin>"

_GZIP_MAGIC = b"\x1f\x8b"
# The longest line (its bytes, without the line break) a reader takes. Real lines are far shorter:
# the longest of the DL19 graded-passages file (one query with its judged passages' texts and
# grades) is 1.7 MB. Held whole, with its text and what JSON makes of it (a million empty
# objects, at worst), a line of this many bytes stays under a gigabyte.
MAX_LINE_BYTES = 32 << 20
# The most a reader holds at once of a file it reads whole (JSON topics, leaderboards, response
# matrices): characters (the lines joined by line breaks; the line's bound, for the same reason:
# parsed as one JSON document, they stay under a gigabyte), and lines (held, with what the reader
# makes of them, a million lines take some 500 MB).
MAX_HELD_CHARS = 32 << 20
MAX_HELD_LINES = 1_000_000
# The most a reader keeps of a file it reads record by record (answers with their nuggets or cited
# sentences): bytes of the texts it keeps, each record it makes counted as RECORD_BYTES more. A small
# gzip may hold gigabytes of answers; held in objects they would take several times that.
MAX_KEPT_BYTES = 512 << 20
RECORD_BYTES = 64
# How much of a value read from a file a message quotes.
EXCERPT_CHARS = 80
# Paths that name an open file descriptor of this process rather than a file: writing such a
# path must go to that descriptor, never replace what it points to.
_FD_ALIAS = re.compile(r"^/(?:proc/(?:self|thread-self|(\d+))/fd|dev/fd)/(\d+)$")
_STD_STREAMS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
# Temporary files written inside replace_together(), waiting to replace their targets.
_STAGED: ContextVar[list[tuple[str, Path]] | None] = ContextVar("exampp_staged_outputs", default=None)
# A temporary file is named ".<name>.<writer>.<8 random characters>.tmp"; past this many bytes of
# <name> it takes a digest of the name instead, so that any name the file system allows works.
_TEMP_NAME_BYTES = 128


def is_stdio(source: object) -> TypeGuard[str]:
    return isinstance(source, str) and source == STDIO


def display_name(source: PathLike) -> str:
    """How an input is named in messages (``<stdin>`` for ``-``)."""
    return STDIN_NAME if is_stdio(source) else str(source)


class _Prefixed(io.RawIOBase):
    """A stream that first returns ``prefix`` and then the rest of ``stream`` (bytes sniffed
    from a pipe cannot be put back)."""

    def __init__(self, prefix: bytes, stream: IO[bytes]):
        self._prefix = prefix
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._prefix:
            n = min(len(buffer), len(self._prefix))
            buffer[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def open_input(source: PathLike) -> IO[bytes]:
    """An input file opened for reading bytes; what keeps it from being read is an InputError."""
    path = Path(source)
    try:
        raw = open(path, "rb")
    except FileNotFoundError:
        raise InputError(path, None, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, None, "is a directory, expected a file") from None
    except OSError as exc:
        raise InputError(path, None, f"cannot open: {exc.strerror or exc}") from None
    except ValueError:  # no file name can hold a NUL byte
        raise InputError(path, None, "cannot open: the file name contains a NUL byte") from None
    if stat.S_ISDIR(os.fstat(raw.fileno()).st_mode):
        raw.close()
        raise InputError(path, None, "is a directory, expected a file")
    return raw


def _open_binary(source: PathLike) -> tuple[IO[bytes], IO[bytes] | None]:
    """The source opened once for reading, gunzipped when it starts with gzip's magic bytes,
    and the file to close afterwards (None for standard input, which is not ours to close)."""
    if is_stdio(source):
        raw: IO[bytes] = sys.stdin.buffer
        owned = None
    else:
        raw = owned = open_input(source)
    return _gunzipped(raw, owned, display_name(source)), owned


def _gunzipped(raw: IO[bytes], owned: IO[bytes] | None, name: str) -> IO[bytes]:
    """``raw`` read through gzip when it starts with gzip's magic bytes (``owned`` is closed on an error)."""
    try:
        start = raw.tell() if raw.seekable() else None  # stdin from a file need not start at 0
        head = raw.read(len(_GZIP_MAGIC))
        if start is not None:  # a regular file: sniffing costs nothing, and it can be read again
            raw.seek(start)
            stream: IO[bytes] = raw
        else:  # a pipe: what was read cannot be put back, so it is served first
            stream = io.BufferedReader(_Prefixed(head, raw))
    except OSError as exc:
        if owned is not None:
            owned.close()
        raise InputError(name, None, f"cannot read: {exc.strerror or exc}") from None
    if head == _GZIP_MAGIC:
        # a binary file object; typeshed types GzipFile as a BufferedIOBase, not an IO[bytes]
        stream = cast(IO[bytes], gzip.GzipFile(fileobj=stream, mode="rb"))
    return stream


class InputLines:
    """An input opened once and read as numbered lines (``(line_number, line)``, no newline).

    A regular file can be read again from the start (:meth:`rewind`); a pipe cannot.
    Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, source: PathLike, *, data: bytes | None = None):
        """``data``: the input's bytes, already in memory (``source`` then only names it)."""
        self.name = display_name(source)
        if data is None:
            self._stream, self._owned = _open_binary(source)
        else:
            self._owned = io.BytesIO(data)
            self._stream = _gunzipped(self._owned, self._owned, self.name)
        self.lineno = 0

    def __enter__(self) -> "InputLines":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._owned is not None:
            self._stream.close()
            self._owned.close()

    def rewind(self) -> bool:
        """Start again from the first line; False (nothing done) when the input is a pipe."""
        if self._owned is None or not self._owned.seekable():
            return False
        self._stream.seek(0)
        self.lineno = 0
        return True

    def __iter__(self) -> Iterator[tuple[int, str]]:
        while True:
            try:
                data = self._stream.readline(MAX_LINE_BYTES + 1)
            except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
                raise InputError(self.name, self.lineno + 1, f"corrupt or truncated gzip data ({exc})") from None
            except OSError as exc:
                raise InputError(self.name, self.lineno or None, f"cannot read: {exc}") from None
            if not data:
                return
            self.lineno += 1
            self._check_length(data, self.lineno)
            yield self.lineno, decode_line(data, self.name, self.lineno)

    def _check_length(self, line: bytes, lineno: int) -> None:
        """InputError when ``line``, read with a limit of MAX_LINE_BYTES + 1, is longer than MAX_LINE_BYTES."""
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            raise InputError(self.name, lineno, f"line longer than {MAX_LINE_BYTES:,} bytes, the most a line may hold")

    @property
    def plain_file(self) -> bool:
        """Whether the input is a regular file read as it is (not gzipped, not a pipe): what
        :meth:`chunks` reads."""
        return self._owned is not None and self._stream is self._owned and self._owned.seekable()

    def chunks(self, size: int = 1 << 22) -> Iterator[tuple[int, bytes]]:
        """The rest of a :attr:`plain_file` in pieces of about ``size`` bytes that end with a line:
        ``(number of the piece's first line, bytes)``; :func:`decode_line` decodes a line of it
        as iterating would, and a line longer than :data:`MAX_LINE_BYTES` is refused as there."""
        size = min(size, MAX_LINE_BYTES)  # so that only the piece's last line can be too long
        while True:
            try:
                data = self._stream.read(size)
                start = data.rfind(b"\n") + 1  # of the piece's last line
                if start < len(data):  # which is cut: read the rest of it, no more than a line may hold
                    data += self._stream.readline(MAX_LINE_BYTES + 1 - (len(data) - start))
            except OSError as exc:
                raise InputError(self.name, self.lineno or None, f"cannot read: {exc}") from None
            if not data:
                return
            first = self.lineno + 1
            self._check_length(data[start:], first + data.count(b"\n", 0, start))
            self.lineno += data.count(b"\n") + (not data.endswith(b"\n"))
            yield first, data


class Kept:
    """What a reader keeps of the file ``name``, refused past :data:`MAX_KEPT_BYTES` (an InputError
    naming the line that went past it)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.bytes = 0

    def add(self, line: int, *texts: str, records: int) -> None:
        """Line ``line`` keeps ``texts`` and makes ``records`` records."""
        self.bytes += sum(map(len, texts)) + records * RECORD_BYTES
        if self.bytes > MAX_KEPT_BYTES:
            raise InputError(self.name, line, f"the file holds more than {MAX_KEPT_BYTES:,} bytes of answers to keep, "
                                              "the most a reader keeps of one file: split it")


def excerpt(text: str, limit: int | None = None) -> str:
    """``text`` quoted for a message (as ``repr`` quotes it), cut after ``limit`` characters
    [default: :data:`EXCERPT_CHARS`] with "..." after it: a value read from a file may be as
    long as a line."""
    limit = EXCERPT_CHARS if limit is None else limit
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


def json_name(value: Any) -> str:
    """How a JSON value is named in a message: its type, or null (the value itself may be long)."""
    return "null" if value is None else type(value).__name__


def json_excerpt(value: Any) -> str:
    """A JSON value in a message: a string quoted (:func:`excerpt`), another value by :func:`json_name`."""
    return excerpt(value) if isinstance(value, str) else json_name(value)


def decode_line(data: bytes, name: str, lineno: int) -> str:
    """A line's bytes as text without its line break; invalid UTF-8 is an InputError at ``name:lineno``."""
    try:
        line = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(name, lineno,
                         f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at column {exc.start + 1})") from None
    return line.rstrip("\r\n")


def iter_lines(source: PathLike) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` without the trailing newline; gzip detected by magic bytes.

    ``source`` is a path or ``-`` (standard input); it is opened once and read once.
    """
    with InputLines(source) as lines:
        yield from lines


def first_nonblank(lines: Iterator[tuple[int, str]]) -> tuple[str | None, Iterator[tuple[int, str]]]:
    """The first non-blank line and the same lines again, from the start: a format can be sniffed
    without reading an input twice. The blank lines before it come again empty (none is held:
    there may be millions). None and no lines when every line is blank."""
    start = None
    for lineno, line in lines:
        start = lineno if start is None else start
        if line.strip():
            return line, itertools.chain(((n, "") for n in range(start, lineno)), [(lineno, line)], lines)
    return None, iter(())


def held_lines(lines: Iterable[tuple[int, str]], name: str) -> list[tuple[int, str]]:
    """``lines``, held, for a reader that goes over them more than once or parses them whole (a
    JSON document): InputError past :data:`MAX_HELD_CHARS` characters or :data:`MAX_HELD_LINES`
    lines, so that no input (a gzip bomb of line breaks) holds more than a gigabyte."""
    held: list[tuple[int, str]] = []
    size = -1  # characters of the lines held, joined by line breaks
    for lineno, line in lines:
        size += len(line) + 1
        if size > MAX_HELD_CHARS:
            what = f"{MAX_HELD_CHARS:,} characters"
        elif len(held) == MAX_HELD_LINES:
            what = f"{MAX_HELD_LINES:,} lines"
        else:
            held.append((lineno, line))
            continue
        raise InputError(name, lineno, f"more than {what} up to this line, the most a file read whole may hold")
    return held


def json_lines(lines: Iterable[tuple[int, str]], name: PathLike) -> Iterator[tuple[int, Any]]:
    """Parse numbered lines as JSONL: ``(line_number, value)`` for each non-blank line."""
    for lineno, line in lines:
        if line.strip():
            yield lineno, parse_json(line, name, lineno)


def iter_json_lines(source: PathLike) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, value)`` for each non-blank line of a JSONL file."""
    return json_lines(iter_lines(source), display_name(source))


def write_json_lines(records: Iterable[Any], path: PathLike) -> int:
    """Write ``records`` as JSONL, one per line (gzipped when ``path`` ends in .gz), atomically
    (:func:`atomic_write`); the number written."""
    count = 0
    with atomic_write(path) as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count


# A \u escape of a UTF-16 surrogate: JSON allows a lone one, which no UTF-8 file or SQLite text can hold.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def parse_json(text: str, name: PathLike, line: int | None = None, **options: Any) -> Any:
    """A JSON document (``line``: where it starts, for a JSONL line), errors located by line;
    ``options`` go to :func:`json.loads` (e.g. ``object_pairs_hook``)."""
    try:
        value = json.loads(text, **options)
    except json.JSONDecodeError as exc:
        where = exc.lineno if line is None else line
        raise InputError(name, where, f"invalid JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise InputError(name, line, "invalid JSON: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise InputError(name, line, f"invalid JSON: {exc}") from None
    if _SURROGATE_ESCAPE.search(text):  # rare: only then is the slow check paid for
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(name, line, "invalid JSON: an unpaired UTF-16 surrogate escape (\\uD800-\\uDFFF) "
                                         "is not a character") from None
    return value


# -- writing -----------------------------------------------------------------------------------


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fd_alias(path: Path) -> int | None:
    """The descriptor a path stands for (``/dev/stdout`` -> 1, ``/proc/self/fd/3`` -> 3), following
    symbolic links one at a time; None for a path that leads elsewhere."""
    current = os.path.abspath(path)
    for _ in range(40):  # the kernel's own limit on links in a path
        if current in _STD_STREAMS:
            return _STD_STREAMS[current]
        match = _FD_ALIAS.match(current)
        if match and match.group(1) in (None, str(os.getpid())):  # another process's descriptors are not ours
            return int(match.group(2))
        try:
            target = os.readlink(current)
        except OSError:  # not a link (or not there): nothing more to follow
            return None
        current = os.path.normpath(os.path.join(os.path.dirname(current), target))
    return None


def check_output_name(path: PathLike) -> None:
    """Raise ValueError when ``path`` cannot name a file here (a NUL byte, or a name longer
    than its file system allows)."""
    text = os.fspath(path)
    if "\0" in text:
        raise ValueError(f"file name {text!r} contains a NUL byte")
    if text.endswith(os.sep):
        raise ValueError("names a folder (it ends with a slash), not a file")
    name = os.path.basename(text)
    if not name:
        return
    folder = os.path.dirname(os.path.abspath(text))
    while folder and not os.path.isdir(folder):  # the nearest existing folder says what its file system allows
        folder = os.path.dirname(folder)
    try:
        limit = os.pathconf(folder or "/", "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    if len(os.fsencode(name)) > limit:
        raise ValueError(f"file name {name[:40]!r}... is too long: {len(os.fsencode(name))} bytes, "
                         f"at most {limit} here")


def _temp_prefix(name: str) -> str:
    if len(os.fsencode(name)) <= _TEMP_NAME_BYTES:
        return f".{name}."
    return f".{hashlib.md5(os.fsencode(name)).hexdigest()}."


@contextmanager
def _text(binary: IO[bytes], gzipped: bool) -> Iterator[TextIO]:
    """A UTF-8 text handle over ``binary`` (gzipped when asked); everything is flushed into
    ``binary`` on success. ``binary`` stays open either way."""
    compressed = gzip.GzipFile(filename="", fileobj=binary, mode="wb", mtime=0) if gzipped else None
    fh = io.TextIOWrapper(compressed or binary, encoding="utf-8", newline="\n")
    try:
        yield fh
    except BaseException:
        try:
            fh.detach()  # a collected TextIOWrapper would close ``binary`` (stdout included)
        except ValueError:
            pass
        if compressed is not None:  # no gzip trailer: a stream cut short must not look complete
            # GzipFile.close() writes nothing without its fileobj; typeshed types the attribute non-optional
            compressed.fileobj = None  # type: ignore[assignment]
        raise
    fh.detach()  # flushes
    if compressed is not None:
        compressed.close()  # writes gzip's trailer; a GzipFile never closes a file it was given
    binary.flush()


@contextmanager
def atomic_write(path: PathLike, *, gzipped: bool | None = None) -> Iterator[TextIO]:
    """Write a text file so that readers never see it half-written.

    A regular file (or a new one) gets its content in a temporary file in the same folder,
    which replaces it only when the block finishes without error; through a symbolic link, the
    link's target is replaced and the link stays. What cannot be replaced is written into
    directly: ``-`` (standard output), ``/dev/stdout`` and other descriptors of this process,
    device nodes and FIFOs. ``gzipped`` defaults to ``path`` ending in ``.gz``. The temporary
    files that killed writers left in the folder go first (:mod:`exampp.files.temps`).
    """
    if gzipped is None:
        gzipped = not is_stdio(path) and os.fspath(path).endswith(".gz")
    if is_stdio(path):
        with _stream_write(sys.stdout, gzipped) as fh:
            yield fh
        return
    try:
        check_output_name(path)
    except ValueError as exc:
        raise OutputError(path, str(exc)) from None
    path = Path(path)
    fd = _fd_alias(path)
    if fd in (1, 2):  # our own stdout/stderr: through Python's stream, in order with other output
        with _stream_write(sys.stdout if fd == 1 else sys.stderr, gzipped) as fh:
            yield fh
        return
    try:
        mode: int | None = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None  # a new file (or a dangling link, whose target is created)
    except OSError as exc:
        raise OutputError(path, f"cannot write: {exc.strerror}") from None
    if fd is not None or (mode is not None and not stat.S_ISREG(mode)):
        # A FIFO, device or inherited descriptor: a stream to write into, nothing to replace.
        with _failing_as(path), open(path, "ab" if fd is not None else "wb") as raw, _text(raw, gzipped) as fh:
            yield fh
        return
    target = Path(os.path.realpath(path))
    with _failing_as(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_leftovers(target.parent)  # of writers killed mid-write
        handle, tmp = tempfile.mkstemp(dir=target.parent, prefix=writer_prefix(_temp_prefix(target.name)),
                                       suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as raw:
                with _text(raw, gzipped) as fh:
                    yield fh
                os.fsync(raw.fileno())
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual mode
            staged = _STAGED.get()
            if staged is None:
                os.replace(tmp, target)
            else:
                staged.append((tmp, target))
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise


@contextmanager
def replace_together() -> Iterator[None]:
    """Files that :func:`atomic_write` writes inside this block replace their targets together
    when the block ends without error; when it fails, none does and the temporary files go.

    For jobs that write several outputs (an import fills a workspace): an error half way
    leaves every output as it was.
    """
    staged: list[tuple[str, Path]] = []
    token = _STAGED.set(staged)
    try:
        yield
    except BaseException:
        for tmp, _ in staged:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        raise
    finally:
        _STAGED.reset(token)
    try:
        for tmp, target in staged:
            with _failing_as(target):
                os.replace(tmp, target)
    finally:
        for tmp, _ in staged:  # those not moved when a replace failed
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


@contextmanager
def _failing_as(path: PathLike) -> Iterator[None]:
    """An OSError while writing ``path`` (disk full, no permission) as an :class:`OutputError`."""
    try:
        yield
    except OutputError:
        raise
    except OSError as exc:
        raise OutputError(path, f"cannot write: {exc.strerror or exc}") from None


@contextmanager
def _stream_write(stream: TextIO, gzipped: bool) -> Iterator[TextIO]:
    """Write into an open text stream (standard output): bytes through its buffer where it has
    one, so gzip works; as text otherwise (a notebook's output has no buffer)."""
    stream.flush()
    binary = getattr(stream, "buffer", None)
    if binary is None:
        if gzipped:
            raise OutputError(STDIO, "cannot write gzip to a text-only output stream")
        yield stream
        return
    with _text(binary, gzipped) as fh:
        yield fh
