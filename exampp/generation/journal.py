"""A generation run's journal: what is done so far, so that a killed run resumes without asking again.

Generating a bank or an exam is one request (or a few) per query, subtopic or document, each worth
keeping: the journal is a JSONL file beside the output (``OUTPUT.journal.jsonl``). Its first line
holds the run's settings; each later line one finished item (``{"key": ..., "value": ...}``),
appended and flushed to disk as soon as the item is done. A run started again with the same
output reads the journal, skips the items in it and appends the rest; when the output has been
written whole, the journal is removed. A last line cut short by a kill is dropped (its item is
asked again). A journal written with other settings is refused: mixing two models' or two
prompts' questions in one bank would be silent nonsense.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from exampp.collection.io import PathLike
from exampp.errors import InputError


def journal_path(output: PathLike) -> Path:
    return Path(f"{os.fspath(output)}.journal.jsonl")


class Journal:
    """Items done so far (key -> value, in order) for ``output``; use as a context manager."""

    def __init__(self, output: PathLike, settings: Mapping[str, Any]):
        self.path = journal_path(output)
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
        records = list(_records(complete.decode("utf-8").split("\n"), str(self.path)))
        if not records:
            return
        lineno, header = records[0]
        if header.get("settings") != json.loads(json.dumps(self.settings)):
            differ = sorted(k for k in set(header.get("settings") or {}) | set(self.settings)
                            if (header.get("settings") or {}).get(k) != self.settings.get(k))
            raise InputError(str(self.path), lineno,
                             f"an unfinished run with other settings ({', '.join(differ)}) left this journal; "
                             "run it again with those settings, or delete the journal to start afresh")
        for lineno, record in records[1:]:
            if not isinstance(record, dict) or "key" not in record:
                raise InputError(str(self.path), lineno, "not a journal entry")
            self.done[record["key"]] = record.get("value")

    def __enter__(self) -> "Journal":
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "a", encoding="utf-8")
        if fresh:
            self._append({"settings": self.settings})
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def record(self, key: str, value: Any) -> None:
        """Keep one finished item, on disk before this returns."""
        self.done[key] = value
        self._append({"key": key, "value": value})

    def _append(self, record: dict[str, Any]) -> None:
        assert self._fh is not None, "open the journal with 'with'"
        self._fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def remove(self) -> None:
        """The output is complete: the journal has served."""
        self.__exit__()
        self.path.unlink(missing_ok=True)


def _records(lines: list[str], path: str) -> Iterator[tuple[int, Any]]:
    for index, line in enumerate(lines):
        if line.strip():
            try:
                yield index + 1, json.loads(line)
            except json.JSONDecodeError:
                raise InputError(path, index + 1, "not a JSON line") from None
