"""Reading text files the way every reader here needs: plain or gzipped, UTF-8, line-numbered.

Decoding and truncation problems become :class:`InputError` naming file and line, so that
no reader has to repeat that handling.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from exampp.errors import InputError

PathLike = str | os.PathLike[str]


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def iter_lines(path: PathLike) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` without the trailing newline; gzip detected by magic bytes."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, None, "no such file")
    if path.is_dir():
        raise InputError(path, None, "is a directory, expected a file")
    raw: IO[bytes] = gzip.open(path, "rb") if _is_gzip(path) else open(path, "rb")
    lineno = 0
    try:
        with raw:
            while True:
                try:
                    data = raw.readline()
                except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
                    raise InputError(path, lineno + 1, f"corrupt or truncated gzip data ({exc})") from None
                if not data:
                    return
                lineno += 1
                try:
                    line = data.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(
                        path, lineno, f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at column {exc.start + 1})"
                    ) from None
                yield lineno, line.rstrip("\r\n")
    except OSError as exc:
        raise InputError(path, lineno or None, f"cannot read: {exc}") from None


def iter_json_lines(path: PathLike) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, value)`` for each non-blank line of a JSONL file."""
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, lineno, f"invalid JSON: {exc.msg} at column {exc.colno}") from None


def read_text(path: PathLike) -> str:
    """Whole file as text (gzip-aware), with the same error reporting as :func:`iter_lines`."""
    return "\n".join(line for _, line in iter_lines(path))


def load_json(path: PathLike) -> Any:
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, exc.lineno, f"invalid JSON: {exc.msg} at column {exc.colno}") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_write(path: PathLike, *, gzipped: bool | None = None) -> Iterator[IO[str]]:
    """Write a text file so that readers never see it half-written.

    The content goes to a temporary file in the same directory, which replaces ``path``
    only when the block finishes without error. ``gzipped`` defaults to ``path`` ending in ``.gz``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if gzipped is None:
        gzipped = path.suffix == ".gz"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as raw:
            binary: IO[bytes] = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if gzipped else raw
            fh = io.TextIOWrapper(binary, encoding="utf-8", newline="\n")
            yield fh
            fh.flush()
            fh.detach()
            if gzipped:
                binary.close()
            raw.flush()
            os.fsync(raw.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual mode
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
