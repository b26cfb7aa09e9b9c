"""kill -9 in the middle of `exampp grade`, then the same command: no committed grade is lost and
the store ends exactly as after an uninterrupted run. kill -9 in the middle of `exampp import`, then
the same command: the killed run's temporary files are gone, the workspace as after one import."""
from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import fake_grader
from conftest import EXAMPLES
from exampp.cli import main
from exampp.files.temps import writer_prefix
from exampp.importer import import_reference
from exampp.stores.grade_store import GradeStore
from killing import kill_when
from test_import import LINES, workspace_files, write_gz_lines

REPO = Path(__file__).resolve().parents[1]
SCRIPT = Path(fake_grader.__file__)
CHUNK = 20
SUMMARY = re.compile(r"(\d+) pairs: (\d+) new pairs graded")


def command(ws: Path) -> list[str]:
    return ["grade", str(EXAMPLES / "runs"), "--config", str(EXAMPLES / "exampp.toml"), "--grader", "fake",
            "-w", str(ws), "--chunk-size", str(CHUNK), "--no-progress"]


def grades_committed(store_path: Path) -> int:
    if not store_path.exists():
        return 0
    with GradeStore(store_path) as store:
        return store.counts()["grades"]


@pytest.mark.slow
def test_kill_9_mid_run_then_resume_gives_the_uninterrupted_store(tmp_path, monkeypatch):
    # the uninterrupted run, in this process
    fake_grader.use_method(monkeypatch)
    reference = tmp_path / "reference"
    result = CliRunner().invoke(main, command(reference))
    assert result.exit_code == 0, result.output
    with GradeStore(reference / "grades.sqlite") as store:
        expected = store.grades()
        total = store.counts()["grades"]
    assert total > 10 * CHUNK

    # the same command in a subprocess that sleeps per chunk, killed once a few chunks are in
    ws = tmp_path / "killed"
    env = {**os.environ, "FAKE_GRADER_SLEEP": "0.05"}
    process = subprocess.Popen([sys.executable, str(SCRIPT), *command(ws)], cwd=REPO, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    kill_when(process, lambda: grades_committed(ws / "grades.sqlite") >= 3 * CHUNK, "3 chunks of grades committed")
    committed = grades_committed(ws / "grades.sqlite")
    assert 3 * CHUNK <= committed < total and committed % CHUNK == 0  # whole chunks only

    # the same command again resumes: it grades only what the killed run had not committed
    resumed = subprocess.run([sys.executable, str(SCRIPT), *command(ws)], cwd=REPO, capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    pairs, new = map(int, SUMMARY.search(resumed.stderr).groups())
    assert new == total - committed and 0 < new < pairs
    with GradeStore(ws / "grades.sqlite") as store:
        assert store.grades().equals(expected)
    assert (ws / "qrels" / "exam.qrels").read_text() == (reference / "qrels" / "exam.qrels").read_text()
    assert resumed.stdout == result.stdout


def temporary_files(ws: Path) -> list[Path]:
    """The atomic writes' temporary files in a workspace (hidden ``.NAME.*.tmp``)."""
    return sorted(ws.rglob(".*.tmp"))


@pytest.mark.slow
def test_kill_9_mid_import_then_import_again_leaves_no_temporary_file(tmp_path):
    graded = write_gz_lines(tmp_path / "graded.jsonl.gz", LINES)
    reference = tmp_path / "reference"
    import_reference(graded, reference)
    ws = tmp_path / "ws"
    GradeStore(ws / "grades.sqlite").close()
    # Holding the store's write lock stops the import with its four files staged (two runs, the
    # qrels, the corpus), waiting to replace their targets once the grades are committed.
    holder = sqlite3.connect(ws / "grades.sqlite", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    process = subprocess.Popen([sys.executable, "-m", "exampp", "import", str(graded), "-w", str(ws)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        kill_when(process, lambda: len(temporary_files(ws)) == 4, "the import's four files staged")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert [p.name.split(".")[1] for p in temporary_files(ws)] == ["passages", "official", "runA", "runB"]
    # A live writer's temporary file (this process's) is not a leftover.
    live = ws / "runs" / f"{writer_prefix('.runA.run.')}abcd1234.tmp"
    live.write_text("being written\n")

    again = subprocess.run([sys.executable, "-m", "exampp", "import", str(graded), "-w", str(ws)],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert temporary_files(ws) == [live]
    live.unlink()
    assert workspace_files(ws) == workspace_files(reference)
    with GradeStore(ws / "grades.sqlite") as store, GradeStore(reference / "grades.sqlite") as expected:
        assert store.grades().equals(expected.grades())
