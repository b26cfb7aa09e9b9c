"""A file a command is told to read and that is not there is bad input like any other: one line
naming it, exit 1, in every command (`eval` has always said it so); not click's usage block and
exit 2, which are for a command used wrongly."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import EXAMPLES
from exampp.cli import main

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("args, missing, what", [
    (["eval", "qrels/official.qrels", "MISSING"], "MISSING", "file"),
    (["leaderboard", "MISSING", "--qrels", "qrels/official.qrels"], "MISSING", "file or folder"),
    (["grade", "MISSING", "--grader", "embedding"], "MISSING", "file or folder"),
    (["cover", "MISSING"], "MISSING", "file or folder"),
    (["qrels", "--bank", "MISSING", "-o", "-"], "MISSING", "file"),
    (["import", "MISSING", "-w", "WS"], "MISSING", "file"),
    (["irt", "MISSING"], "MISSING", "file or folder"),
    (["correlate", "--a", "leaderboard.tsv", "--b", "leaderboard.tsv", "--runs", "MISSING"], "MISSING",
     "file or folder"),
])
def test_a_missing_input_is_one_line_and_exit_1(tmp_path, monkeypatch, args, missing, what):
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "official.qrels").write_text((EXAMPLES / "qrels" / "official.qrels").read_text())
    (tmp_path / "leaderboard.tsv").write_text("run\tscore\na\t1\nb\t2\n")
    monkeypatch.chdir(tmp_path)
    missing_path = str(tmp_path / "no" / missing)
    args = [missing_path if a == missing else str(tmp_path / a) if a == "WS" else a for a in args]
    result = CliRunner().invoke(main, args)
    assert (result.exit_code, result.output) == (1, f"Error: {missing_path}: no such {what}\n")
    assert not (tmp_path / "grades.sqlite").exists() and not (tmp_path / "WS").exists()
