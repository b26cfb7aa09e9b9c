"""Ctrl-C in a job that keeps its work says what was kept and how to go on, not just "Aborted!"."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

import fake_grader
from conftest import EXAMPLES
from exampp.cli import main

KEPT = re.compile(r"interrupted: ([\d,]+) of ([\d,]+) pairs graded and kept in (\S+); run the same command to resume")
REUSED = re.compile(r"(\d+) reused from the store")


@dataclass(frozen=True)
class StoppedMethod(fake_grader.FakeMethod):
    """The fake grader, stopped by a Ctrl-C as it grades its fourth chunk."""

    def grade(self, backend, pairs):
        calls.append(len(pairs))
        if len(calls) == 4:
            raise KeyboardInterrupt
        return super().grade(backend, pairs)


calls: list[int] = []


def grade(ws: Path):
    return CliRunner().invoke(main, ["grade", str(EXAMPLES / "runs"), "--config", str(EXAMPLES / "exampp.toml"),
                                     "--grader", "fake", "-w", str(ws), "--chunk-size", "20", "--no-progress"])


def test_ctrl_c_in_grade_says_how_many_pairs_are_kept_where_and_that_the_same_command_resumes(tmp_path, monkeypatch):
    fake_grader.use_method(monkeypatch, StoppedMethod)
    calls.clear()
    stopped = grade(tmp_path)
    assert stopped.exit_code == 130, stopped.output
    assert "Aborted!" not in stopped.output
    kept, total, store = KEPT.search(stopped.stderr).groups()
    assert store == str(tmp_path / "grades.sqlite")
    fake_grader.use_method(monkeypatch)
    resumed = grade(tmp_path)
    assert resumed.exit_code == 0, resumed.output
    # what the message said was kept is what the same command then finds in the store
    assert int(kept.replace(",", "")) == int(REUSED.search(resumed.stderr).group(1)) >= 60
    assert resumed.stderr.startswith(f"{total.replace(',', '')} pairs:")
