"""The grade store: one SQLite file, content-addressed, incremental, crash-safe.

A grade is filed under (method id, passage text hash, question text hash), so the same
passage text and question text are never graded twice by the same method and model,
whatever ids they carry. Separate id mappings say which text hash each passage id (per
query) and question id (per query) has now; grades are read back through these mappings,
so editing a passage's text detaches its old grades from it.

Durability: WAL journal, one transaction per write call. A process killed mid-batch
leaves the store as it was before that batch; readers never see half a batch; a second
writer waits (busy timeout) instead of failing.

Opening: a file that is not an exampp store (not SQLite, someone else's tables, a table or column
missing, a schema version this exampp does not read) is refused before anything is written into
it. The commands that only read grades open the store read-only (``read_only``): no schema, no
switch to WAL, nothing written (SQLite may leave the empty ``-wal`` and ``-shm`` files of a WAL
store beside it, which a read-only reader cannot remove).

Several processes grading into one store split the work: a process claims the pairs it is
about to grade (:meth:`GradeStore.claim`), others skip pairs claimed by a live process, and a
grade committed releases its claim. A killed process's claims count as stale at once on its
own machine (its pid is gone) and after their expiry elsewhere.

Cascaded pairs (:mod:`exampp.grading.cascade`): a pair that a cheap first stage ruled out is
stored with grade 0 and marked in the ``cascaded`` table with the stage's id and its score. A run
with the same stage and a threshold above that score counts it as graded; any other run (without
the cascade, or with a lower threshold) counts it as missing and grades it, and the grade it
stores removes the mark. Schema version 2 adds that table: a version-1 reader would take the
cascaded zeros for real grades, so a version-1 store stays version 1 (still readable by older
exampp) until a cascaded pair is first stored in it, which upgrades it to 2 in the same transaction.

The same file keeps the OpenAI Batch API's journal (:mod:`exampp.stores.batch_journal`): its tables are created
here with the others, and :attr:`GradeStore.batches` reads and writes them.
"""
from __future__ import annotations

import functools
import json
import os
import socket
import sqlite3
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Literal, NamedTuple, overload

import pandas as pd

from exampp.collection.grades import Grade, text_hash
from exampp.errors import InputError, OutputError
from exampp.files.io import PathLike
from exampp.files.temps import process_alive
from exampp.stores.batch_journal import SCHEMA as _BATCH_SCHEMA, BatchJournal
from exampp.stores.sqlite_file import SQLiteFile

SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)  # 1: no cascaded pairs (upgraded to 2 when the first is stored)
# Pairs a process is grading now (added to version-1 stores when they are opened).
_CLAIMS_SCHEMA = """
CREATE TABLE IF NOT EXISTS claims (
    method INTEGER NOT NULL, passage_hash BLOB NOT NULL, question_hash BLOB NOT NULL,
    owner TEXT NOT NULL, expires REAL NOT NULL,
    PRIMARY KEY (method, passage_hash, question_hash)) WITHOUT ROWID;
"""
# Pairs a cascade's first stage ruled out (stored with grade 0): by which stage, at what score.
_CASCADED_SCHEMA = """
CREATE TABLE IF NOT EXISTS cascaded (
    method INTEGER NOT NULL, passage_hash BLOB NOT NULL, question_hash BLOB NOT NULL,
    stage TEXT NOT NULL, score REAL NOT NULL,
    PRIMARY KEY (method, passage_hash, question_hash)) WITHOUT ROWID;
"""
# A claim outlives a crash on another machine for this long (on this one, a dead pid frees it).
CLAIM_SECONDS = 3600.0

# Hashes are stored as 32-byte BLOBs and method ids interned as integers: a grade row is then
# ~80 bytes instead of ~300, which matters at millions of grades.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS methods (id INTEGER PRIMARY KEY, method_id TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS passages (
    query_id TEXT NOT NULL, passage_id TEXT NOT NULL, text_hash BLOB NOT NULL,
    PRIMARY KEY (query_id, passage_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS passages_by_hash ON passages (text_hash);
CREATE TABLE IF NOT EXISTS questions (
    query_id TEXT NOT NULL, question_id TEXT NOT NULL, text_hash BLOB NOT NULL,
    PRIMARY KEY (query_id, question_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS questions_by_hash ON questions (text_hash);
CREATE TABLE IF NOT EXISTS grades (
    method INTEGER NOT NULL REFERENCES methods (id), passage_hash BLOB NOT NULL, question_hash BLOB NOT NULL,
    grade REAL NOT NULL, answer TEXT, probabilities TEXT,
    PRIMARY KEY (method, passage_hash, question_hash)) WITHOUT ROWID;
""" + _CLAIMS_SCHEMA + _CASCADED_SCHEMA + _BATCH_SCHEMA

GRADE_COLUMNS = ["query_id", "passage_id", "question_id", "method_id", "grade", "answer"]

# Rows per membership query in missing(): two bound variables each, well under SQLite's limit.
_CHUNK = 400


Key = tuple[str, str]  # (passage text hash, question text hash), hex


def claimant() -> str:
    """An owner name for claims: ``host:pid:random``, so that a live process can be told apart."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _alive(owner: str) -> bool:
    """Whether the process behind a claim may still be running (unknowable for another host)."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    return host != socket.gethostname() or not pid.isdigit() or process_alive(int(pid))


def _tables(db: sqlite3.Connection) -> list[str]:
    return [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [name for (name,) in db.execute("SELECT name FROM pragma_table_info(?)", (table,))]


@functools.cache
def _schema_columns() -> dict[str, list[str]]:
    """Each table of the current schema with its columns, as SQLite reads them from :data:`_SCHEMA`."""
    with closing(sqlite3.connect(":memory:")) as db:
        db.executescript(_SCHEMA)
        return {table: _columns(db, table) for table in _tables(db)}


def _blobs(keys: Sequence[Key]) -> list[bytes]:
    return [bytes.fromhex(h) for key in keys for h in key]


class CascadeMark(NamedTuple):
    """Which cascaded pairs a run counts as graded: those ruled out by ``stage`` with a score
    below ``threshold`` (a pair is sent to the LLM when its score reaches the threshold)."""

    stage: str
    threshold: float


class HashedGrade(NamedTuple):
    """A grade with the content addresses of the passage and question texts it was made on."""

    grade: Grade
    passage_hash: str
    question_hash: str


class GradeStore(SQLiteFile):
    """Grades of (passage, question) pairs by method, in one SQLite file.

    Use as a context manager (``with GradeStore(path) as store: ...``) or call :meth:`close`.

    :param path: the store's file, created when missing.
    :param busy_timeout: seconds to wait while another process holds the file's write lock.
    :param read_only: for commands that only read grades: a store must be there, and nothing is
        written into it (not even WAL mode).
    """

    noun = "grade store"
    failures = ("full", "disk I/O", "readonly", "unable to open")

    def __init__(self, path: PathLike, busy_timeout: float = 60.0, *, read_only: bool = False):
        file = Path(path)
        new = not file.exists()
        if read_only and not file.is_dir() and (new or file.stat().st_size == 0):
            raise InputError(file, None, "no grade store here" if new else "an empty file, not an exampp grade store")
        super().__init__(path, busy_timeout, read_only=read_only)
        # The Batch API's batches and answers (added when a writer opens a store without their tables).
        self.batches = BatchJournal(self._db, self._transaction)
        try:
            if read_only:
                self._check_schema()
            else:
                self._set_up(time.monotonic() + busy_timeout)
        except BaseException as exc:
            self._db.close()
            if new and self.path.exists() and self.path.stat().st_size == 0:
                self.path.unlink()  # nothing was stored: leave no empty file that looks like a store
            if isinstance(exc, sqlite3.DatabaseError):
                message = str(exc)
                if "not a database" in message or "malformed" in message:
                    raise InputError(self.path, None, f"not an exampp grade store ({message})") from None
                if read_only:
                    raise InputError(self.path, None, f"cannot read the grade store: {message}") from None
                raise OutputError(self.path, f"cannot open the grade store: {message}") from None
            raise

    def _set_up(self, deadline: float) -> None:
        """Check an existing store before anything is written (a file that is not one stays as it
        was), then WAL mode and, for a new store, the schema. A file without tables is new: an
        empty database, or one that another process is creating now. Switching to WAL can report
        "locked" at once, without waiting, while another process creates the same store: that is
        waited out like any lock."""
        new = self._db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is None
        if not new:
            self._check_schema()
        while True:
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        # FULL: a committed batch survives power loss too, not only a killed process.
        self._db.execute("PRAGMA synchronous=FULL")
        if new:
            if self._schema_version() is None:
                self._create_schema()
            self._check_schema()  # also what another process created meanwhile
        if self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'claims'").fetchone() is None:
            with self._transaction():
                self._db.execute(_CLAIMS_SCHEMA)
        if self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'batch_answers'").fetchone() is None:
            with self._transaction():
                for statement in filter(str.strip, _BATCH_SCHEMA.split(";")):
                    self._db.execute(statement)

    def _check_schema(self) -> None:
        """An InputError, having written nothing, unless the file is an exampp store: a schema version
        this exampp reads, and the tables and columns of that version (a version-1 store may lack the
        claims and batch tables, which a writer adds)."""
        tables = set(_tables(self._db))
        if "schema_version" not in tables or "version" not in _columns(self._db, "schema_version"):
            raise InputError(self.path, None, "not an exampp grade store (no schema_version table)")
        rows = self._db.execute("SELECT version FROM schema_version LIMIT 2").fetchall()
        version = rows[0][0] if len(rows) == 1 else None
        if version not in READABLE_VERSIONS:
            found = "none" if not rows else "several" if len(rows) > 1 else repr(version)[:40]
            raise InputError(self.path, None, f"grade store schema version {found}, this exampp reads "
                                              f"{' and '.join(map(str, READABLE_VERSIONS))}")
        expected = _schema_columns()
        optional = {"claims", "batches", "batch_answers"} | ({"cascaded"} if version == 1 else set())
        missing = [table for table in expected if table not in tables and table not in optional]
        if missing:
            tables_named = f"table{'s' * (len(missing) > 1)} {', '.join(missing)}"
            raise InputError(self.path, None, f"not an exampp grade store (it lacks the {tables_named})")
        for table, wanted in expected.items():
            if table in tables:
                present = _columns(self._db, table)
                lacking = [column for column in wanted if column not in present]
                if lacking:
                    raise InputError(self.path, None, f"not an exampp grade store (its table {table} lacks "
                                                      f"{', '.join(lacking)})")

    def _schema_version(self) -> int | None:
        # A plain read, so that opening an existing store does not wait for a writer's lock.
        if self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'schema_version'").fetchone() is None:
            return None
        row = self._db.execute("SELECT version FROM schema_version").fetchone()
        return None if row is None else row[0]

    def _create_schema(self) -> None:
        with self._transaction():
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self._db.execute(statement)
            # Another process may have created the store while we waited for the lock.
            if self._db.execute("SELECT 1 FROM schema_version").fetchone() is None:
                self._db.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))

    @contextmanager
    def batch(self) -> Iterator["GradeStore"]:
        """Make every write inside the block one transaction: all of it is stored, or none."""
        with self._transaction():
            yield self

    # -- id mappings -------------------------------------------------------------------

    def register_passages(self, query_id: str, passages: Mapping[str, str]) -> dict[str, str]:
        """Record the current text of each passage id of a query; returns ``{passage_id: text_hash}``."""
        hashes = {pid: text_hash(text) for pid, text in passages.items()}
        with self._transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO passages (query_id, passage_id, text_hash) VALUES (?, ?, ?)",
                ((query_id, pid, bytes.fromhex(h)) for pid, h in hashes.items()),
            )
        return hashes

    def register_questions(self, questions: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str], str]:
        """Record ``(query_id, question_id, text)`` triples; returns ``{(query_id, question_id): text_hash}``."""
        hashes = {(qid, question_id): text_hash(text) for qid, question_id, text in questions}
        with self._transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO questions (query_id, question_id, text_hash) VALUES (?, ?, ?)",
                ((qid, question_id, bytes.fromhex(h)) for (qid, question_id), h in hashes.items()),
            )
        return hashes

    # -- grades ------------------------------------------------------------------------

    @overload
    def _method_key(self, method_id: str, create: Literal[True]) -> int: ...

    @overload
    def _method_key(self, method_id: str, create: bool = False) -> int | None: ...

    def _method_key(self, method_id: str, create: bool = False) -> int | None:
        """The method's key in the methods table (added there with ``create``), or None where absent."""
        if create:
            self._db.execute("INSERT OR IGNORE INTO methods (method_id) VALUES (?)", (method_id,))
        row = self._db.execute("SELECT id FROM methods WHERE method_id = ?", (method_id,)).fetchone()
        return None if row is None else row[0]

    def put_many(self, grades: Iterable[HashedGrade | tuple[Grade, str, str]]) -> int:
        """Store grades in one transaction (all or none); a later grade for the same key replaces
        the earlier one. Returns the number of grades written."""
        with self._transaction() as db:
            # Valid only inside this transaction: a rollback may drop methods it created.
            keys: dict[str, int] = {}
            written = 0

            def rows() -> Iterator[tuple[object, ...]]:
                nonlocal written
                for g, passage_hash, question_hash in grades:
                    written += 1
                    if g.method_id not in keys:
                        keys[g.method_id] = self._method_key(g.method_id, create=True)
                    probabilities = None if g.probabilities is None else json.dumps(list(g.probabilities))
                    yield (keys[g.method_id], bytes.fromhex(passage_hash), bytes.fromhex(question_hash),
                           float(g.grade), g.answer, probabilities)

            # A graded pair is nobody's to grade any more: its claim goes, and a grade replacing a
            # cascaded 0 its mark (when there are claims or marks at all: an import has none, and
            # millions of grades).
            clear = [table for table in ("claims", "cascaded") if self._any(table)]
            stored = list(rows()) if clear else rows()
            db.executemany(
                "INSERT OR REPLACE INTO grades (method, passage_hash, question_hash, grade, answer, probabilities)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                stored,
            )
            for table in clear:
                db.executemany(f"DELETE FROM {table} WHERE method = ? AND passage_hash = ? AND question_hash = ?",
                               (row[:3] for row in stored))
        return written

    def put_cascaded(self, stage: str, grades: Iterable[tuple[HashedGrade, float]]) -> int:
        """Store the grades of pairs the first stage ``stage`` ruled out (grade 0), each marked
        with its score, in one transaction; a version-1 store becomes version 2. Returns the
        number of grades written."""
        grades = list(grades)
        with self._transaction() as db:
            if self._schema_version() == 1:
                db.execute(_CASCADED_SCHEMA)
                db.execute("UPDATE schema_version SET version = 2")
            written = self.put_many(hashed for hashed, _ in grades)
            methods = {m: self._method_key(m) for m in {g.method_id for (g, _, _), _ in grades}}  # one look each
            db.executemany(
                "INSERT OR REPLACE INTO cascaded (method, passage_hash, question_hash, stage, score)"
                " VALUES (?, ?, ?, ?, ?)",
                ((methods[g.method_id], bytes.fromhex(p), bytes.fromhex(q), stage, float(score))
                 for (g, p, q), score in grades),
            )
        return written

    def _any(self, table: str) -> bool:
        """Whether ``table`` exists and has a row (a version-1 store has no ``cascaded`` table)."""
        if self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                            (table,)).fetchone() is None:
            return False
        return self._db.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None

    def _rows(self, table: str, extra: str, method: int, keys: Sequence[Key]) -> Iterator[tuple]:
        """Rows ``(passage_hash, question_hash, *extra columns)`` of ``table`` for these keys of a
        method, asked for in chunks (SQLite limits bound variables)."""
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            values = ", ".join(["(?, ?)"] * len(chunk))
            yield from self._db.execute(
                f"SELECT passage_hash, question_hash{extra} FROM {table}"
                f" WHERE method = ? AND (passage_hash, question_hash) IN (VALUES {values})",
                [method, *_blobs(chunk)],
            )

    def _graded(self, method: int, keys: Sequence[Key], cascade: CascadeMark | None) -> set[Key]:
        """Which of ``keys`` the method (by its number) has grades for that count: every grade,
        except the cascaded ones that ``cascade`` does not accept (all of them without a cascade)."""
        graded = {(p.hex(), q.hex()) for p, q in self._rows("grades", "", method, keys)}
        if graded and self._any("cascaded"):
            graded -= {(p.hex(), q.hex())
                       for p, q, stage, score in self._rows("cascaded", ", stage, score", method, keys)
                       if cascade is None or stage != cascade.stage or score >= cascade.threshold}
        return graded

    def missing(self, method_id: str, pairs: Iterable[Key], cascade: CascadeMark | None = None) -> list[Key]:
        """The ``(passage_hash, question_hash)`` pairs that ``method_id`` has not graded yet,
        in input order, each once; cascaded pairs count as graded only when ``cascade`` accepts them."""
        todo = list(dict.fromkeys(pairs))
        method = self._method_key(method_id)
        if method is None:
            return todo
        found = self._graded(method, todo, cascade)
        return [pair for pair in todo if pair not in found]

    def claim(self, method_id: str, keys: Sequence[Key], owner: str, seconds: float = CLAIM_SECONDS,
              cascade: CascadeMark | None = None) -> list[Key]:
        """Of ``keys``, those that are neither graded (as :meth:`missing` counts with ``cascade``)
        nor claimed by another live process, now claimed by ``owner`` for ``seconds`` (in input
        order); all in one transaction."""
        keys = list(dict.fromkeys(keys))
        now = time.time()
        with self._transaction() as db:
            method = self._method_key(method_id, create=True)
            graded = self._graded(method, keys, cascade)
            alive = functools.cache(_alive)  # one look per owner, not per claimed pair
            taken = {(p.hex(), q.hex())
                     for p, q, other, expires in self._rows("claims", ", owner, expires", method, keys)
                     if other != owner and expires > now and alive(other)}
            mine = [key for key in keys if key not in graded and key not in taken]
            db.executemany(
                "INSERT OR REPLACE INTO claims (method, passage_hash, question_hash, owner, expires)"
                " VALUES (?, ?, ?, ?, ?)",
                ((method, bytes.fromhex(p), bytes.fromhex(q), owner, now + seconds) for p, q in mine),
            )
        return mine

    def release(self, owner: str) -> None:
        """Drop the claims ``owner`` still holds (pairs it did not grade after all). A store that
        cannot be written now (disk full) keeps them: they lapse when the process is gone."""
        try:
            with self._transaction() as db:
                db.execute("DELETE FROM claims WHERE owner = ?", (owner,))
        except (OutputError, sqlite3.Error):
            pass

    def _joined(self, columns: str, method_id: str | None, query_ids: Iterable[str] | None,
                order: str = "") -> sqlite3.Cursor:
        # Grades are joined through the *current* id -> hash mappings; passage and question
        # must belong to the same query.
        where, params = [], []
        if method_id is not None:
            where.append("m.method_id = ?")
            params.append(method_id)
        if query_ids is not None:
            where.append("p.query_id IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(sorted(set(query_ids))))
        sql = (
            f"SELECT {columns}"
            " FROM grades g"
            " JOIN methods m ON m.id = g.method"
            " JOIN passages p ON p.text_hash = g.passage_hash"
            " JOIN questions q ON q.text_hash = g.question_hash AND q.query_id = p.query_id"
            + (" WHERE " + " AND ".join(where) if where else "")
            + order
        )
        return self._db.execute(sql, params)

    def _select(self, method_id: str | None, query_ids: Iterable[str] | None) -> sqlite3.Cursor:
        return self._joined(
            "p.query_id, p.passage_id, q.question_id, m.method_id, g.grade, g.answer, g.probabilities",
            method_id, query_ids, " ORDER BY p.query_id, p.passage_id, q.question_id, m.method_id")

    def graded_passages(self, method_id: str, query_ids: Iterable[str]) -> set[tuple[str, str]]:
        """The (query id, passage id) pairs that :meth:`grades` of ``method_id`` for ``query_ids``
        would hold a row of, without reading the grades."""
        return set(self._joined("DISTINCT p.query_id, p.passage_id", method_id, query_ids).fetchall())

    def grades(self, method_id: str | None = None, query_ids: Iterable[str] | None = None, *,
               probabilities: bool = False) -> pd.DataFrame:
        """Grades by ids: columns query_id, passage_id, question_id, method_id, grade, answer; with
        ``probabilities`` also ``probabilities``: P(grade = 0, 1, ...) as a tuple, or None where the
        method stored none (expected labels read it)."""
        if not probabilities:
            rows = [row[:6] for row in self._select(method_id, query_ids)]
            return pd.DataFrame.from_records(rows, columns=GRADE_COLUMNS).astype({"grade": float})
        rows = [row[:6] + (None if row[6] is None else tuple(json.loads(row[6])),)
                for row in self._select(method_id, query_ids)]
        frame = pd.DataFrame.from_records(rows, columns=[*GRADE_COLUMNS, "probabilities"])
        return frame.astype({"grade": float})

    def records(self, method_id: str | None = None, query_ids: Iterable[str] | None = None) -> Iterator[Grade]:
        """The same grades as :meth:`grades`, as :class:`Grade` records with their probabilities."""
        for qid, pid, question_id, mid, grade, answer, probabilities in self._select(method_id, query_ids):
            probs = None if probabilities is None else tuple(json.loads(probabilities))
            yield Grade(qid, pid, question_id, grade, mid, answer, probs)

    def is_empty(self) -> bool:
        """Whether the store holds nothing a job made: no grade, no cascade mark, no batch."""
        return not any(self._any(table) for table in ("grades", "cascaded", "batches"))

    def methods(self) -> list[str]:
        """Method ids that have grades, sorted."""
        sql = "SELECT m.method_id FROM methods m WHERE EXISTS (SELECT 1 FROM grades g WHERE g.method = m.id) ORDER BY 1"
        return [row[0] for row in self._db.execute(sql)]

    def counts(self) -> dict[str, int]:
        """Rows per table: passages and questions (id mappings), grades (content-addressed), methods."""
        queries = {
            "passages": "SELECT COUNT(*) FROM passages",
            "questions": "SELECT COUNT(*) FROM questions",
            "grades": "SELECT COUNT(*) FROM grades",
            "methods": "SELECT COUNT(DISTINCT method) FROM grades",
        }
        # One read transaction: all counts from the same snapshot while others write.
        self._db.execute("BEGIN")
        try:
            return {name: self._db.execute(sql).fetchone()[0] for name, sql in queries.items()}
        finally:
            self._db.execute("COMMIT")
