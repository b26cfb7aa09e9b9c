"""Grade store files (exampp.stores.grade_store.GradeStore): exampp's own schema with tables or columns missing,
an unreadable schema version, someone else's tables, an empty file, a corrupt SQLite file or no
SQLite file at all. A store opens; anything else is refused in one line naming the file, before
a byte of it is written, whether a command only reads the store or would write into it."""
from __future__ import annotations

import functools
import sqlite3

import pytest
from hypothesis import example, strategies as st

from exampp.errors import InputError
from exampp.stores.grade_store import GradeStore

from .checks import assert_located, put, scratch, tries

HEADER = b"SQLite format 3\x00"


@functools.cache
def _exampp_tables() -> dict[str, list[str]]:
    """The tables of a new store, each with its columns."""
    with scratch() as folder:
        GradeStore(folder / "grades.sqlite").close()
        db = sqlite3.connect(folder / "grades.sqlite")
        names = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        tables = {name: [column for (column,) in db.execute("SELECT name FROM pragma_table_info(?)", (name,))]
                  for name in names}
        db.close()
    return tables


versions = st.one_of(st.integers(-1, 4), st.sampled_from([1.0, 1.5, 2.0]), st.text(max_size=3), st.none(),
                     st.binary(max_size=3))


@st.composite
def store_like(draw: st.DrawFn) -> bytes:
    """A SQLite file (rollback journal, as a foreign file would be) with exampp's tables of schema
    version 1 or 2, whole or with one thing wrong: a table missing, a table short of a column, or
    versions that are none, several or not one exampp reads; now and then a table of someone else's."""
    version = draw(st.sampled_from([1, 2]))
    tables = dict(_exampp_tables())
    if version == 1:  # no cascaded table, and no claims table until a writer adds it
        del tables["cascaded"]
        if draw(st.booleans()):
            del tables["claims"]
    damage = draw(st.sampled_from(["table", "column", "version"])) if draw(st.booleans()) else None
    missing = draw(st.sampled_from(sorted(tables))) if damage == "table" else None
    short = draw(st.sampled_from(sorted(tables))) if damage == "column" else None
    with scratch() as folder:
        db = sqlite3.connect(folder / "made.sqlite")
        for table, columns in tables.items():
            if table != missing:
                gone = draw(st.sampled_from(columns)) if table == short else None
                db.execute(f"CREATE TABLE {table} ({', '.join(c for c in columns if c != gone) or 'other'})")
        if "version" in _columns(db, "schema_version"):
            rows = draw(st.lists(versions, max_size=2)) if damage == "version" else [version]
            db.executemany("INSERT INTO schema_version (version) VALUES (?)", [(v,) for v in rows])
        if draw(st.sampled_from(range(6))) == 0:
            db.execute("CREATE TABLE notes (text TEXT)")
        db.commit()
        db.close()
        return (folder / "made.sqlite").read_bytes()


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [column for (column,) in db.execute("SELECT name FROM pragma_table_info(?)", (table,))]


store_files = st.one_of(
    store_like(),
    st.binary(max_size=200),
    st.binary(min_size=1, max_size=600).map(lambda data: HEADER + data),  # a SQLite header, then rubbish
    store_like().flatmap(lambda data: st.integers(1, len(data) - 1).map(lambda cut: data[:cut])),  # cut short
)


@pytest.mark.slow
@tries(40, data=store_files)
@example(data=b"")
@example(data=b"not a database, just text\n" * 100)
def test_a_store_file_opens_or_is_refused_in_one_line_before_anything_is_written(data):
    for read_only in (True, False):
        with scratch() as folder:
            path = put(folder / "grades.sqlite", data)
            try:
                with GradeStore(path, read_only=read_only) as store:
                    assert store.methods() == [] and store.grades().empty
                    assert store.counts() == {"passages": 0, "questions": 0, "grades": 0, "methods": 0}
            except InputError as exc:
                assert_located(exc, path)
                assert path.read_bytes() == data, "a refused file was written"
                assert [p.name for p in folder.iterdir()] == ["grades.sqlite"], "a refused file gained companions"
                continue
            if read_only:
                assert path.read_bytes() == data, "a read-only open wrote into the store"
