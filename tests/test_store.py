"""The grade store: round trip, content addressing, atomic batches, kill -9, concurrent access; a file
that is not a store refused before anything is written, a read-only open that writes nothing."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from exampp.cli import main
from exampp.collection.grades import Grade, Method, text_hash
from exampp.errors import InputError, OutputError
from exampp.stores.grade_store import GRADE_COLUMNS, GradeStore, HashedGrade
from test_import import LINES, write_gz_lines

RATING = Method("self-rating", "google/flan-t5-large", "QuestionSelfRatedUnanswerablePromptWithChoices").method_id
QA = Method("qa", "google/flan-t5-large", "QuestionCompleteConcisePromptWithAnswerKey2").method_id

PASSAGES = {"p1": "Alpha text", "p2": "Beta text"}
QUESTIONS = [("q1", "q1/a", "What is alpha?"), ("q1", "q1/b", "What is beta?")]


def hashed(grade: Grade, passage_text: str, question_text: str) -> HashedGrade:
    return HashedGrade(grade, text_hash(passage_text), text_hash(question_text))


def fill(store: GradeStore) -> list[Grade]:
    store.register_passages("q1", PASSAGES)
    store.register_questions(QUESTIONS)
    grades = [
        Grade("q1", "p1", "q1/a", 5.0, RATING, "5", (0.0, 0.0, 0.0, 0.1, 0.2, 0.7)),
        Grade("q1", "p1", "q1/b", 0.0, RATING, "0", None),
        Grade("q1", "p2", "q1/a", 1.0, QA, "alpha", None),
    ]
    texts = {"q1/a": "What is alpha?", "q1/b": "What is beta?"}
    assert store.put_many(hashed(g, PASSAGES[g.passage_id], texts[g.question_id]) for g in grades) == 3
    return grades


def test_method_id_renders_and_parses():
    method = Method("direct:thomas", "google/flan-t5-large", "Thomas")
    assert method.method_id == "direct:thomas|google/flan-t5-large|Thomas"
    assert Method.parse(method.method_id) == method
    with pytest.raises(ValueError):
        Method("qa", "a|b", "p")


def test_text_hash_is_sha256_of_utf8():
    assert text_hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert text_hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert text_hash("é") != text_hash("e\u0301")  # no Unicode normalisation: texts are addressed as given


def test_round_trip(tmp_path: Path):
    with GradeStore(tmp_path / "grades.sqlite") as store:
        grades = fill(store)
    with GradeStore(tmp_path / "grades.sqlite") as store:
        assert list(store.records()) == grades  # ordered by query, passage, question, method
        assert store.methods() == sorted([QA, RATING])
        assert store.counts() == {"passages": 2, "questions": 2, "grades": 3, "methods": 2}
        frame = store.grades(RATING)
        expected = pd.DataFrame(
            [["q1", "p1", "q1/a", RATING, 5.0, "5"], ["q1", "p1", "q1/b", RATING, 0.0, "0"]], columns=GRADE_COLUMNS
        )
        pd.testing.assert_frame_equal(frame, expected)
        assert store.grades(query_ids=["other"]).empty
        assert list(store.grades(query_ids=["q1"]).columns) == GRADE_COLUMNS


def test_same_texts_under_other_ids_reuse_grades(tmp_path: Path):
    with GradeStore(tmp_path / "grades.sqlite") as store:
        fill(store)
        # Another query holding the same passage text (under another id) and the same question text.
        store.register_passages("q9", {"x": "Alpha text"})
        store.register_questions([("q9", "q9/z", "What is alpha?")])
        reused = store.grades(RATING, query_ids=["q9"])
        assert reused.values.tolist() == [["q9", "x", "q9/z", RATING, 5.0, "5"]]
        assert store.counts()["grades"] == 3  # nothing new was graded
        assert store.missing(RATING, [(text_hash("Alpha text"), text_hash("What is alpha?"))]) == []


def test_edited_text_detaches_old_grades(tmp_path: Path):
    with GradeStore(tmp_path / "grades.sqlite") as store:
        fill(store)
        store.register_passages("q1", {"p1": "Alpha text, revised"})
        assert store.grades(RATING).values.tolist() == []
        assert store.grades(QA)["passage_id"].tolist() == ["p2"]
        new, old = ((text_hash("Alpha text, revised"), text_hash("What is alpha?")),
                    (text_hash("Alpha text"), text_hash("What is alpha?")))
        assert store.missing(RATING, [new, old, new]) == [new]
        store.register_passages("q1", {"p1": "Alpha text"})  # edit undone: the old grades apply again
        assert len(store.grades(RATING)) == 2


def test_put_many_replaces_same_key_and_is_all_or_nothing(tmp_path: Path):
    with GradeStore(tmp_path / "grades.sqlite") as store:
        fill(store)
        regraded = Grade("q1", "p1", "q1/a", 4.0, RATING, "4")
        assert store.put_many([hashed(regraded, "Alpha text", "What is alpha?")]) == 1
        assert store.grades(RATING)["grade"].tolist() == [4.0, 0.0]

        def failing():
            yield hashed(Grade("q1", "p2", "q1/b", 3.0, RATING), "Beta text", "What is beta?")
            raise RuntimeError("grader crashed")

        with pytest.raises(RuntimeError):
            store.put_many(failing())
        assert store.counts()["grades"] == 3  # the batch's first grade was rolled back


def test_not_a_store_is_input_error(tmp_path: Path, write):
    path = write("grades.sqlite", "not a database, just text\n" * 100)
    with pytest.raises(InputError, match="not an exampp grade store"):
        GradeStore(path)


def test_newer_schema_version_is_input_error(tmp_path: Path):
    path = tmp_path / "grades.sqlite"
    GradeStore(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE schema_version SET version = 99")
    db.commit()
    db.close()
    with pytest.raises(InputError, match="schema version 99"):
        GradeStore(path)


def test_reader_opens_and_reads_while_a_writer_holds_the_lock(tmp_path: Path):
    path = tmp_path / "grades.sqlite"
    with GradeStore(path) as store:
        fill(store)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("DELETE FROM grades")  # uncommitted: readers still see the last commit
    try:
        with GradeStore(path, busy_timeout=0.1) as reader:
            assert reader.counts()["grades"] == 3
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                reader.register_passages("q2", {"p": "text"})  # a second writer gives up after its timeout
    finally:
        writer.execute("ROLLBACK")
        writer.close()


# A writer process: registers BATCHES passages, then stores one batch of SIZE grades per
# passage, printing the batch number after each commit.
WRITER = """
import sys
from exampp.collection.grades import Grade, text_hash
from exampp.stores.grade_store import GradeStore, HashedGrade
path, method, batches, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
with GradeStore(path) as store:
    store.register_passages("q", {f"p{b}": f"passage {b}" for b in range(batches)})
    store.register_questions(("q", f"x{i}", f"question {i}") for i in range(size))
    for b in range(batches):
        store.put_many(
            HashedGrade(Grade("q", f"p{b}", f"x{i}", float(b % 6), method), text_hash(f"passage {b}"),
                        text_hash(f"question {i}"))
            for i in range(size)
        )
        print(b, flush=True)
"""


def start_writer(path: Path, method: str, batches: int, size: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), method, str(batches), str(size)],
        stdout=subprocess.PIPE, text=True,
    )


def batch_sizes(store: GradeStore, method: str) -> pd.Series:
    return store.grades(method).groupby("passage_id").size()


@pytest.mark.slow
def test_kill_9_mid_write_loses_only_the_open_batch(tmp_path: Path):
    path, size = tmp_path / "grades.sqlite", 5000
    writer = start_writer(path, "m", 10_000, size)
    committed = [int(writer.stdout.readline()) for _ in range(3)]
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    assert writer.returncode == -signal.SIGKILL
    with GradeStore(path) as store:
        with sqlite3.connect(path) as db:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        sizes = batch_sizes(store, "m")
        n = len(sizes)
        assert n >= len(committed) == 3  # every batch reported committed is there ...
        assert sorted(sizes.index) == sorted(f"p{b}" for b in range(n))  # ... in order ...
        assert set(sizes) == {size}  # ... and each batch whole
        assert store.counts()["grades"] == n * size


@pytest.mark.slow
def test_concurrent_reader_sees_whole_batches_while_two_writers_write(tmp_path: Path):
    path, batches, size = tmp_path / "grades.sqlite", 10, 2000
    GradeStore(path).close()
    writers = [start_writer(path, method, batches, size) for method in ("m1", "m2")]
    seen = []
    with GradeStore(path) as reader:
        while any(w.poll() is None for w in writers):
            seen.append(reader.counts()["grades"])
            time.sleep(0.005)
        for w in writers:
            w.communicate()
            assert w.returncode == 0  # the second writer waited for the lock instead of failing
        seen.append(reader.counts()["grades"])
        assert all(count % size == 0 for count in seen)
        assert seen == sorted(seen)
        assert seen[-1] == 2 * batches * size
        assert set(batch_sizes(reader, "m1")) == set(batch_sizes(reader, "m2")) == {size}


def _open_and_count(path: str) -> str:
    try:
        with GradeStore(path) as store:
            return str(store.counts()["grades"])
    except Exception as exc:  # reported, so that the test shows what went wrong
        return repr(exc)


@pytest.mark.slow
def test_processes_creating_one_new_store_at_once_all_open_it(tmp_path):
    # Switching a new database to WAL reports "database is locked" at once, without the busy
    # wait, while another process does the same; two `exampp grade` runs started together hit it.
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(4) as pool:
        for attempt in range(15):
            path = str(tmp_path / f"store{attempt}.sqlite")
            assert pool.map(_open_and_count, [path] * 4) == ["0"] * 4


def _sqlite_file(path: Path, *statements: str) -> None:
    """A SQLite file made by ``statements``, in the default rollback-journal mode."""
    db = sqlite3.connect(path)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()


def _foreign(path: Path) -> None:
    """Someone else's SQLite file."""
    _sqlite_file(path, "CREATE TABLE notes (text TEXT)", "INSERT INTO notes VALUES ('mine')")


def _schema_version_only(path: Path) -> None:
    _sqlite_file(path, "CREATE TABLE schema_version (version INTEGER NOT NULL)",
                 "INSERT INTO schema_version VALUES (2)")


def _store_without_probabilities(path: Path) -> None:
    GradeStore(path).close()
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE grades DROP COLUMN probabilities")
    db.execute("PRAGMA journal_mode=DELETE")
    db.close()


@pytest.mark.parametrize("make, message", [
    (_foreign, "not an exampp grade store (no schema_version table)"),
    (_schema_version_only,
     "not an exampp grade store (it lacks the tables methods, passages, questions, grades, cascaded)"),
    (_store_without_probabilities, "not an exampp grade store (its table grades lacks probabilities)"),
    (lambda path: path.write_text("not a database, just text\n"), "not an exampp grade store (file is not a database)"),
])
def test_a_file_that_is_not_a_store_is_refused_in_one_line_and_left_as_it_was(tmp_path: Path, make, message):
    graded = write_gz_lines(tmp_path / "graded.jsonl.gz", LINES)
    ws = tmp_path / "ws"
    ws.mkdir()
    path = ws / "grades.sqlite"
    make(path)
    data = path.read_bytes()
    for command in (["cover"], ["import", str(graded)]):  # a command that reads the store, one that writes it
        result = CliRunner().invoke(main, [*command, "-w", str(ws)])
        assert (result.exit_code, result.output) == (1, f"Error: {path}: {message}\n")
        assert path.read_bytes() == data
        assert [p.name for p in ws.iterdir()] == ["grades.sqlite"]


def test_a_read_only_open_writes_nothing(tmp_path: Path):
    path = tmp_path / "grades.sqlite"
    path.touch()
    with pytest.raises(InputError, match="an empty file, not an exampp grade store"):
        GradeStore(path, read_only=True)
    assert path.read_bytes() == b""
    # A version-1 store as older exampp left it: no claims table (a writer adds one), rollback journal.
    with GradeStore(path) as store:
        grades = fill(store)
    db = sqlite3.connect(path)
    db.execute("DROP TABLE claims")
    db.execute("DROP TABLE cascaded")
    db.execute("UPDATE schema_version SET version = 1")
    db.commit()
    db.execute("PRAGMA journal_mode=DELETE")
    db.close()
    data = path.read_bytes()
    with GradeStore(path, read_only=True) as store:
        assert list(store.records()) == sorted(grades, key=lambda g: (g.passage_id, g.question_id, g.method_id))
        with pytest.raises(OutputError, match="cannot write the grade store: attempt to write a readonly database"):
            store.register_passages("q2", {"p": "text"})
    assert path.read_bytes() == data
    assert [p.name for p in tmp_path.iterdir()] == ["grades.sqlite"]
