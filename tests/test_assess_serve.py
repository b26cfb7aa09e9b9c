"""`exampp assess serve` as a real server: the command started as a subprocess on a free loopback
port, spoken to over HTTP. Assessors get different pairs, overlap doubles pairs for two assessors,
bad requests get a 4xx with a message, no answer shows the design (the judge's stratum, the
inclusion probability), texts are never HTML in the page, and kill -9 loses no acknowledged label."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from assess_pages import HOSTILE, PROBABILITY, STRATUM, make_workspace
from conftest import REPO
from exampp.cli import main
from exampp.stores.assessments import AssessmentStore

START_TIMEOUT = 60.0  # a loaded machine imports pandas and starlette slowly


@contextmanager
def served(ws: Path, sample: Path, *options: str) -> Iterator[tuple[subprocess.Popen, str]]:
    """`exampp assess serve` on a free port of 127.0.0.1: the process and the URL it printed."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "exampp", "assess", "serve", "-w", str(ws), "--sample", str(sample), "--port", "0"]
    process = subprocess.Popen([*command, *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        url = _url(process)
        yield process, url
    finally:
        process.kill()
        process.wait()
        process.stdout.close()
        process.stderr.close()


def _url(process: subprocess.Popen) -> str:
    found: list[str] = []
    reader = threading.Thread(target=lambda: found.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(START_TIMEOUT)
    line = found[0] if found else ""
    assert line.startswith("Assessors judge at http://127.0.0.1:"), \
        f"no URL in {line!r}: {process.stderr.read() if process.poll() is not None else 'still starting'}"
    return line.split()[3]


def call(url: str, path: str, body: object = None, *, raw: bytes | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, dict]:
    """A request to the server: JSON ``body`` POSTed (or ``raw`` bytes), else a GET; (status, JSON answer)."""
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    sent = {"Content-Type": "application/json"} if data is not None else {}
    request = urllib.request.Request(url + path, data=data, headers={**sent, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.slow
def test_assessors_get_different_pairs_and_bad_requests_are_refused(tmp_path):
    ws, sample = make_workspace(tmp_path / "ws")
    answers: list[str] = []  # every answer's text: none may show the design
    with served(ws, sample) as (_, url):
        status, setup = call(url, "api/setup")
        assert (status, setup["kind"], setup["pairs"]) == (200, "passage", 6)
        assert [(g["value"], g["name"]) for g in setup["scale"]] == [
            (0, "irrelevant"), (1, "related"), (2, "highly relevant"), (3, "perfectly relevant")]
        status, alice = call(url, "api/next", {"assessor": "alice"})
        assert status == 200 and (alice["pair"]["query_id"], alice["pair"]["key"]) == ("Q1", "d-Q1-001")
        _, bob = call(url, "api/next", {"assessor": "bob"})
        assert bob["pair"] == {"query_id": "Q1", "key": "d-evil", "doc_id": "d-evil", "query": "coral reef bleaching",
                               "description": bob["pair"]["description"], "narrative": bob["pair"]["narrative"],
                               "text": f"Coral bleaching. {HOSTILE}", "nugget": None}
        assert call(url, "api/next", {"assessor": "alice"})[1]["pair"]["key"] == "d-Q1-001"  # a reload: the same
        status, saved = call(url, "api/label", {"assessor": "alice", "query_id": "Q1", "key": "d-Q1-001", "grade": 2,
                                                "note": "bleach, not reefs"})
        assert status == 200 and saved == {"saved": {"query_id": "Q1", "key": "d-Q1-001", "grade": 2,
                                                     "note": "bleach, not reefs"},
                                           "progress": {"done": 1, "pairs": 6, "labels": 1, "needed": 6, "mine": 1}}
        assert call(url, "api/next", {"assessor": "alice"})[1]["pair"]["key"] == "d-Q1-002"  # bob holds d-evil
        assert call(url, "api/labels?assessor=alice")[1]["labels"][0]["grade"] == 2
        answers += [json.dumps(a) for a in (setup, alice, bob, saved)]

        label = {"assessor": "alice", "query_id": "Q1", "key": "d-Q1-002", "grade": 1}
        for body, raw, headers, expected in [
            ({**label, "grade": 7}, None, None,
             (400, "grade 7 is not on the scale (0:irrelevant,1:related,2:highly relevant,3:perfectly relevant)")),
            ({**label, "grade": "1"}, None, None, (400, 'grade "1" is not on the scale')),
            ({**label, "grade": True}, None, None, (400, "grade true is not on the scale")),
            ({**label, "key": "d-nope"}, None, None, (404, "no pair 'Q1' 'd-nope' in the sample")),
            ({**label, "note": "x" * 10_001}, None, None, (400, "note must be a string of at most 10,000 characters")),
            ({**label, "note": 3}, None, None, (400, "note must be a string")),
            ({**label, "assessor": "alice smith"}, None, None,
             (400, "assessor name 'alice smith' contains whitespace")),
            ({**label, "assessor": ""}, None, None, (400, "sign in: an assessor name is needed")),
            (None, b"{not json", None, (400, "the body is not valid JSON")),
            (None, b"[1, 2]", None, (400, "the body must be a JSON object")),
            (None, json.dumps(label).encode(), {"Content-Type": "text/plain"},
             (415, "send a JSON object with Content-Type: application/json")),
            (None, b" " * 70_000, None, (413, "a request body is at most 65,536 bytes")),
            (label, None, {"Host": "evil.example:80"},
             (403, "unknown Host: this server answers requests to its own address only")),
            (label, None, {"Origin": "http://evil.example"}, (403, "a request from another site's page")),
        ]:
            status, answer = call(url, "api/label", body, raw=raw, headers=headers)
            assert (status, answer["error"][:len(expected[1])]) == expected
        assert call(url, "api/label", label, headers={"Origin": url.rstrip("/")})[0] == 200  # the page's own origin
        assert call(url, "api/labels?assessor=a%20b")[0] == 400
        status, undone = call(url, "api/undo", {"assessor": "alice"})
        assert undone["undone"] == {"query_id": "Q1", "key": "d-Q1-002", "grade": 1, "note": ""}
        assert call(url, "api/next", {"assessor": "alice"})[1]["pair"]["key"] == "d-Q1-002"  # given back to her
        answers += [json.dumps(undone), json.dumps(call(url, "api/labels?assessor=alice")[1])]
    joined = "".join(answers)
    assert STRATUM not in joined and repr(PROBABILITY) not in joined and "inclusion" not in joined
    with AssessmentStore(ws / "assessments.sqlite") as store:
        assert store.labels()[["query_id", "key", "assessor", "grade", "note"]].values.tolist() == [
            ["Q1", "d-Q1-001", "alice", 2, "bleach, not reefs"]]


@pytest.mark.slow
def test_the_page_holds_no_text_and_escapes_its_title(tmp_path):
    ws, _ = make_workspace(tmp_path / "ws")
    sample = ws / "s<b>&.tsv"
    (ws / "sample.tsv").rename(sample)
    with served(ws, sample) as (_, url):
        with urllib.request.urlopen(url, timeout=30) as answer:
            page, headers = answer.read().decode(), answer.headers
        assert "<title>ws · s&lt;b&gt;&amp;.tsv · exampp assess</title>" in page and "s<b>" not in page
        assert "Coral bleaching" not in page and STRATUM not in page  # the texts come as JSON, set as text
        assert headers["Content-Security-Policy"].startswith("default-src 'none'; script-src 'self'; style-src 'self'")
        assert headers["X-Content-Type-Options"] == "nosniff"
        with urllib.request.urlopen(url + "assess.js", timeout=30) as answer:
            script = answer.read().decode()
        assert "innerHTML" not in script and "textContent" in script


@pytest.mark.slow
def test_overlap_gives_a_pair_to_two_assessors(tmp_path):
    ws, sample = make_workspace(tmp_path / "ws")
    with served(ws, sample, "--overlap", "0.5", "--grades", "0:no,1:yes") as (_, url):
        given: dict[str, list[str]] = {}
        for turn in range(20):
            who = ("alice", "bob")[turn % 2]
            pair = call(url, "api/next", {"assessor": who})[1]["pair"]
            if pair is not None:
                status, saved = call(url, "api/label", {"assessor": who, "query_id": pair["query_id"],
                                                        "key": pair["key"], "grade": 1})
                assert status == 200
                given.setdefault(pair["key"], []).append(who)
        assert saved["progress"] == {"done": 6, "pairs": 6, "labels": 9, "needed": 9, "mine": saved["progress"]["mine"]}
        assert sorted(len(who) for who in given.values()) == [1, 1, 1, 2, 2, 2]
        assert all(sorted(who) == ["alice", "bob"] for who in given.values() if len(who) == 2)
        assert call(url, "api/label", {"assessor": "alice", "query_id": "Q1", "key": "d-Q1-001", "grade": 3}) == \
            (400, {"error": "grade 3 is not on the scale (0:no,1:yes)"})


@pytest.mark.slow
def test_a_claim_not_renewed_expires(tmp_path):
    ws, sample = make_workspace(tmp_path / "ws")
    with served(ws, sample, "--claim-minutes", "0.05") as (_, url):  # 3 s
        assert call(url, "api/setup")[1]["claim_seconds"] == 3.0
        assert call(url, "api/next", {"assessor": "alice"})[1]["pair"]["key"] == "d-Q1-001"
        assert call(url, "api/next", {"assessor": "bob"})[1]["pair"]["key"] == "d-evil"
        time.sleep(1.5)
        assert call(url, "api/next", {"assessor": "alice"})[1]["pair"]["key"] == "d-Q1-001"  # renewed
        time.sleep(2)
        assert call(url, "api/next", {"assessor": "carol"})[1]["pair"]["key"] == "d-evil"  # bob's has expired


@pytest.mark.slow
def test_kill_9_loses_no_acknowledged_label(tmp_path):
    ws, sample = make_workspace(tmp_path / "ws", [("Q1", f"d-Q1-{i:03d}") for i in range(1, 41)])
    acknowledged: dict[tuple[str, str, str], int] = {}
    lock = threading.Lock()

    def judge(url: str, who: str) -> None:
        """Label pair after pair as fast as the server answers, until it is gone."""
        try:
            while True:
                pair = call(url, "api/next", {"assessor": who})[1]["pair"]
                if pair is None:
                    return
                grade = len(acknowledged) % 4
                status, _ = call(url, "api/label", {"assessor": who, "query_id": "Q1", "key": pair["key"],
                                                    "grade": grade})
                assert status == 200
                with lock:
                    acknowledged[("Q1", pair["key"], who)] = grade
        except (urllib.error.URLError, ConnectionError, OSError):
            return  # the server was killed

    with served(ws, sample) as (process, url):
        threads = [threading.Thread(target=judge, args=(url, who)) for who in ("alice", "bob", "carol")]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 120
        while len(acknowledged) < 12:
            assert time.monotonic() < deadline and process.poll() is None, "too few labels in time"
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)  # mid-stream: requests are in flight
        process.wait()
        for thread in threads:
            thread.join(30)
    assert process.returncode == -signal.SIGKILL and 12 <= len(acknowledged) < 40
    with served(ws, sample) as (_, url):  # restarted on the same store: every acknowledged label is there
        stored = {}
        for who in ("alice", "bob", "carol"):
            for label in call(url, "api/labels?assessor=" + who)[1]["labels"]:
                stored[(label["query_id"], label["key"], who)] = label["grade"]
        assert {key: stored.get(key) for key in acknowledged} == acknowledged
        # at most the requests in flight were stored unacknowledged; no pair is given out again
        assert len(stored) - len(acknowledged) <= 3
        given = call(url, "api/next", {"assessor": "dave"})[1]["pair"]["key"]
        assert ("Q1", given) not in {(q, k) for q, k, _ in stored}


@pytest.mark.slow
def test_serve_errors_are_one_line(tmp_path):
    ws, sample = make_workspace(tmp_path / "ws")
    result = CliRunner().invoke(main, ["assess", "serve", "-w", str(ws), "--sample", str(tmp_path / "nope.tsv")])
    assert (result.exit_code, result.output) == (1, f"Error: {tmp_path / 'nope.tsv'}: no such file\n")
    result = CliRunner().invoke(main, ["assess", "serve", "-w", str(ws), "--sample", str(sample), "--grades", "0:a"])
    assert (result.exit_code, result.output) == (1, "Error: --grades '0:a': a scale needs at least two grades\n")
    result = CliRunner().invoke(main, ["assess", "serve", "-w", str(ws), "--sample", str(sample), "--overlap", "2"])
    assert result.exit_code == 2 and "2.0 is not in the range 0<=x<=1" in result.output
    with served(ws, sample) as (_, url):
        port = url.rsplit(":", 1)[1].strip("/")
        result = CliRunner().invoke(main, ["assess", "serve", "-w", str(ws), "--sample", str(sample), "--port", port])
        assert result.exit_code == 1
        assert result.output == f"Error: 127.0.0.1:{port}: cannot listen there: Address already in use\n"
