"""A generation run's journal: every item settled so far, so that a rerun does not ask it again.

Generating a bank or an exam is one request (or a few) per query, subtopic or document, each worth
keeping: the journal is a JSONL file beside the output (``OUTPUT.journal.jsonl``; an exam keeps
its answers for good in ``OUTPUT.answers.jsonl``, the same format). Its first line holds the
run's settings; each later line one settled item (``{"key": ..., "value": ...}``), appended and
flushed to disk as soon as the item is settled; a key's last line is the one that counts (an item
asked again). A last line cut short by a kill is dropped (its item is asked again). A journal
written with other settings is refused: mixing two models' or two prompts' answers in one output
would be silent nonsense.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from exampp.errors import InputError, OutputError
from exampp.files.io import PathLike, check_output_name, decode_line


def journal_path(output: PathLike, name: str = "journal") -> Path:
    """The journal of ``output``: ``OUTPUT.<name>.jsonl``."""
    return Path(f"{os.fspath(output)}.{name}.jsonl")


class Journal:
    """Items settled so far (key -> value, in order) for ``output``, in ``OUTPUT.<name>.jsonl``;
    append with :meth:`record` inside a ``with`` block (which makes the folder).

    Reading it checks the settings; OutputError at once when ``output`` or the journal cannot
    name a file, so that nothing is asked for an output that cannot be written."""

    def __init__(self, output: PathLike, settings: Mapping[str, Any], *, name: str = "journal"):
        self.path = journal_path(output, name)
        for path in (output, self.path):
            try:
                check_output_name(path)
            except ValueError as exc:
                raise OutputError(path, str(exc)) from None
        self.settings = dict(settings)
        self.done: dict[str, Any] = {}
        self._fh: IO[str] | None = None
        if self.path.exists():
            self._read()

    def _read(self) -> None:
        with open(self.path, "rb") as fh:
            data = fh.read()
        complete = data[: data.rfind(b"\n") + 1]
        if len(complete) < len(data):  # a line a kill cut short: drop it, its item is asked again
            with open(self.path, "r+b") as fh:
                fh.truncate(len(complete))
        records = list(_records(complete.split(b"\n"), str(self.path)))
        if not records:
            return
        lineno, header = records[0]
        stored = header.get("settings") if isinstance(header, dict) else None
        if stored != json.loads(json.dumps(self.settings)):
            stored = stored if isinstance(stored, dict) else {}
            differ = sorted(k for k in set(stored) | set(self.settings) if stored.get(k) != self.settings.get(k))
            raise InputError(str(self.path), lineno,
                             f"written by a run with other settings ({', '.join(differ)}); give those settings "
                             "again, or delete this file (or write another output) to start afresh")
        for lineno, record in records[1:]:
            if not isinstance(record, dict) or "key" not in record:
                raise InputError(str(self.path), lineno, "not a journal entry")
            self.done[record["key"]] = record.get("value")

    def __enter__(self) -> "Journal":
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "a", encoding="utf-8")
        except OSError as exc:
            raise OutputError(self.path, f"cannot write: {exc.strerror or exc}") from None
        if fresh:
            self._append({"settings": self.settings})
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def record(self, key: str, value: Any) -> None:
        """Keep one settled item (replacing what the journal held of it), on disk before this returns."""
        self.done[key] = value
        self._append({"key": key, "value": value})

    def _append(self, record: dict[str, Any]) -> None:
        assert self._fh is not None, "open the journal with 'with'"
        self._fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def remove(self) -> None:
        """The output holds everything the journal did: the journal has served."""
        self.__exit__()
        self.path.unlink(missing_ok=True)


def _records(lines: list[bytes], path: str) -> Iterator[tuple[int, Any]]:
    for lineno, data in enumerate(lines, 1):
        line = decode_line(data, path, lineno)
        if line.strip():
            try:
                yield lineno, json.loads(line)
            except (ValueError, RecursionError):  # JSONDecodeError is a ValueError, as is a too long integer
                raise InputError(path, lineno, "not a JSON line") from None
