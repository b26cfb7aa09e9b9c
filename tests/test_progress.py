"""Progress where stderr is not a terminal (nohup, CI, a pipe): a line every ~10 s with done/total,
the rate and an ETA, instead of nothing; none with --no-progress."""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import fake_grader
from conftest import EXAMPLES
from exampp import progress
from exampp.cli import main
from exampp.progress import ProgressLines, Tally, duration, progress_bar

LINE = re.compile(r"^grading: [\d,]+/[\d,]+ pairs \(\d+%\), [\d.e+]+ pairs/s, ETA (\d+[smh]|unknown)", re.MULTILINE)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_line_only_once_ten_seconds_have_passed_with_the_rate_and_the_eta(monkeypatch):
    monkeypatch.setattr(progress, "LOG_EVERY", 10.0)
    clock, stream = Clock(), io.StringIO()
    lines = ProgressLines(2180, unit="pair", desc="grading", stream=stream, clock=clock)
    clock.now += 9
    lines.update(300)
    assert stream.getvalue() == ""  # not yet 10 s
    clock.now += 1  # 10 s in, 1,028 done: 102.8 pairs/s, 1,152 left
    lines.update(728)
    assert stream.getvalue() == "grading: 1,028/2,180 pairs (47%), 103 pairs/s, ETA 11s\n"
    clock.now += 5
    lines.update(10)
    assert stream.getvalue().count("\n") == 1  # 5 s after the last line


def test_retries_are_said_at_once_then_grouped_by_reason_at_most_every_ten_seconds(monkeypatch):
    monkeypatch.setattr(progress, "LOG_EVERY", 10.0)
    now = [100.0]
    said: list[str] = []
    tally = Tally("http://127.0.0.1:9/v1", clock=lambda: now[0], say=said.append)
    tally.add("timed out")
    assert said == ["http://127.0.0.1:9/v1: retrying 1 request (timed out)"]
    for reason in ("timed out", "HTTP 500", "timed out"):
        now[0] += 3.0
        tally.add(reason)
    assert len(said) == 1  # 9 s since the first line: counted, not said
    now[0] += 1.0
    tally.add("HTTP 500")
    assert said[1] == "http://127.0.0.1:9/v1: retrying 4 requests in the last 10s (timed out 2, HTTP 500 2)"
    now[0] += 125.0
    tally.add("connection dropped")
    assert said[2:] == ["http://127.0.0.1:9/v1: retrying 1 request in the last 2m05s (connection dropped)"]


def test_durations_read_as_waits():
    assert [duration(s) for s in (4.6, 185, 7620)] == ["5s", "3m05s", "2h07m"]


def test_off_a_terminal_the_bar_is_lines_and_off_means_nothing(monkeypatch):
    monkeypatch.setattr("sys.stderr", io.StringIO())  # not a terminal
    assert isinstance(progress_bar(10, True, unit="pair", desc="grading"), ProgressLines)
    assert progress_bar(10, False, unit="pair", desc="grading") is None
    assert progress_bar(0, True, unit="pair", desc="grading") is None


@pytest.fixture
def fake(monkeypatch):
    fake_grader.use_method(monkeypatch)


def grade(ws: Path, *flags: str):
    return CliRunner().invoke(main, ["grade", str(EXAMPLES / "runs"), "--config", str(EXAMPLES / "exampp.toml"),
                                     "--grader", "fake", "-w", str(ws), "--chunk-size", "50", *flags])


def test_grade_under_a_log_prints_progress_lines_and_none_with_no_progress(tmp_path, fake, monkeypatch):
    monkeypatch.setattr(progress, "LOG_EVERY", 0.0)  # every chunk's line, not one per 10 s
    logged = grade(tmp_path / "logged")
    assert logged.exit_code == 0, logged.output
    assert len(LINE.findall(logged.stderr)) >= 3, logged.stderr
    assert logged.stdout and not LINE.search(logged.stdout)  # the leaderboard stays clean
    quiet = grade(tmp_path / "quiet", "--no-progress")
    assert quiet.exit_code == 0 and not LINE.search(quiet.stderr)
    assert quiet.stdout == logged.stdout
