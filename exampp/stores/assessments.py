"""The assessors' label store: one SQLite file (``<workspace>/assessments.sqlite``), and the label
files that move labels between tools (TREC qrels with an assessor column, Label Studio's export,
autojudge-annotate's JSONL).

A label is a person's grade of one pair of an assessment sample (:mod:`exampp.formats.assessment_sample`):
``query_id``, ``key`` (the pair's name within its query: a doc_id, or ``run/nugget_id``), ``assessor``,
``grade`` (an integer of the track's scale), an optional ``note`` and the ``time`` it was given.

Durability: WAL journal, ``synchronous=FULL``, one transaction per label. A label is committed before
the call that gives it returns, so a label acknowledged to an assessor survives a killed process (and
a power loss). Rows are never deleted: undoing a label marks it undone, giving a pair a new grade adds
a row, and an assessor's current label of a pair is their newest row not undone. The table is the
audit trail of every grade given.

Claims: an assessor is shown one pair at a time and claims it (:meth:`AssessmentStore.claim_next`),
so that two assessors judging at once get different pairs. A claim expires (a closed tab holds its
pair for :data:`CLAIM_SECONDS` at most) and is released by the label that answers it. Claiming runs in
one ``BEGIN IMMEDIATE`` transaction, so two processes or threads never claim the same pair past its need.
"""
from __future__ import annotations

import datetime
import json
import re
import sqlite3
import time as clock
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import pandas as pd

from exampp.collection.ids import check_id, check_query_id, id_problem, line_problem
from exampp.errors import InputError
from exampp.files.io import (
    PathLike,
    atomic_write,
    display_name,
    excerpt,
    first_nonblank,
    held_lines,
    iter_lines,
    json_lines,
    json_name,
    parse_json,
)
from exampp.formats.annotate_export import read_annotations
from exampp.formats.trec_qrels import parse_label
from exampp.stores.sqlite_file import SQLiteFile

LABEL_COLUMNS = ["query_id", "key", "assessor", "grade", "note", "time"]
SCHEMA_VERSION = 1
CLAIM_SECONDS = 600.0
"""How long a pair shown to an assessor stays theirs without an answer (a closed tab frees it then)."""
MAX_NOTE_CHARS = 10_000
# Label Studio: the names of the labeling config's controls (exampp.assess.tasks writes the config),
# and the task data fields that name the pair.
LS_GRADE = "grade"
LS_NOTE = "note"
LS_PAIR_FIELDS = ("query_id", "key")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    query_id TEXT NOT NULL, key TEXT NOT NULL, assessor TEXT NOT NULL,
    grade INTEGER NOT NULL, note TEXT NOT NULL, time REAL NOT NULL,
    undone REAL);
CREATE INDEX IF NOT EXISTS labels_by_pair ON labels (query_id, key);
CREATE INDEX IF NOT EXISTS labels_by_assessor ON labels (assessor, id);
CREATE TABLE IF NOT EXISTS claims (
    query_id TEXT NOT NULL, key TEXT NOT NULL, assessor TEXT NOT NULL, expires REAL NOT NULL,
    PRIMARY KEY (query_id, key, assessor)) WITHOUT ROWID;
"""
_INSERT = "INSERT INTO labels (query_id, key, assessor, grade, note, time) VALUES (?, ?, ?, ?, ?, ?)"
# An assessor's current label of a pair: their newest row that is not undone.
_CURRENT = """SELECT * FROM labels WHERE id IN (
    SELECT MAX(id) FROM labels WHERE undone IS NULL GROUP BY query_id, key, assessor)"""

Pair = tuple[str, str]
"""(query_id, key)"""


class HumanLabel(NamedTuple):
    """A label a person gave a pair (the rows of :meth:`AssessmentStore.labels`)."""

    query_id: str
    key: str
    assessor: str
    grade: int
    note: str = ""
    time: float | None = None  # seconds since the epoch; None: unknown (a qrels line), now when stored


def assessor_problem(name: object) -> str | None:
    """Why ``name`` cannot name an assessor (it becomes the qrels' fifth column), or None."""
    if isinstance(name, str) and len(name) > 100:
        return "is longer than 100 characters"
    return id_problem(name)


def check_label(label: HumanLabel, *, known_assessor: bool = True) -> HumanLabel:
    """``label`` when its fields can be stored and written to qrels, else ValueError saying why;
    ``known_assessor=False`` lets the assessor be ``""`` (a qrels file without the column)."""
    check_query_id(label.query_id)
    check_id(label.key, "key")
    problem = assessor_problem(label.assessor) if known_assessor or label.assessor else None
    if problem:
        raise ValueError(f"assessor {label.assessor!r} {problem}")
    if isinstance(label.grade, bool) or not isinstance(label.grade, int):
        raise ValueError(f"grade {label.grade!r} is not an integer")
    parse_label(str(label.grade), "grade")  # within the range qrels hold
    if not isinstance(label.note, str) or len(label.note) > MAX_NOTE_CHARS:
        raise ValueError(f"a note is a string of at most {MAX_NOTE_CHARS:,} characters")
    return label


class AssessmentStore(SQLiteFile):
    """The assessors' labels and claims in one SQLite file, created when missing.

    Safe to share between the threads of one process (calls are serialised) and between processes
    (SQLite's locks). Use as a context manager or call :meth:`close`.

    :param path: The SQLite file (a workspace's is :attr:`~exampp.stores.layout.Workspace.assessments`).
    :param busy_timeout: Seconds to wait for another process's lock before giving up.
    :raises InputError: The file is not an exampp assessment store.
    """

    noun = "assessment store"
    article = "an"

    def __init__(self, path: PathLike, busy_timeout: float = 60.0):
        super().__init__(path, busy_timeout)
        try:
            self._set_up()
        except BaseException as exc:
            self._db.close()
            if isinstance(exc, sqlite3.DatabaseError):
                raise InputError(self.path, None, f"not an exampp assessment store ({exc})") from None
            raise

    def _set_up(self) -> None:
        tables = {name for (name,) in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables and "labels" not in tables:
            raise InputError(self.path, None, "not an exampp assessment store (no labels table)")
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")  # a committed label survives power loss too
        with self._transaction() as db:
            for statement in filter(str.strip, _SCHEMA.split(";")):
                db.execute(statement)
            rows = db.execute("SELECT version FROM schema_version").fetchall()
            if not rows:
                db.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
            elif rows != [(SCHEMA_VERSION,)]:
                raise InputError(self.path, None, f"assessment store schema version {rows[0][0]!r}, this exampp "
                                                  f"reads {SCHEMA_VERSION}")

    # -- labels ---------------------------------------------------------------------------

    def add(self, query_id: str, key: str, assessor: str, grade: int, note: str = "", *,
            time: float | None = None) -> int:
        """Store a label, committed before this returns, and release the assessor's claim on the
        pair; returns the label's id. A label the assessor gave the pair before is superseded."""
        label = check_label(HumanLabel(query_id, key, assessor, grade, note, time))
        with self._transaction() as db:
            cursor = db.execute(_INSERT, (*label[:5], clock.time() if time is None else time))
            db.execute("DELETE FROM claims WHERE query_id = ? AND key = ? AND assessor = ?", (query_id, key, assessor))
            return int(cursor.lastrowid or 0)

    def add_many(self, labels: Iterable[HumanLabel]) -> int:
        """Store labels in one transaction (all or none), leaving out each one the assessor already
        has with the same grade and note, so that importing a file twice adds nothing; the number added."""
        rows = [check_label(label) for label in labels]
        now = clock.time()
        added = 0
        with self._transaction() as db:
            current = {(q, k, a): (g, n) for q, k, a, g, n in
                       db.execute(f"SELECT query_id, key, assessor, grade, note FROM ({_CURRENT})")}
            for label in rows:
                pair = (label.query_id, label.key, label.assessor)
                if current.get(pair) == (label.grade, label.note):
                    continue
                db.execute(_INSERT, (*label[:5], now if label.time is None else label.time))
                current[pair] = (label.grade, label.note)
                added += 1
        return added

    def undo(self, assessor: str, *, claim_seconds: float = CLAIM_SECONDS) -> HumanLabel | None:
        """Undo the assessor's newest label that stands, and give its pair back to them (claimed, in
        place of the pair they hold): the label undone, or None when they have none."""
        with self._transaction() as db:
            row = db.execute("SELECT id, query_id, key, assessor, grade, note, time FROM labels "
                             "WHERE assessor = ? AND undone IS NULL ORDER BY id DESC LIMIT 1", (assessor,)).fetchone()
            if row is None:
                return None
            now = clock.time()
            db.execute("UPDATE labels SET undone = ? WHERE id = ?", (now, row[0]))
            db.execute("DELETE FROM claims WHERE assessor = ?", (assessor,))
            db.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?)",
                       (row[1], row[2], assessor, now + claim_seconds))
            return HumanLabel(*row[1:])

    def labels(self, assessor: str | None = None) -> pd.DataFrame:
        """The labels that stand (undone ones left out), in the order they were given: columns
        :data:`LABEL_COLUMNS`, ``time`` as UTC timestamps; ``assessor``: only theirs."""
        where, args = ("WHERE assessor = ?", (assessor,)) if assessor is not None else ("", ())
        with self._lock:
            rows = self._db.execute(f"SELECT {', '.join(LABEL_COLUMNS)} FROM ({_CURRENT}) {where} ORDER BY id",
                                    args).fetchall()
        return labels_frame(rows)

    def history(self) -> pd.DataFrame:
        """Every label ever given, undone ones too (column ``undone``: when, else NaT), in order."""
        with self._lock:
            rows = self._db.execute(f"SELECT {', '.join(LABEL_COLUMNS)}, undone FROM labels ORDER BY id").fetchall()
        table = pd.DataFrame(rows, columns=[*LABEL_COLUMNS, "undone"])
        for column in ("time", "undone"):
            table[column] = pd.to_datetime(table[column], unit="s", utc=True)
        return table

    def assessors(self) -> dict[Pair, set[str]]:
        """Who has a label standing on each pair that has one."""
        found: dict[Pair, set[str]] = {}
        with self._lock:
            for q, k, a in self._db.execute(f"SELECT query_id, key, assessor FROM ({_CURRENT})"):
                found.setdefault((q, k), set()).add(a)
        return found

    # -- claims ---------------------------------------------------------------------------

    def claim_next(self, assessor: str, pairs: Sequence[tuple[str, str, int]], *,
                   claim_seconds: float = CLAIM_SECONDS, now: float | None = None) -> Pair | None:
        """The pair ``assessor`` should judge now, claimed for them, or None when none is left to them.

        ``pairs``: ``(query_id, key, labels needed)`` in the order to judge them (2 for a pair judged
        twice). The pair they hold already when they have not labelled it (a reload shows the same
        pair), else the first they have not labelled whose labels and others' live claims fall short
        of its need. Taking a pair releases any other claim of theirs: an assessor holds one pair."""
        now = clock.time() if now is None else now
        with self._transaction() as db:
            db.execute("DELETE FROM claims WHERE expires <= ?", (now,))
            mine = {(q, k) for q, k in db.execute(f"SELECT query_id, key FROM ({_CURRENT}) WHERE assessor = ?",
                                                  (assessor,))}
            held = {(q, k) for q, k in db.execute("SELECT query_id, key FROM claims WHERE assessor = ?", (assessor,))}
            taken: dict[Pair, int] = {}
            for q, k, n in db.execute(f"SELECT query_id, key, COUNT(*) FROM ({_CURRENT}) GROUP BY query_id, key"):
                taken[(q, k)] = n
            for q, k, n in db.execute("SELECT query_id, key, COUNT(*) FROM claims WHERE assessor != ? "
                                      "GROUP BY query_id, key", (assessor,)):
                taken[(q, k)] = taken.get((q, k), 0) + n
            chosen = next(((q, k) for q, k, _ in pairs if (q, k) in held and (q, k) not in mine), None)
            if chosen is None:
                chosen = next(((q, k) for q, k, need in pairs
                               if (q, k) not in mine and taken.get((q, k), 0) < need), None)
            db.execute("DELETE FROM claims WHERE assessor = ?", (assessor,))
            if chosen is not None:
                db.execute("INSERT INTO claims VALUES (?, ?, ?, ?)", (*chosen, assessor, now + claim_seconds))
            return chosen

    def release(self, assessor: str) -> None:
        """Give up the assessor's claims (they signed out)."""
        with self._transaction() as db:
            db.execute("DELETE FROM claims WHERE assessor = ?", (assessor,))

    def claims(self, *, now: float | None = None) -> pd.DataFrame:
        """The live claims: columns query_id, key, assessor, expires (seconds since the epoch)."""
        with self._lock:
            rows = self._db.execute("SELECT query_id, key, assessor, expires FROM claims WHERE expires > ? "
                                    "ORDER BY expires", (clock.time() if now is None else now,)).fetchall()
        return pd.DataFrame(rows, columns=["query_id", "key", "assessor", "expires"])


def labels_frame(rows: Iterable[Sequence[Any]]) -> pd.DataFrame:
    """Label rows (:data:`LABEL_COLUMNS`, time in seconds since the epoch or None) as the table
    :meth:`AssessmentStore.labels` and :func:`read_labels` return."""
    table = pd.DataFrame(list(rows), columns=LABEL_COLUMNS)
    table["grade"] = table["grade"].astype("int64")
    table["time"] = pd.to_datetime(table["time"].astype("float64"), unit="s", utc=True)
    return table


def frame_labels(table: pd.DataFrame) -> list[HumanLabel]:
    """The rows of a labels table (as :func:`read_labels` returns) as :class:`HumanLabel` records."""
    return [HumanLabel(q, k, a, int(g), n, None if pd.isna(t) else t.timestamp())
            for q, k, a, g, n, t in table[LABEL_COLUMNS].itertuples(index=False)]


# -- label files --------------------------------------------------------------------------


def read_labels(path: PathLike) -> pd.DataFrame:
    """The labels of a label file (columns :data:`LABEL_COLUMNS`, in file order), recognised from its
    content:

    - TREC qrels ``query_id iter key grade [assessor]``: iter is ignored; without the fifth column
      the assessor is ``""`` (unknown) and so is ``time`` (NaT); notes are empty;
    - Label Studio's JSON export of the tasks ``exampp assess export --format label-studio`` wrote:
      each annotation not cancelled is a label by its annotator (``completed_by``: the user's email
      where the export gives it, else ``ls-user-<id>``), the grade the alias of the ``grade`` choice,
      the note the ``note`` text area, the time the annotation's;
    - TREC AutoJudge's annotation page's JSONL export (``autojudge-annotate``): a rated document
      annotation is the label of ``(topic_id, docid)``, a rated report annotation that of
      ``(topic_id, <run_id>/answer)``, by ``username``, its rating ``Perfect``/``Mostly Good``/
      ``So-so``/``Bad`` the grade 3/2/1/0, ``comment`` the note; citation annotations, and those
      ``Not rated``, are skipped (:mod:`exampp.formats.annotate_export` says why).

    :param path: The label file.
    :raises InputError: A pair labelled twice by one assessor, a fractional grade, a line of the wrong
        shape, naming the file, the line and what is wrong.
    """
    name = display_name(path)
    first, lines = first_nonblank(iter_lines(path))
    if first is None:
        raise InputError(name, None, "empty label file: expected qrels lines, Label Studio's JSON export or "
                                     "autojudge-annotate's JSONL")
    start = first.lstrip()[:1]
    # an annotation's first line is an object: a Label Studio array (one line when compact) is not parsed twice
    labels = (_annotate(lines, name) if start == "{" and _is_annotation(first)
              else _label_studio(lines, name) if start in "[{" else _qrels(lines, name))
    seen: dict[tuple[str, str, str], int | None] = {}
    for line, label in labels:
        pair = (label.query_id, label.key, label.assessor)
        if pair in seen:
            by = f" by {label.assessor}" if label.assessor else ""
            raise InputError(name, line, f"the pair {label.query_id} {label.key} is labelled twice{by} "
                                         f"(first on line {seen[pair]})")
        seen[pair] = line
    return labels_frame(label for _, label in labels)


def _qrels(lines: Iterable[tuple[int, str]], name: str) -> list[tuple[int, HumanLabel]]:
    labels = []
    for lineno, line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        problem = line_problem(line)
        if problem is not None:
            raise InputError(name, lineno, problem)
        cols = stripped.split()
        if len(cols) not in (4, 5):
            raise InputError(name, lineno, f"expected 4 or 5 columns 'query_id iter key grade [assessor]', "
                                           f"found {len(cols)}")
        query_id, _, key, grade, *assessor = cols
        labels.append((lineno, _label(query_id, key, assessor[0] if assessor else "", grade, "", None, name, lineno)))
    if not labels:
        raise InputError(name, None, "no labels: the file has no qrels lines")
    return labels


def _label(query_id: str, key: str, assessor: str, grade: object, note: str, time: float | None,
           name: str, line: int | None) -> HumanLabel:
    """A label read from a file, checked: an InputError at ``name:line`` saying what is wrong."""
    if isinstance(grade, str):
        try:
            grade = parse_label(grade, "grade")
        except ValueError as exc:
            raise InputError(name, line, str(exc)) from None
    if not isinstance(grade, int) or isinstance(grade, bool):
        raise InputError(name, line, f"grade {excerpt(str(grade))} is not an integer grade")
    try:
        return check_label(HumanLabel(query_id, key, assessor, grade, note, time), known_assessor=False)
    except ValueError as exc:
        raise InputError(name, line, str(exc)) from None


def _is_annotation(line: str) -> bool:
    """The line is an annotation of autojudge-annotate's JSONL (every record has a rating)."""
    try:
        record = json.loads(line)
    except ValueError:  # a Label Studio export's first line, or bad JSON that reader tells of
        return False
    return isinstance(record, dict) and "rating" in record


def _annotate(lines: Iterable[tuple[int, str]], name: str) -> list[tuple[int, HumanLabel]]:
    labels = [(a.line, _label(a.query_id, a.key, a.assessor, a.grade, a.note,
                              _ls_time({"updated_at": a.stamp}, "the annotation", name, a.line), name, a.line))
              for a in read_annotations(json_lines(lines, name), name)]
    if not labels:
        raise InputError(name, None, "no labels: no rated document or report annotation")
    return labels


_GRADE_CHOICE = re.compile(r"(-?[0-9]+)(?:\s.*)?", re.DOTALL)


def _label_studio(lines: Iterator[tuple[int, str]], name: str) -> list[tuple[int, HumanLabel]]:
    held = held_lines(lines, name)
    first_line = held[0][0] if held else 1
    labels = []
    for line, task in _json_array(("\n".join(text for _, text in held)), name, first_line):
        if not isinstance(task, dict):
            raise InputError(name, line, f"expected a Label Studio task object, found {json_name(task)}")
        data = task.get("data")
        query_id, key = (data.get(field) if isinstance(data, dict) else None for field in LS_PAIR_FIELDS)
        if not (isinstance(query_id, str) and isinstance(key, str)):
            raise InputError(name, line, "the task's data lacks query_id and key: not a task of "
                                         "`exampp assess export --format label-studio`")
        annotations = task.get("annotations") or []
        if not isinstance(annotations, list):
            raise InputError(name, line, f"'annotations' must be a list, found {json_name(annotations)}")
        for index, annotation in enumerate(annotations):
            where = f"annotations[{index}]"
            if not isinstance(annotation, dict):
                raise InputError(name, line, f"{where} must be an object, found {json_name(annotation)}")
            if annotation.get("was_cancelled"):
                continue  # skipped by the annotator
            grade, note = _ls_result(annotation.get("result"), where, name, line)
            annotator = _ls_annotator(annotation.get("completed_by"), where, name, line)
            labels.append((line, _label(query_id, key, annotator, grade, note, _ls_time(annotation, where, name, line),
                                        name, line)))
    return labels


def _ls_result(result: object, where: str, name: str, line: int) -> tuple[int, str]:
    if not isinstance(result, list):
        raise InputError(name, line, f"{where}.result must be a list, found {json_name(result)}")
    grade: int | None = None
    notes: list[str] = []
    for item in result:
        if not isinstance(item, dict):
            continue
        given = item.get("value")
        value = given if isinstance(given, dict) else {}
        if item.get("from_name") == LS_GRADE:
            choices = value.get("choices")
            match = (_GRADE_CHOICE.fullmatch(choices[0]) if isinstance(choices, list) and len(choices) == 1
                     and isinstance(choices[0], str) else None)
            if match is None:
                raise InputError(name, line, f"{where}: the {LS_GRADE!r} choice must be one grade (the choice's "
                                             f"alias, e.g. \"2\"), found {excerpt(json.dumps(choices))}")
            grade = int(match.group(1))
        elif item.get("from_name") == LS_NOTE:
            text = value.get("text")
            notes.extend(t for t in (text if isinstance(text, list) else [text]) if isinstance(t, str) and t.strip())
    if grade is None:
        raise InputError(name, line, f"{where} has no grade (no {LS_GRADE!r} choice in its result)")
    return grade, "\n".join(note.strip() for note in notes)


def _ls_annotator(value: object, where: str, name: str, line: int) -> str:
    if isinstance(value, dict):
        value = value.get("email") or value.get("username") or value.get("id")
    if isinstance(value, int) and not isinstance(value, bool):
        return f"ls-user-{value}"
    if isinstance(value, str) and value:
        return value
    raise InputError(name, line, f"{where}.completed_by names no annotator (found {json_name(value)})")


def _ls_time(annotation: Mapping[str, Any], where: str, name: str, line: int) -> float | None:
    stamp = annotation.get("updated_at") or annotation.get("created_at")
    if stamp is None:
        return None
    try:
        moment = datetime.datetime.fromisoformat(stamp) if isinstance(stamp, str) else None
    except ValueError:
        moment = None
    if moment is None:
        raise InputError(name, line, f"{where}: the time {excerpt(str(stamp))} is not an ISO 8601 time")
    return (moment if moment.tzinfo else moment.replace(tzinfo=datetime.timezone.utc)).timestamp()


def _json_array(text: str, name: str, first_line: int) -> Iterator[tuple[int, Any]]:
    """The items of a JSON array, each with the line it starts on, so that a bad task is named by
    its line (the whole document is parsed first: a syntax error is told by its own line)."""
    whole = parse_json(text, name)
    if not isinstance(whole, list):
        raise InputError(name, first_line, f"expected Label Studio's JSON export (a list of tasks), found "
                                           f"{json_name(whole)}")
    decoder, at, line = json.JSONDecoder(), text.index("[") + 1, first_line
    for value in whole:
        start = _BETWEEN_ITEMS.match(text, at).end()  # type: ignore[union-attr]  # matches any text
        line += text.count("\n", at, start)
        yield line, value
        at = decoder.raw_decode(text, start)[1]
        line += text.count("\n", start, at)


_BETWEEN_ITEMS = re.compile(r"[\s,]*")


def write_labels(labels: pd.DataFrame, path: PathLike) -> int:
    """Write labels as qrels with the assessor's column, ``query_id 0 key grade assessor``, sorted by
    query, key and assessor, atomically.

    :param labels: The labels (columns :data:`LABEL_COLUMNS`).
    :param path: The file to write.
    :returns: The number of labels written.
    """

    rows = labels.sort_values(["query_id", "key", "assessor"], kind="stable")
    with atomic_write(path) as out:
        for label in frame_labels(rows):
            check_label(label)
            out.write(f"{label.query_id} 0 {label.key} {label.grade} {label.assessor}\n")
    return len(rows)
