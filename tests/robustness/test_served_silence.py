"""A served judge that answers nothing at all (hangs, or drips slower than --timeout) is given up on
within about ``--timeout x (--max-retries + 1)``, in one line, however many requests wait: each
time-out halves the requests in flight, so that retried attempts wait behind the rest, and no single
request would ever exhaust its retries. A server that answers some of the time is not given up on."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("openai")

from click.testing import CliRunner

from cli_results import one_line_error
from exampp.cli import main
from exampp.grading.methods.self_rating import GRADES
from exampp.llm.backend import BackendError, open_backend
from small_collection import write_collection

from .hostile_server import MODEL, Answer, HostileServer, Request, completions_only, good, within

PROMPTS = 40


pytestmark = pytest.mark.usefixtures("quick_retries")


def _hang(request: Request) -> Answer:
    return Answer(hang=True)


def _drip(request: Request) -> Answer:
    whole = good(request)
    return Answer(whole.status, whole.body, whole.headers, drip=0.2)


def _silence(server: HostileServer) -> str:
    return (f"{server.url} answered nothing for model {MODEL} for 1 s (--timeout 0.5 x (--max-retries 1 + 1)): "
            "every attempt since its last answer timed out; is the server up and able to answer?")


@pytest.mark.slow
@pytest.mark.parametrize("answer", [_hang, _drip], ids=["hang", "drip"])
def test_a_server_answering_nothing_is_given_up_on_after_timeout_times_attempts(answer):
    with HostileServer(completions_only(answer), lifetime=30) as server:
        backend = open_backend("openai", MODEL, base_url=server.url, timeout=0.5, max_retries=1, concurrency=4)
        try:
            outcome, took = within(12, lambda: backend.next_token_labels(["Rate the passage."] * PROMPTS, GRADES))
        finally:
            backend.close()
        assert isinstance(outcome.get("error"), BackendError), outcome
        assert str(outcome["error"]) == _silence(server)
        assert took < 6  # 1 s of silence, a time-out in flight, and a loaded machine's slowness
        assert len(server.completions()) < PROMPTS


def test_a_server_answering_some_of_the_time_is_not_given_up_on():
    def first_wave_hangs(request: Request) -> Answer:
        return Answer(hang=True) if len(server.completions()) <= 4 else good(request)

    with HostileServer(completions_only(first_wave_hangs), lifetime=30) as server, \
            open_backend("openai", MODEL, base_url=server.url, timeout=0.5, max_retries=3, concurrency=4) as backend:
        outcome, _ = within(15, lambda: backend.next_token_labels(["Rate the passage."] * 12, GRADES))
    assert "error" not in outcome, outcome
    assert [seen.top_label for seen in outcome["result"]] == [4] * 12


@pytest.mark.slow
def test_grade_against_a_hung_server_ends_in_one_line(tmp_path: Path):
    runs = {"a": {"Q1": [f"d{i}" for i in range(10)]}}
    passages = {f"d{i}": f"Passage {i} about reefs." for i in range(10)}
    questions = ({"query_id": "Q1", "question_id": f"Q1/{i}", "text": f"Question {i}?"} for i in range(6))
    workspace = write_collection(tmp_path, runs, passages, questions)
    with HostileServer(completions_only(_hang), lifetime=40) as server:
        argv = ["grade", str(workspace / "runs"), "--corpus", str(workspace / "passages.jsonl"), "--bank",
                str(workspace / "questions.jsonl"), "-w", str(workspace / "ws"), "--no-progress", "--backend",
                "openai", "--base-url", server.url, "--model", MODEL, "--timeout", "0.5", "--max-retries", "1",
                "--concurrency", "4"]
        outcome, took = within(15, lambda: CliRunner().invoke(main, argv))
    result = outcome["result"]
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert one_line_error(result) == f"Error: {_silence(server)}"
    assert result.output.startswith(f"{server.url.rstrip('/')}: retrying 1 request (timed out)\n"), result.output
    assert took < 10  # the job's own start included
