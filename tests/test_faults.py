"""Faults injected into real exampp processes: kill -9 at the moment an output is written, two
`exampp grade` processes on one store, and a full disk. Whatever happens, no half-written file
stands under a final name, the store stays a valid store, and running the same command again
ends exactly as an uninterrupted run.

Kill points are exact: tests/fault_injection.py runs the command and kills itself at the N-th
os.fsync (an output complete in its temporary file) or os.replace (the moment before it
appears under its final name).
"""
from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import EXAMPLES
from exampp.stores.grade_store import GradeStore

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
INJECT = TESTS / "fault_injection.py"
FAKE = TESTS / "fake_grader.py"


def exampp(*args: str, fault: str = "fsync:0", env: dict[str, str] | None = None, cwd: Path = REPO,
           script: Path = INJECT) -> subprocess.CompletedProcess:
    """The exampp command with the fake grader, in its own process (killed at ``fault``)."""
    full_env = {**os.environ, "EXAMPP_FAULT": fault, **(env or {})}
    return subprocess.run([sys.executable, str(script), *args], cwd=cwd, env=full_env, capture_output=True,
                          text=True, timeout=300)


def calls(tmp_path: Path, operation: str, *args: str) -> int:
    """How many times the command calls os.<operation> when nothing goes wrong."""
    count = tmp_path / f"count-{operation}"
    done = exampp(*args, fault=f"{operation}:0", env={"EXAMPP_FAULT_COUNT": str(count)})
    assert done.returncode == 0, done.stderr
    return int(count.read_text())


def files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by relative path, the grade store and temporary files aside."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.startswith((".", "grades.sqlite"))}


def grades(store: Path):
    with GradeStore(store) as opened:
        return opened.grades()


def grade_args(ws: Path, *extra: str) -> list[str]:
    return ["grade", str(EXAMPLES / "runs"), "--config", str(EXAMPLES / "exampp.toml"), "--grader", "fake",
            "-w", str(ws), "--chunk-size", "40", "--no-progress", *extra]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """The example collection graded once without a fault (fake grader), exported in the
    reference tool's format too."""
    ws = tmp_path_factory.mktemp("reference")
    done = exampp(*grade_args(ws, "--export-reference", str(ws / "graded.jsonl.gz"), "-o", str(ws / "cover.txt")))
    assert done.returncode == 0, done.stderr
    return ws


@pytest.mark.slow
def test_kill_9_while_qrels_writes_leaves_the_old_file_or_the_new_one(reference: Path, tmp_path: Path):
    ws = tmp_path / "ws"
    shutil.copytree(reference, ws)
    target = ws / "qrels" / "exam.qrels"
    old = target.read_bytes()
    expected = exampp("qrels", "-w", str(reference), "--min-grade", "4", "-o", "-").stdout.encode()
    assert expected and expected != old
    command = ("qrels", "-w", str(ws), "--min-grade", "4")
    points = [f"{op}:{n}" for op in ("fsync", "replace") for n in range(1, calls(tmp_path, op, *command) + 1)]
    assert points == ["fsync:1", "replace:1"]
    target.write_bytes(old)  # counting wrote it
    for point in points:
        killed = exampp(*command, fault=point)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        assert target.read_bytes() == old, point  # never a half-written qrels file
        assert exampp(*command).returncode == 0
        assert target.read_bytes() == expected
        target.write_bytes(old)
    new = tmp_path / "out" / "new.qrels"
    assert exampp(*command, "-o", str(new), fault="replace:1").returncode == -signal.SIGKILL
    assert not new.exists()


@pytest.mark.slow
def test_kill_9_during_import_then_the_same_import_gives_the_same_workspace(reference: Path, tmp_path: Path):
    graded = reference / "graded.jsonl.gz"
    bank = EXAMPLES / "question_banks" / "questions.jsonl"
    command = ("import", str(graded), "--questions", str(bank), "-w")
    whole = tmp_path / "whole"
    assert exampp(*command, str(whole)).returncode == 0
    expected_files, expected_grades = files(whole), grades(whole / "grades.sqlite")
    assert len(expected_files) >= 8  # 6 runs, the corpus, the bank
    fsyncs = calls(tmp_path, "fsync", *command, str(tmp_path / "counted"))
    replaces = calls(tmp_path, "replace", *command, str(tmp_path / "counted2"))
    assert fsyncs == replaces == len(expected_files)
    for point in ("fsync:1", f"fsync:{fsyncs}", "replace:1", f"replace:{replaces}"):
        ws = tmp_path / point.replace(":", "-")
        killed = exampp(*command, str(ws), fault=point)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        for name, content in files(ws).items():  # what stands under a final name is complete
            assert content == expected_files[name], (point, name)
        if (ws / "grades.sqlite").exists():  # the store: nothing or everything (one transaction)
            assert len(grades(ws / "grades.sqlite")) in (0, len(expected_grades)), point
        again = exampp(*command, str(ws))
        assert again.returncode == 0, again.stderr
        assert files(ws) == expected_files, point
        assert grades(ws / "grades.sqlite").equals(expected_grades)


@pytest.mark.slow
def test_kill_9_while_grade_writes_its_outputs(reference: Path, tmp_path: Path):
    ws = tmp_path / "ws"
    shutil.copytree(reference, ws)  # every pair graded: only the outputs are written
    (ws / "qrels" / "exam.qrels").unlink()
    args = grade_args(ws, "-o", str(ws / "cover.txt"))
    (ws / "cover.txt").write_text("an earlier leaderboard\n")
    for point in ("replace:1", "replace:2"):
        killed = exampp(*args, fault=point)
        assert killed.returncode == -signal.SIGKILL
        qrels = ws / "qrels" / "exam.qrels"
        assert not qrels.exists() or qrels.read_bytes() == (reference / "qrels" / "exam.qrels").read_bytes()
        assert (ws / "cover.txt").read_text() == "an earlier leaderboard\n"
    assert exampp(*args).returncode == 0
    assert files(ws) == {**files(reference), "graded.jsonl.gz": (reference / "graded.jsonl.gz").read_bytes()}


@pytest.mark.slow
def test_two_grade_processes_on_one_store_split_the_work(reference: Path, tmp_path: Path):
    ws = tmp_path / "ws"
    logs = [tmp_path / "a.log", tmp_path / "b.log"]

    def start(i: int) -> subprocess.Popen:
        # 55 chunks at 0.2 s each: the first is still grading when the second has started
        return subprocess.Popen([sys.executable, str(FAKE), *grade_args(ws, "-o", str(tmp_path / f"cover{i}.txt"))],
                                cwd=REPO,
                                env={**os.environ, "FAKE_GRADER_SLEEP": "0.2", "FAKE_GRADER_LOG": str(logs[i])},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    first = start(0)
    deadline = time.monotonic() + 120
    while not (logs[0].exists() and logs[0].read_text()):  # the second starts once the first grades
        assert first.poll() is None and time.monotonic() < deadline, first.stderr.read()
        time.sleep(0.05)
    processes = [first, start(1)]
    outputs = [p.communicate(timeout=300) for p in processes]
    assert [p.returncode for p in processes] == [0, 0], outputs
    graded = [log.read_text().splitlines() if log.exists() else [] for log in logs]
    assert all(graded), "both processes graded a share"
    assert not set(graded[0]) & set(graded[1]), "a pair was graded twice"
    assert len(graded[0]) + len(graded[1]) == len(set(graded[0]) | set(graded[1]))
    assert grades(ws / "grades.sqlite").equals(grades(reference / "grades.sqlite"))
    with sqlite3.connect(ws / "grades.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT COUNT(*) FROM claims").fetchone() == (0,)  # every claim released
    for i in (0, 1):
        assert (tmp_path / f"cover{i}.txt").read_text() == (reference / "cover.txt").read_text()
    assert "graded by another process meanwhile" in outputs[0][1] + outputs[1][1]


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 2 MiB tmpfs (the test skips where mounting is not allowed)."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(folder: Path, leave: int) -> None:
    """Fill the file system of ``folder`` until ``leave`` bytes are free."""
    free = shutil.disk_usage(folder).free
    with open(folder / "ballast", "wb") as fh:
        fh.write(b"\0" * max(free - leave, 0))


@pytest.mark.slow
def test_full_disk_is_a_clear_error_and_the_store_resumes_elsewhere(reference: Path, small_disk: Path,
                                                                     tmp_path: Path):
    ws = small_disk / "ws"
    _fill(small_disk, 700 * 1024)  # room for some chunks of grades, not for all
    full = exampp(*grade_args(ws))
    assert full.returncode == 1
    errors = [line for line in full.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [f"Error: {ws / 'grades.sqlite'}: cannot write the grade store: database or disk is full"], \
        full.stderr
    assert "Traceback" not in full.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name in ("grades.sqlite", "grades.sqlite-wal"):
        if (ws / name).exists():
            shutil.copy2(ws / name, elsewhere / name)
    with sqlite3.connect(elsewhere / "grades.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    committed = len(grades(elsewhere / "grades.sqlite").drop_duplicates(["passage_id", "question_id", "query_id"]))
    assert 0 < committed < len(grades(reference / "grades.sqlite"))
    resumed = exampp(*grade_args(elsewhere))
    assert resumed.returncode == 0, resumed.stderr
    assert grades(elsewhere / "grades.sqlite").equals(grades(reference / "grades.sqlite"))


@pytest.mark.slow
def test_full_disk_output_is_a_clear_error_and_leaves_no_file(reference: Path, small_disk: Path):
    _fill(small_disk, 0)
    target = small_disk / "exam.qrels"
    done = exampp("qrels", "-w", str(reference), "-o", str(target))
    assert done.returncode == 1
    assert done.stderr == f"Error: {target}: cannot write: No space left on device\n"
    assert sorted(p.name for p in small_disk.iterdir()) == ["ballast"]  # no file, no temporary file


@pytest.mark.slow
def test_a_store_that_cannot_be_created_is_a_clear_error_and_leaves_no_file(small_disk: Path):
    _fill(small_disk, 0)
    ws = small_disk / "ws"
    done = exampp(*grade_args(ws))
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == \
        f"Error: {ws / 'grades.sqlite'}: cannot open the grade store: database or disk is full"
    assert list(ws.iterdir()) == []  # no empty file that would look like a store
