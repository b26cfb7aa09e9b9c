"""The history of a question bank: every version of the file, when and why it changed, and which
questions changed, kept in a SQLite file beside the bank (``BANK.history.sqlite``).

Tables (schema version :data:`SCHEMA_VERSION`, in SQLite's ``user_version``):

- ``contents``: the bank file's exact bytes (zlib-compressed), once per distinct content
  (keyed by its SHA-256), so that any version can be written back byte for byte and going back
  to an earlier version stores nothing new;
- ``versions``: one row per version: time (UTC), user, operation, a one-line summary, the
  reason given, the content's hash, and how many questions the bank then held (version 0 is the
  bank as it was when its history began);
- ``changes``: one row per question a version changed, with its full exampp record before and
  after (a question whose text changed gets a new id: the row holds both ids).

A change is one transaction (``BEGIN IMMEDIATE``: two commands on one bank run one after the
other). The bank is written before the transaction commits; if the process dies in between,
the bank's hash no longer matches the last version, and the next command records the bank as
it finds it (see :mod:`exampp.api.bank_history`).
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

from exampp.collection.questions import QuestionBank
from exampp.errors import ExamppError, InputError
from exampp.files.io import InputLines, PathLike, json_lines
from exampp.formats.exampp_bank import exampp_record, read_question_records
from exampp.formats.question_bank import detect_format

SCHEMA_VERSION = 1
HISTORY_SUFFIX = ".history.sqlite"
CHANGE_KINDS = ("added", "removed", "edited", "disabled", "enabled")

_SCHEMA = """
CREATE TABLE contents (
    sha256 TEXT PRIMARY KEY,
    size INTEGER NOT NULL,          -- bytes of the bank file
    data BLOB NOT NULL              -- the bank file, zlib-compressed
);
CREATE TABLE versions (
    version INTEGER PRIMARY KEY,
    time TEXT NOT NULL,             -- UTC, ISO 8601
    user TEXT,
    operation TEXT NOT NULL,
    summary TEXT NOT NULL,
    reason TEXT,
    sha256 TEXT NOT NULL REFERENCES contents (sha256),
    questions INTEGER,              -- NULL: the file was not a readable bank
    active INTEGER                  -- questions not disabled
);
CREATE TABLE changes (
    version INTEGER NOT NULL REFERENCES versions (version),
    seq INTEGER NOT NULL,
    change TEXT NOT NULL CHECK (change IN ('added', 'removed', 'edited', 'disabled', 'enabled')),
    old_id TEXT,                    -- NULL when added
    new_id TEXT,                    -- NULL when removed
    old_record TEXT,                -- the question's exampp record (JSON) before, after
    new_record TEXT,
    PRIMARY KEY (version, seq)
);
CREATE INDEX changes_old_id ON changes (old_id);
CREATE INDEX changes_new_id ON changes (new_id);
"""


class HistoryError(ExamppError):
    """A history file that cannot be used (not SQLite, made by a newer exampp, locked)."""


def history_path(bank: PathLike) -> Path:
    """``BANK.history.sqlite`` beside the bank file (beside its target when ``bank`` is a link)."""
    real = Path(os.path.realpath(bank))
    return real.with_name(real.name + HISTORY_SUFFIX)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Change:
    """One question changed by a version: ``kind`` is one of :data:`CHANGE_KINDS`; an edit of the
    text has ``old_id != new_id``."""

    kind: str
    old_id: str | None
    new_id: str | None
    old_record: dict[str, Any] | None
    new_record: dict[str, Any] | None

    @property
    def question_id(self) -> str:
        """The id before the change (the new id for an added question)."""
        return self.old_id or self.new_id  # type: ignore[return-value]


@dataclass(frozen=True)
class Version:
    number: int
    time: str
    user: str | None
    operation: str
    summary: str
    reason: str | None
    sha256: str
    questions: int | None  # None: the file was not a readable bank
    active: int | None


# -- the bank as bytes ---------------------------------------------------------------------------


def bank_from_bytes(data: bytes, name: str) -> QuestionBank:
    """The exampp bank that ``data`` (a bank file's bytes, gzipped or not) holds, disabled
    questions included; empty for an empty file. Errors name ``name`` and the line.

    Only exampp's own format can be changed with a history: a reference or CAR bank is refused.
    """
    records = json_lines(InputLines(name, data=data), name)
    first = next(records, None)
    if first is None:
        return QuestionBank()
    found = detect_format(first[1], name, first[0])
    if found != "exampp":
        raise InputError(name, None, f"a {found} question bank, not exampp's JSONL: only exampp banks are changed "
                                     f"with a history; run `exampp bank import` on it and change the imported bank")
    records_again = iter([first, *records])
    return read_question_records(records_again, name).bank


def question_records(bank: QuestionBank) -> dict[str, dict[str, Any]]:
    """Each question's full exampp record (as the bank file holds it), by question id."""
    return {q.question_id: exampp_record(q, bank.query_texts.get(q.query_id)) for q in bank}


def diff_banks(old: QuestionBank, new: QuestionBank, renames: Mapping[str, str] | None = None) -> list[Change]:
    """The questions that differ from ``old`` to ``new``, in ``old``'s order, then those added.

    ``renames`` (old id -> new id) pairs a question whose text, and so id, changed; without it
    such a question reads as one removed and one added. A question whose only difference is its
    ``disabled`` flag is ``disabled`` or ``enabled``; any other difference is ``edited``.
    """
    renames = dict(renames or {})
    before, after = question_records(old), question_records(new)
    changes: list[Change] = []
    for qid, record in before.items():
        new_id = renames.get(qid, qid)
        other = after.get(new_id)
        if other is None:
            changes.append(Change("removed", qid, None, record, None))
        elif other != record or new_id != qid:
            changes.append(Change(_kind(record, other), qid, new_id, record, other))
    targets = set(renames.values())
    changes.extend(Change("added", None, qid, None, record)
                   for qid, record in after.items() if qid not in before and qid not in targets)
    return changes


def _kind(old: dict[str, Any], new: dict[str, Any]) -> str:
    rest = {k: v for k, v in old.items() if k != "disabled"}
    if rest == {k: v for k, v in new.items() if k != "disabled"}:
        return "disabled" if new.get("disabled") else "enabled"
    return "edited"


# -- the history file ----------------------------------------------------------------------------


class BankHistory:
    """A bank's history file, open: :meth:`open` it (``create`` for the commands that change the
    bank), change it inside :meth:`transaction`, and :meth:`close` it (or use it in ``with``)."""

    def __init__(self, connection: sqlite3.Connection, path: Path):
        self._db = connection
        self.path = path

    @classmethod
    def open(cls, path: PathLike, *, create: bool = False, writable: bool = False) -> "BankHistory":
        """The history at ``path``, read-only unless ``writable``; a missing one is an error,
        or with ``create`` a new (writable) one."""
        path = Path(path)
        if not create and not path.exists():
            raise HistoryError(f"{path}: no history yet (it begins with the bank's first change by exampp)")
        try:
            if create or writable:
                db = sqlite3.connect(path, timeout=_LOCK_WAIT_S, isolation_level=None)
            else:
                db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
        except sqlite3.Error as exc:
            raise HistoryError(f"{path}: not a bank history ({exc})") from None
        history = cls(db, path)
        try:
            if not create and not history._check_schema():
                raise HistoryError(f"{path}: no history yet (the file is empty)")
        except sqlite3.Error as exc:
            history.close()
            raise HistoryError(f"{path}: not a bank history ({exc})") from None
        except HistoryError:
            history.close()
            raise
        return history

    def _check_schema(self) -> bool:
        """True when the file holds a history of this schema, False when it is empty (new)."""
        found = self._db.execute("PRAGMA user_version").fetchone()[0]
        if found == SCHEMA_VERSION:
            return True
        if found == 0 and not self._db.execute("SELECT 1 FROM sqlite_master").fetchone():
            return False
        made_by = "a newer exampp" if found > SCHEMA_VERSION else "something other than exampp"
        raise HistoryError(f"{self.path}: history schema {found}, made by {made_by} "
                           f"(this exampp reads schema {SCHEMA_VERSION})")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "BankHistory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Hold the history's write lock (another command on the same bank waits for it) and
        commit what the block records when it ends without error; roll it back otherwise."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise HistoryError(f"{self.path}: cannot lock the history ({exc}); is another exampp command "
                               f"changing this bank?") from None
        except sqlite3.DatabaseError as exc:
            raise HistoryError(f"{self.path}: not a bank history ({exc})") from None
        try:
            if not self._check_schema():
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self.commit()

    def commit(self) -> None:
        self._db.execute("COMMIT")

    # -- reading

    def last(self) -> Version | None:
        """The latest version; None when the history has none yet."""
        row = self._db.execute(f"SELECT {_VERSION_COLUMNS} FROM versions ORDER BY version DESC LIMIT 1").fetchone()
        return Version(*row) if row else None

    def version(self, number: int) -> Version:
        row = self._db.execute(f"SELECT {_VERSION_COLUMNS} FROM versions WHERE version = ?", (number,)).fetchone()
        if row is None:
            last = self.last()
            have = f"versions 0 to {last.number}" if last else "no versions"
            raise HistoryError(f"{self.path}: no version {number} (the history has {have})")
        return Version(*row)

    def versions(self) -> list[Version]:
        return [Version(*row) for row in self._db.execute(f"SELECT {_VERSION_COLUMNS} FROM versions ORDER BY version")]

    def content(self, number: int) -> bytes:
        """The bank file's exact bytes at version ``number``."""
        sha256 = self.version(number).sha256
        (data,) = self._db.execute("SELECT data FROM contents WHERE sha256 = ?", (sha256,)).fetchone()
        return zlib.decompress(data)

    def changes(self, number: int | None = None) -> list[tuple[int, Change]]:
        """(version, change) for every question change, or those of version ``number``, in order."""
        where, args = ("WHERE version = ?", (number,)) if number is not None else ("", ())
        rows = self._db.execute("SELECT version, change, old_id, new_id, old_record, new_record FROM changes "
                                f"{where} ORDER BY version, seq", args)
        return [(version, Change(kind, old_id, new_id, _load(old), _load(new)))
                for version, kind, old_id, new_id, old, new in rows]

    def renames(self) -> list[tuple[str, str]]:
        """(old id, new id) of every edit that changed a question's text, and so its id."""
        return list(self._db.execute("SELECT old_id, new_id FROM changes WHERE old_id IS NOT NULL AND "
                                     "new_id IS NOT NULL AND old_id != new_id ORDER BY version, seq"))

    # -- writing (inside transaction())

    def record(self, *, time: str, user: str | None, operation: str, summary: str, reason: str | None,
               content: bytes, bank: QuestionBank | None, changes: list[Change]) -> Version:
        """Add the next version: the bank file's ``content`` (``bank``: what it holds, None when
        it is not a readable bank) and the questions changed."""
        last = self.last()
        number = 0 if last is None else last.number + 1
        sha256 = content_hash(content)
        self._db.execute("INSERT OR IGNORE INTO contents (sha256, size, data) VALUES (?, ?, ?)",
                         (sha256, len(content), zlib.compress(content, 9)))
        questions = None if bank is None else len(bank)
        active = None if bank is None else sum(not q.disabled for q in bank)
        version = Version(number, time, user, operation, summary, reason, sha256, questions, active)
        self._db.execute(f"INSERT INTO versions ({_VERSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         astuple(version))
        self._db.executemany(
            "INSERT INTO changes (version, seq, change, old_id, new_id, old_record, new_record) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(number, seq, c.kind, c.old_id, c.new_id, _dump(c.old_record), _dump(c.new_record))
             for seq, c in enumerate(changes)])
        return version


_LOCK_WAIT_S = 30  # how long a command waits for another one changing the same bank
_VERSION_COLUMNS = "version, time, user, operation, summary, reason, sha256, questions, active"


def _dump(record: dict[str, Any] | None) -> str | None:
    return None if record is None else json.dumps(record, ensure_ascii=False)


def _load(text: str | None) -> dict[str, Any] | None:
    return None if text is None else json.loads(text)
