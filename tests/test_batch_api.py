"""``exampp grade --backend openai --batch-api`` against a loopback stub of the OpenAI Batch API
(exampp/testing/batch_server.py) on the example collection of this repository: the grades (probabilities
included) and the judge's usage are the direct path's; a job killed between submitting and downloading
resumes its batch without submitting another; failed, malformed and expired lines are asked directly;
the cost estimate; the store's batch tables and an old store without them. A hostile or broken Batch API: a
batch open long past its expiry, a request answered twice differently, a completed batch without output,
a batch object over the bound, an output file read streamed."""
from __future__ import annotations

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

pytest.importorskip("openai")

from click.testing import CliRunner

from conftest import EXAMPLES
from exampp.cli import main
from exampp.grading.method_prompts import SELF_RATING
from exampp.llm.backend import open_backend
from exampp.llm.openai.batch import Book, Deferred, request_key
from exampp.stores.grade_store import GradeStore
from exampp.testing.batch_server import BatchServer
from robustness.hostile_server import within

pytestmark = pytest.mark.slow  # its workspace and servers take minutes to set up on 2 cores

REPO = Path(__file__).resolve().parents[1]
NAME = "judge"
PAIRS = 1120  # the example collection's pool at depth 5 (112 passages) x its questions (10 a query)
INPUTS = ["--bank", str(EXAMPLES / "question_banks/questions.jsonl"),
          "--corpus", str(EXAMPLES / "corpus/passages.jsonl"),
          "--topics", str(EXAMPLES / "topics/topics.jsonl"), "--depth", "5"]
QA_BANK = ["--bank", str(EXAMPLES / "question_banks/answer_key.jsonl")]  # questions with answers, for qa
FAST = ["--batch-api", "--batch-poll", "0.02"]
PASSAGE_FIRST = "self-rating(prompt=passage-first)"


@pytest.fixture(scope="module")
def server():
    with BatchServer(NAME) as running:
        yield running


@pytest.fixture
def stub(server):
    server.reset()
    yield server
    server.reset()


def argv(server: BatchServer, folder: Path, *args: str) -> list[str]:
    return ["grade", str(EXAMPLES / "runs"), *INPUTS, "-w", str(folder), "--no-progress", "--backend", "openai",
            "--base-url", server.url, "--model", NAME, *args]


def grade(server: BatchServer, folder: Path, *args: str):
    return CliRunner().invoke(main, argv(server, folder, *args))


def contents(folder: Path) -> list[tuple]:
    """Every grade of the store: ids, method, grade, answer, probabilities."""
    with GradeStore(folder / "grades.sqlite", read_only=True) as store:
        frame = store.grades(probabilities=True)
    return [tuple(row) for row in frame.itertuples(index=False)]


def judge_line(output: str) -> str:
    return next(line for line in output.splitlines() if line.startswith("judge: "))


@pytest.fixture(scope="module")
def direct(server, tmp_path_factory):
    """The direct path's grades, judge usage and request keys, per method (graded once)."""
    found = {}
    for method, bank in (("self-rating", []), ("qa(verify=llm)", QA_BANK), (PASSAGE_FIRST, [])):
        folder = tmp_path_factory.mktemp("direct")
        server.reset()
        result = grade(server, folder, "--grader", method, *bank)
        assert result.exit_code == 0, result.output
        found[method] = (contents(folder), judge_line(result.output),
                         {request_key("/v1/chat/completions", body) for body in server.direct})
    server.reset()
    return found


# qa asks its answer, then verifies it against one gold answer a round (3 at most); the passage-first prompts
# share their passage, which the direct path's prompts wait on (leader first), never a batch's.
@pytest.mark.parametrize("method, bank, rounds", [("self-rating", [], 1), ("qa(verify=llm)", QA_BANK, 4),
                                                  (PASSAGE_FIRST, [], 1)])
def test_the_batch_api_stores_the_direct_paths_grades(stub, direct, tmp_path, method, bank, rounds):
    result = grade(stub, tmp_path, "--grader", method, *bank, *FAST)
    assert result.exit_code == 0, result.output
    grades, usage, requests = direct[method]
    assert contents(tmp_path) == grades
    assert judge_line(result.output) == usage  # requests and tokens counted as the direct path counts them
    assert not stub.direct
    # Every request of a round goes in one batch.
    assert len(stub.batches) == rounds
    # The requests of the direct path, each once (qa verifies the same answer of several pairs alike).
    keys = [line["custom_id"] for batch in stub.batches for line in stub.lines(batch)]
    assert sorted(keys) == sorted(requests)
    assert len(grades) == (PAIRS // 2 if method.startswith("qa") else PAIRS)  # half the questions have answers
    with GradeStore(tmp_path / "grades.sqlite") as store:  # the answers go once their grades are committed
        assert store._db.execute("SELECT COUNT(*) FROM batch_answers").fetchone() == (0,)
        assert store._db.execute("SELECT id, state, requests FROM batches ORDER BY id").fetchall() == [
            (batch, "completed", len(stub.lines(batch))) for batch in sorted(stub.batches)]


def test_a_batch_line_is_the_direct_request(stub, tmp_path):
    result = grade(stub, tmp_path, "--grader", "self-rating", *FAST, "--chunk-size", "7")
    assert result.exit_code == 0, result.output
    line = stub.lines("batch_0")[0]
    assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
    assert {k: line["body"][k] for k in ("model", "temperature", "max_tokens", "logprobs", "top_logprobs")} == \
        {"model": NAME, "temperature": 0.0, "max_tokens": 32, "logprobs": True, "top_logprobs": 20}
    assert line["custom_id"] == request_key("/v1/chat/completions", line["body"])
    assert stub.batches["batch_0"]["metadata"] == {"exampp_model": NAME,
                                                   "exampp_method": "self-rating|judge+chat|self-rating@v1"}


def test_every_prompt_of_a_call_is_recorded_before_the_call_ends(stub):
    prompts = [SELF_RATING.render(context=f"Passage {i} about corals.", question="Why do corals bleach?")
               for i in range(50)]
    with open_backend("openai", NAME, base_url=stub.url) as backend:
        backend.book = Book()
        with pytest.raises(Deferred):
            backend.generate(prompts)
        assert len(backend.book.recorded) == 50
        assert [body["messages"][0]["content"] for _, body in backend.book.recorded.values()] == prompts
    assert not stub.direct


def test_a_job_killed_between_submit_and_download_resumes_its_batch(stub, direct, tmp_path):
    stub.hold.set()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen([sys.executable, "-m", "exampp", *argv(stub, tmp_path, "--grader", "self-rating",
                                                                       *FAST)],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        # killed once the batch is kept in the store and the job has looked at it (while it is held)
        while not (_kept_batches(tmp_path) and stub.batches.get("batch_0", {}).get("status") == "in_progress") \
                and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert process.poll() is None, process.stderr.read().decode()
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait()
        process.stderr.close()
    assert list(stub.batches) == ["batch_0"] and stub.batches["batch_0"]["status"] == "in_progress"
    assert _kept_batches(tmp_path) == [("batch_0", "validating")]
    stub.hold.clear()
    result = grade(stub, tmp_path, "--grader", "self-rating", *FAST)
    assert result.exit_code == 0, result.output
    assert list(stub.batches) == ["batch_0"]  # polled again, not submitted again
    assert "submitted" not in result.output
    assert f"Batch API: batch batch_0 completed ({PAIRS} of {PAIRS} requests done, 0 failed)\n" in result.output
    assert not stub.direct
    assert contents(tmp_path) == direct["self-rating"][0]


def _kept_batches(folder: Path) -> list[tuple[str, str]]:
    try:
        with sqlite3.connect(f"file:{folder / 'grades.sqlite'}?mode=ro", uri=True) as db:
            return db.execute("SELECT id, state FROM batches").fetchall()
    except sqlite3.Error:  # not created yet
        return []


def _prompt(body: dict) -> str:
    return body["messages"][0]["content"]


def test_failed_lines_are_asked_directly(stub, direct, tmp_path):
    # A third of the requests fail: half of them with a 500 response, half without one.
    stub.fail = lambda body: ((500 if zlib.crc32(_prompt(body).encode()) % 2 else 0) if len(_prompt(body)) % 3 == 0
                              else None)
    result = grade(stub, tmp_path, "--grader", "self-rating", *FAST)
    assert result.exit_code == 0, result.output
    failed = sorted(_prompt(line["body"]) for line in stub.lines("batch_0") if len(_prompt(line["body"])) % 3 == 0)
    assert 0 < len(failed) < PAIRS
    assert sorted(_prompt(body) for body in stub.direct) == failed
    assert len(stub.batches) == 1
    assert contents(tmp_path) == direct["self-rating"][0]
    assert judge_line(result.output) == direct["self-rating"][1]


def test_malformed_output_lines_are_named_and_asked_directly(stub, direct, tmp_path):
    # Line 5 is well formed, but its answer is not (no completion): asked directly as a malformed direct answer is.
    bad = {3: b"{not json\n", 5: b'{"custom_id": "%s", "response": {"status_code": 200, "body": {"choices": []}}}\n',
           8: b'{"custom_id": "x", "response": null}\n',
           11: b'{"custom_id": "%s", "response": {"status_code": "200"}}\n'}
    seen = iter(range(10**6))

    def corrupt(line: bytes) -> bytes:
        n = next(seen) + 1
        if n not in bad:
            return line
        key = json.loads(line)["custom_id"]
        stub.corrupted.append(key)
        return bad[n] % key.encode() if b"%s" in bad[n] else bad[n]

    stub.corrupted = []
    stub.corrupt = corrupt
    result = grade(stub, tmp_path, "--grader", "self-rating", *FAST)
    assert result.exit_code == 0, result.output
    where = f"{stub.url} file file-1 of batch batch_0"
    assert [line for line in result.output.splitlines() if line.startswith(where)] == [
        f"{where}:3: not JSON: '{{not json'; its request is asked again directly",
        f"{where}:8: custom_id 'x' is not a request exampp sent; its request is asked again directly",
        f"{where}:11: response.status_code is '200', not an HTTP status; its request is asked again directly"]
    keys = {line["custom_id"]: _prompt(line["body"]) for line in stub.lines("batch_0")}
    assert sorted(_prompt(body) for body in stub.direct) == sorted(keys[key] for key in stub.corrupted)
    assert contents(tmp_path) == direct["self-rating"][0]


def test_an_expired_batchs_unanswered_requests_are_asked_directly(stub, direct, tmp_path):
    stub.expire = True
    result = grade(stub, tmp_path, "--grader", "self-rating", *FAST)
    assert result.exit_code == 0, result.output
    half = PAIRS // 2
    assert f"Batch API: batch batch_0 expired ({half} of {PAIRS} requests done, {half} failed)\n" in result.output
    lines = stub.lines("batch_0")
    assert sorted(_prompt(body) for body in stub.direct) == sorted(_prompt(line["body"]) for line in lines[half:])
    assert contents(tmp_path) == direct["self-rating"][0]


def test_a_failed_batch_stops_the_job_and_a_rerun_submits_anew(stub, direct, tmp_path):
    stub.refuse = "line 1: the model is not available for batches"
    result = grade(stub, tmp_path, "--grader", "self-rating", *FAST)
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (f"Error: {stub.url} failed batch batch_0: 'line 1: the model is not "
                                              "available for batches'; run again to submit its requests anew")
    stub.refuse = None
    result = grade(stub, tmp_path, "--grader", "self-rating", *FAST)
    assert result.exit_code == 0, result.output
    assert list(stub.batches) == ["batch_0", "batch_1"] and len(stub.lines("batch_1")) == PAIRS
    assert not stub.direct
    assert contents(tmp_path) == direct["self-rating"][0]


def test_the_config_file_sets_the_batch_api(stub, direct, tmp_path):
    (tmp_path / "exampp.toml").write_text(f'grader = "self-rating"\nbackend = "openai"\nmodel = "{NAME}"\n'
                                          f'base_url = "{stub.url}"\nbatch_api = true\nbatch_poll = 0.02\n'
                                          'batch_price = "2,8"\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["grade", str(EXAMPLES / "runs"), *INPUTS, "-w", str(tmp_path), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].endswith(" per million tokens") and " at $2 and $8 " in result.output
    assert list(stub.batches) == ["batch_0"] and not stub.direct
    assert contents(tmp_path) == direct["self-rating"][0]


def test_the_cost_estimate_before_the_upload(stub, tmp_path, monkeypatch):
    monkeypatch.setattr("exampp.llm.openai.batch.MAX_FILE_REQUESTS", 500)  # three files of 500, 500, 120
    result = grade(stub, tmp_path, "--grader", "self-rating", *FAST, "--batch-price", "1.25,5")
    assert result.exit_code == 0, result.output
    assert sorted(len(stub.lines(batch)) for batch in stub.batches) == [120, 500, 500]
    prompts = [_prompt(line["body"]) for batch in stub.batches for line in stub.lines(batch)]
    tokens = sum(math.ceil(len(prompt) / 4) for prompt in prompts)  # 4 characters a token without --tokenizer
    dollars = (tokens * 1.25 + PAIRS * 32 * 5) / 1e6
    estimate = (f"Batch API: {PAIRS} requests in 3 files, about {tokens} prompt tokens and at most {PAIRS * 32} "
                f"completion tokens: at most ${dollars:.2f} at $1.25 and $5 per million tokens")
    lines = result.output.splitlines()
    assert lines[0] == estimate  # before anything is uploaded
    assert lines[1].startswith("Batch API: submitted batch batch_0 (500 requests)")


@pytest.mark.parametrize("args, message", [
    (["--backend", "hf", "--batch-api"], "--batch-api grades through the OpenAI Batch API: it needs --backend "
                                         "openai, not hf"),
    (["--batch-api", "--engine", "ray"], "--batch-api grades in this process: it does not go with --engine ray"),
    (["--batch-api", "--max-requests", "5"], "--max-requests caps direct requests: with --batch-api the estimate "
                                             "before submitting says what a job costs (--batch-price)"),
    (["--batch-price", "1,2"], "--batch-price and --batch-poll (batch_price, batch_poll) are settings of --batch-api"),
    (["--batch-api", "--batch-price", "1"], "batch_price must be IN,OUT (dollars per million prompt and completion "
                                            "tokens, e.g. 1.25,5), found '1'"),
])
def test_batch_settings_out_of_place_are_refused_in_one_line(stub, tmp_path, args, message):
    result = CliRunner().invoke(main, [*argv(stub, tmp_path, "--grader", "self-rating"), *args])
    assert result.exit_code != 0
    assert result.output.strip().splitlines()[-1] == f"Error: {message}"
    assert not stub.batches and not stub.direct


def test_an_old_store_without_the_batch_tables_still_opens(tmp_path):
    path = tmp_path / "grades.sqlite"
    GradeStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE batch_answers")
        db.execute("DROP TABLE batches")
    with GradeStore(path, read_only=True) as store:  # a reader needs no batch table
        assert store.methods() == []
    with GradeStore(path) as store:  # a writer adds them
        store.batches.add("batch_x", "http://127.0.0.1:1/v1", NAME, "m", ["ab" * 32])
        assert store.batches.pending("http://127.0.0.1:1/v1", NAME) == ["batch_x"]
        assert store.batches.answers("http://127.0.0.1:1/v1", NAME) == {"ab" * 32: (None, None)}
        store.batches.end("batch_x", "expired", [("cd" * 32, (200, b"{}"))])  # a key it lacks is ignored
        assert store.batches.pending("http://127.0.0.1:1/v1", NAME) == []
        assert store.batches.answers("http://127.0.0.1:1/v1", NAME) == {"ab" * 32: (0, None)}


# --- a hostile or broken /files and /batches -----------------------------------------------------------


def test_a_batch_still_in_progress_long_past_its_expiry_is_given_up_on_in_one_line(stub, tmp_path):
    stub.hold.set()
    stub.expires_at = time.time() - 2 * 3600  # the window ended two hours ago, and the batch runs on
    outcome, _ = within(30, lambda: grade(stub, tmp_path, "--grader", "self-rating", *FAST))
    result = outcome["result"]
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert result.output.splitlines()[-1].startswith(
        f"Error: {stub.url} still has batch batch_0 in_progress 2 h past its expiry (Batch API): exampp stops "
        "polling it")


def _contradicted(line: bytes) -> bytes:
    """The line, then the same request answered otherwise (another grade)."""
    record = json.loads(line)
    message = record["response"]["body"]["choices"][0]["message"]
    message["content"] = "5" if message["content"] != "5" else "0"
    message.pop("logprobs", None)
    record["response"]["body"]["choices"][0]["logprobs"] = None
    return line + (json.dumps(record) + "\n").encode()


def test_a_request_answered_twice_differently_is_flagged_and_asked_directly(stub, direct, tmp_path):
    seen = iter(range(10**6))
    twice = {}

    def corrupt(line: bytes) -> bytes:
        n = next(seen) + 1
        if n in (2, 7):
            twice[json.loads(line)["custom_id"]] = n
            return _contradicted(line) if n == 2 else line + line  # line 7: the same answer again, accepted
        return line

    stub.corrupt = corrupt
    result = grade(stub, tmp_path, "--grader", "self-rating", *FAST)
    assert result.exit_code == 0, result.output
    where = f"{stub.url} file file-1 of batch batch_0"
    key = next(key for key, n in twice.items() if n == 2)
    assert [line for line in result.output.splitlines() if line.startswith(where)] == [
        (f"{where}:3: custom_id {key[:16]}... answers its request again, otherwise than line 2: neither answer is "
         "used; its request is asked again directly")]
    keys = {line["custom_id"]: _prompt(line["body"]) for line in stub.lines("batch_0")}
    assert [_prompt(body) for body in stub.direct] == [keys[key]]
    assert contents(tmp_path) == direct["self-rating"][0]


def test_a_completed_batch_without_an_output_file_says_its_requests_go_directly(stub, direct, tmp_path):
    stub.no_output = True
    result = grade(stub, tmp_path, "--grader", "self-rating", *FAST)
    assert result.exit_code == 0, result.output
    assert (f"Batch API: batch batch_0 completed with no output file: its {PAIRS} requests have no answer in it and "
            "are sent directly, at the direct price\n") in result.output
    assert len(stub.direct) == PAIRS
    assert contents(tmp_path) == direct["self-rating"][0]


def test_a_batch_object_over_the_bound_is_named_as_such(stub, tmp_path):
    stub.bloat = 8 << 20
    result = grade(stub, tmp_path, "--grader", "self-rating", *FAST)
    assert result.exit_code == 1, result.output
    assert result.output.splitlines()[-1] == (f"Error: {stub.url} sent more than 4 MiB for batch batch_0 (Batch "
                                              "API): exampp reads at most that much")


def test_an_output_file_is_read_streamed(stub, tmp_path):
    import tracemalloc

    from exampp.llm.openai.batch import BatchClient

    # 300 lines of 100 KB each that exampp does not keep (an id), each with a small answer it keeps.
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "4"}, "finish_reason": "stop"}]}
    lines = [json.dumps({"id": f"{n:06d}" + "x" * 100_000, "custom_id": f"{n:064x}",
                         "response": {"status_code": 200, "body": body}}) + "\n" for n in range(300)]
    stub.files["file-big"] = "".join(lines).encode()
    size = len(stub.files["file-big"])
    with open_backend("openai", NAME, base_url=stub.url) as backend, \
            GradeStore(tmp_path / "grades.sqlite") as store:
        store.batches.add("batch_big", backend.url, backend.model, "m", [f"{n:064x}" for n in range(300)])
        client = BatchClient(backend, store.batches, "m")
        book = Book()
        try:
            tracemalloc.start()
            client._download("batch_big", "completed", {"output_file_id": "file-big"}, book)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
            client.close()
    assert len(book.answers) == 300 and all(status == 200 for status, _ in book.answers.values())
    assert peak < size / 4, f"{peak >> 20} MiB at peak to read a {size >> 20} MiB file"


def test_without_expires_at_the_window_runs_from_creation_else_from_first_sight():
    from types import SimpleNamespace

    from exampp.llm.backend import BackendError
    from exampp.llm.openai.batch import BatchClient

    client = SimpleNamespace(backend=SimpleNamespace(url="http://judge/v1"))
    now, hour = time.time(), 3600

    def check(batch: dict, first_seen: float = now) -> None:
        BatchClient._check_expiry(client, "batch_x", "in_progress", batch, first_seen)

    check({"created_at": now - 24.5 * hour})  # within the hour of grace
    check({"created_at": now - 26 * hour, "expires_at": now})  # expires_at rules where it reads
    for batch, first_seen in (({"created_at": now - 26 * hour}, now), ({"created_at": "yesterday"}, now - 26 * hour),
                              ({"expires_at": True}, now - 26 * hour)):
        with pytest.raises(BackendError, match="^http://judge/v1 still has batch batch_x in_progress 2 h past its "
                                               "expiry"):
            check(batch, first_seen)
