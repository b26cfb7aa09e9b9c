"""The served judge (``--backend openai``) against a hostile server (:mod:`.hostile_server`): a malformed
answer, a server that drips or hangs, a huge or compressed body, 5xx for ever, a redirect. Each ends in
one line naming the server, the model and what was wrong, after the retries, within the deadline,
having read a bounded amount, with the grades committed so far kept; an overlong answer is cut and
counted. A backend closed (twice, or after a close cut short) refuses work instead of hanging."""
from __future__ import annotations

import gzip
import json
import math
import zlib
from pathlib import Path

import pytest

pytest.importorskip("openai")

from click.testing import CliRunner
from hypothesis import strategies as st

from cli_results import one_line_error
from exampp.cli import main
from exampp.grading.methods.self_rating import GRADES, grade_probabilities
from exampp.llm.backend import BackendError, open_backend
from exampp.llm.openai.backend import CHARS_PER_TOKEN
from exampp.stores.grade_store import GradeStore
from small_collection import write_collection

from .checks import tries
from .hostile_server import (
    MALFORMED,
    MODEL,
    Answer,
    HostileServer,
    Request,
    as_json,
    completions_only,
    failing,
    good,
    huge,
    payload,
    redirect,
    usage_spoiled,
    within,
)

CHAT = "choices[0].logprobs.content[0]"
LISTED = "choices[0].logprobs.top_logprobs[0]"  # the completions endpoint's map of alternatives


def _logprob(value: str) -> tuple[str, str]:
    what = f" is {value}, not a log-probability (a number <= 0)"
    return f"{CHAT}.top_logprobs[1].logprob{what}", f"{LISTED}[' 2']{what}"


# What is wrong with each malformed answer, as the error says it: (chat endpoint, completions endpoint).
WRONG: dict[str, tuple[str, str] | str] = {
    "not JSON": """the body is not JSON (Content-Type 'application/json'): '{"choices": [{"text": "4"'""",
    "HTML": "the body is not JSON (Content-Type 'text/html'): '<html><body><h1>502 Bad Gateway</h1></bo'...",
    "empty body": "the body is not JSON (Content-Type 'application/json'): ''",
    "not UTF-8": """the body is not JSON (Content-Type 'application/json'): '{"choices": "\ufffd\ufffd"}'""",
    "deeply nested": f"the body is not JSON (Content-Type 'application/json'): '{'[' * 40}'...",
    "a list": "the body is a list, not an object",
    "no choices": "choices is missing",
    "empty choices": "choices is empty: there is no completion",
    "choice not an object": "choices[0] is '4', not an object",
    "no message or text": ("choices[0].message is missing", "choices[0].text is missing"),
    "content an integer": ("choices[0].message.content is 4, not a string", "choices[0].text is 4, not a string"),
    "token an integer": (f"{CHAT}.token is 4, not a string", "choices[0].logprobs.tokens[0] is 4, not a string"),
    "token null": (f"{CHAT}.token is null, not a string", "choices[0].logprobs.tokens[0] is null, not a string"),
    "logprob 1000": _logprob("1000"),
    "logprob 709.5": _logprob("709.5"),
    "logprob NaN": _logprob("NaN"),
    "logprob Infinity": _logprob("Infinity"),
    "logprob 1e999": _logprob("Infinity"),
    "logprob huge integer": _logprob("-" + "9" * 39 + "..."),
    "logprob abc": _logprob("'abc'"),
    "logprob null": _logprob("null"),
    "logprob true": _logprob("true"),
    "top_logprobs a string": (f"{CHAT}.top_logprobs is '4', not a list",
                              "choices[0].logprobs.top_logprobs is '4', not a list"),
    "top_logprobs of numbers": (f"{CHAT}.top_logprobs[0] is 1, not an object", f"{LISTED} is 1, not an object"),
    "logprobs a list": "choices[0].logprobs is a list, not an object",
}
RETRIES = "--max-retries sets how many"


pytestmark = pytest.mark.usefixtures("quick_retries")


def test_every_malformed_answer_has_its_message():
    assert sorted(WRONG) == sorted(MALFORMED)


def rate(server: HostileServer, endpoint: str = "chat", **options):
    """One self-rating request to ``server`` through the backend."""
    with open_backend("openai", MODEL, base_url=server.url, endpoint=endpoint, **options) as backend:
        return backend.next_token_labels(["Rate the passage."], GRADES)


@pytest.mark.parametrize("endpoint", ["chat", "completions"])
@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_answer_is_one_line_naming_server_model_and_field(case, endpoint):
    wrong = WRONG[case] if isinstance(WRONG[case], str) else WRONG[case][endpoint == "completions"]
    with HostileServer(completions_only(MALFORMED[case])) as server:
        with pytest.raises(BackendError) as raised:
            rate(server, endpoint, max_retries=0)
        assert str(raised.value) == (f"{server.url} sent a malformed answer for model {MODEL}: {wrong} "
                                     f"(1 attempt; {RETRIES})")
        assert len(server.completions()) == 1


@pytest.mark.parametrize("case", ["HTML", "logprob NaN"])
def test_a_malformed_answer_is_asked_again_max_retries_times_counted_as_retries(case):
    with HostileServer(completions_only(MALFORMED[case])) as server:
        with open_backend("openai", MODEL, base_url=server.url, max_retries=2) as backend:
            with pytest.raises(BackendError, match=rf" \(3 attempts; {RETRIES}\)$"):
                backend.next_token_labels(["Rate the passage."], GRADES)
            assert (backend.usage.requests, backend.usage.retries) == (1, 2)
        assert len(server.completions()) == 3


def test_a_malformed_answer_then_a_good_one_grades_and_a_5xx_between_spends_the_same_retries():
    sent = []

    def flaky(request: Request) -> Answer:
        sent.append(request)
        return [MALFORMED["HTML"], failing(502), good][min(len(sent), 3) - 1](request)

    with HostileServer(completions_only(flaky)) as server:
        with open_backend("openai", MODEL, base_url=server.url, max_retries=2) as backend:
            [seen] = backend.next_token_labels(["Rate the passage."], GRADES)
            assert seen.top_label == 4 and (backend.usage.requests, backend.usage.retries) == (1, 2)
        sent.clear()
        with open_backend("openai", MODEL, base_url=server.url, max_retries=1) as backend:
            with pytest.raises(BackendError, match=f"answered HTTP 502 for model {MODEL}: always 502$"):
                backend.next_token_labels(["Rate the passage."], GRADES)
        assert len(server.completions()) == 3 + 2  # malformed, 502: the one retry spent


@pytest.mark.slow
@pytest.mark.parametrize("written", ['"7"', "-1", "7.5", "1e999", "null", "[7]"])
def test_a_usage_count_that_is_not_a_count_is_taken_as_0_and_grading_goes_on(written):
    with HostileServer(completions_only(usage_spoiled(written))) as server:
        with open_backend("openai", MODEL, base_url=server.url, max_retries=0) as backend:
            [seen] = backend.next_token_labels(["Rate the passage."], GRADES)
            usage = backend.usage
    assert seen.top_label == 4 and (usage.requests, usage.prompt_tokens, usage.completion_tokens) == (1, 0, 1)


def test_log_probabilities_a_rounding_error_above_0_are_0_and_minus_infinity_is_a_probability_of_0():
    def answer(request: Request) -> Answer:
        body = payload(request)
        first = body["choices"][0]["logprobs"]["content"][0]
        first["top_logprobs"] = [{"token": "4", "logprob": 5e-7}, {"token": " 2", "logprob": "@@"}]
        return Answer(body=json.dumps(body).replace('"@@"', "-Infinity").encode())

    with HostileServer(completions_only(answer)) as server:
        [seen] = rate(server)
    assert seen.top_label == 4 and seen.logprobs == (-math.inf, -math.inf, -math.inf, -math.inf, 0.0, -math.inf)
    with HostileServer(completions_only(_alternatives(("4", 2e-6)))) as server:
        with pytest.raises(BackendError, match=r"top_logprobs\[0\]\.logprob is 2e-06, not a log-probability"):
            rate(server, max_retries=0)


def _alternatives(*top: tuple[str, object]):
    def answer(request: Request) -> Answer:
        body = payload(request)
        body["choices"][0]["logprobs"]["content"][0]["top_logprobs"] = [{"token": t, "logprob": lp} for t, lp in top]
        return as_json(body)

    return answer


# --- the property: whatever a server puts where, an answer is used as valid or refused in one line ---------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    | st.sampled_from([0, -0.0, 1e-7, -1e308, 709.5, 10 ** 30, "", "4", " 2"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6)


def _paths(value, path=()):
    """Every place in a JSON value: (path of keys and indices)."""
    yield path
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _paths(inner, path + (key,))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _paths(inner, path + (i,))


def _replaced(value, path, new):
    if not path:
        return new
    value[path[0]] = _replaced(value[path[0]], path[1:], new)
    return value


@pytest.fixture(scope="module")
def spoiling():
    """A server whose answer the test sets (``server.answer``), and the backends of both endpoints on it."""
    with HostileServer() as server:
        backends = {endpoint: open_backend("openai", MODEL, base_url=server.url, endpoint=endpoint, max_retries=0,
                                           timeout=5) for endpoint in ("chat", "completions")}
        try:
            yield server, backends
        finally:
            for backend in backends.values():
                backend.close()


@pytest.mark.slow
@tries(40, endpoint=st.sampled_from(["chat", "completions"]), where=st.integers(0, 10 ** 6), new=JSON_VALUES)
def test_any_value_anywhere_in_an_answer_gives_valid_scores_or_one_line(spoiling, endpoint, where, new):
    server, backends = spoiling
    request = Request("POST", "/v1/chat/completions" if endpoint == "chat" else "/v1/completions", {},
                      {"logprobs": True})
    body = payload(request)
    places = list(_paths(body))
    spoiled = _replaced(body, places[where % len(places)], new)
    server.answer = completions_only(lambda request: Answer(body=json.dumps(spoiled).encode()))
    try:
        [seen] = backends[endpoint].next_token_labels(["Rate the passage."], GRADES)
    except BackendError as exc:
        assert str(exc).startswith(f"{server.url} sent a malformed answer for model {MODEL}: ")
        assert "\n" not in str(exc) and len(str(exc)) < 300
        return
    assert seen.text is None or isinstance(seen.text, str)
    if seen.logprobs is not None:
        assert all(isinstance(v, float) and not math.isnan(v) and v < math.log(21) for v in seen.logprobs)
        if seen.top_label is not None:
            assert sum(grade_probabilities(seen.logprobs)) == pytest.approx(1.0)


# --- deadlines ----------------------------------------------------------------------------------------


def _dripped(*, head: bool):
    """A well-formed answer (some 500 bytes) sent a byte every 0.3 s (each read well within a time-out
    of 2 s or more, the whole far beyond it), from the status line on (``head``) or from the body on."""

    def answer(request: Request) -> Answer:
        whole = good(request)
        return Answer(whole.status, whole.body, whole.headers, drip=0.3, drip_head=head)

    return answer


@pytest.mark.slow
@pytest.mark.parametrize("retries", [0, 1])
@pytest.mark.parametrize("mode", ["drip from the status line", "drip of the body", "hang"])
def test_timeout_is_a_deadline_per_attempt_for_a_dripping_or_hung_server(mode, retries):
    answer = (lambda request: Answer(hang=True)) if mode == "hang" else _dripped(head=mode.startswith("drip from"))
    with HostileServer(completions_only(answer), lifetime=30) as server:
        with pytest.raises(BackendError) as raised:
            rate(server, timeout=2, max_retries=retries)
        attempts = "2 attempts" if retries else "1 attempt"
        assert str(raised.value) == (f"{server.url} did not answer for model {MODEL} within --timeout 2 s "
                                     f"({attempts}; {RETRIES})")
        assert len(server.completions()) == retries + 1


@pytest.mark.slow
@pytest.mark.parametrize("retries", [0, 1])
def test_a_server_dripping_then_breaking_off_is_named_as_such_not_unreachable(retries):
    def broken_off(request: Request) -> Answer:  # 20 bytes of an answer a byte at a time, then the connection closes
        whole = good(request)
        return Answer(whole.status, whole.body[:20], (*whole.headers, ("Content-Length", str(len(whole.body)))),
                      drip=0.01, drip_head=False)

    with HostileServer(completions_only(broken_off)) as server:
        with pytest.raises(BackendError) as raised:
            rate(server, timeout=5, max_retries=retries)
    message = str(raised.value)
    assert message.startswith(f"{server.url} closed the connection for model {MODEL} before its answer was whole: "
                              "peer closed connection without sending complete message body"), message
    assert message.endswith(f"({retries + 1} attempt{'s' if retries else ''}; {RETRIES})")
    assert "is the server running" not in message


def test_a_status_without_a_message_or_a_location_is_named_once():
    empty = Answer(302, b"", (("Content-Length", "0"),))
    with HostileServer(completions_only(lambda request: empty)) as server:
        with pytest.raises(BackendError) as raised:
            rate(server, max_retries=0)
    assert str(raised.value) == f"{server.url} answered HTTP 302 for model {MODEL}"


# --- what is read and what is kept ------------------------------------------------------------------


OVER = f"sent more than 4 MiB for model {MODEL}: exampp reads at most that much of an answer"


@pytest.mark.parametrize("declared", [True, False], ids=["Content-Length", "chunked"])
def test_a_body_over_4_mib_is_refused_having_read_no_more(declared):
    with HostileServer(completions_only(huge(64 << 20, declared=declared))) as server:
        with pytest.raises(BackendError) as raised:
            rate(server, max_retries=2)
        assert str(raised.value) == f"{server.url} {OVER}"
        assert len(server.completions()) == 1  # not asked again
    # What the server got written: the 4 MiB read, and what the sockets' buffers took; not the 64 MiB.
    assert 4 << 20 < server.sent < 24 << 20


def _encoded(encoding: str, compress, size: int = 0):
    """A well-formed answer (followed by ``size`` bytes of spaces) compressed by ``compress``."""

    def answer(request: Request) -> Answer:
        body = json.dumps(payload(request)).encode() + b" " * size
        return Answer(body=compress(body), headers=(("Content-Type", "application/json"),
                                                    ("Content-Encoding", encoding)))

    return answer


@pytest.mark.slow
@pytest.mark.parametrize("encoding, compress", [("gzip", gzip.compress), ("deflate", zlib.compress)])
def test_a_gzip_or_deflate_answer_none_was_asked_for_is_read_and_inflated_no_further_than_4_mib(encoding, compress):
    with HostileServer(completions_only(_encoded(encoding, compress))) as server:
        [seen] = rate(server)
        assert seen.top_label == 4
        assert {request.headers.get("Accept-Encoding") for request in server.requests} == {"identity"}
    bomb = _encoded(encoding, compress, 8 << 20)  # 8 KiB sent, 8 MiB inflated
    with HostileServer(completions_only(bomb)) as server:
        with pytest.raises(BackendError) as raised:
            rate(server, max_retries=2)
        assert str(raised.value) == f"{server.url} {OVER}"
        assert len(server.completions()) == 1


@pytest.mark.parametrize("encoding, compress, refused", [
    ("br", lambda body: body, "Content-Encoding 'br'"),
    ("gzip", lambda body: b"\x1f\x8b" + body, "Content-Encoding 'gzip' that does not inflate")])
def test_another_encoding_or_a_body_that_does_not_inflate_is_refused_at_once(encoding, compress, refused):
    with HostileServer(completions_only(_encoded(encoding, compress))) as server:
        with pytest.raises(BackendError) as raised:
            rate(server, max_retries=2)
        assert str(raised.value) == (f"{server.url} sent the answer for model {MODEL} with {refused}, which exampp "
                                     "did not ask for and cannot read: it reads answers uncompressed (or gzip or "
                                     "deflate)")
        assert len(server.completions()) == 1


def test_5xx_for_ever_is_retried_then_one_line():
    with HostileServer(failing(502)) as server:
        with pytest.raises(BackendError) as raised:
            rate(server, max_retries=1)
        assert str(raised.value) == f"{server.url} answered HTTP 502 for model {MODEL}: always 502"
        assert len(server.completions()) == 2


def test_a_servers_error_message_is_one_line_with_its_control_characters_escaped():
    said = {"error": {"message": "\x1b[2Jwiped\nsecond\tline\x07" + "z" * 400}}
    with HostileServer(completions_only(lambda request: as_json(said, 400))) as server:
        with pytest.raises(BackendError) as raised:
            rate(server)
        assert str(raised.value) == (f"{server.url} answered HTTP 400 for model {MODEL}: \\x1b[2Jwiped second line"
                                     f"\\x07{'z' * 278}...")  # 300 characters of the server's, then escaped


@pytest.mark.parametrize("status", [302, 307])
def test_a_redirect_to_another_address_is_refused_and_that_address_asked_nothing(status):
    with HostileServer() as elsewhere, HostileServer(redirect(elsewhere.url + "/chat/completions", status)) as server:
        with pytest.raises(BackendError) as raised:
            rate(server)
        assert str(raised.value) == (
            f"{server.url} redirected the request for model {MODEL} to '{elsewhere.url}/chat/completions' "
            f"(HTTP {status}): exampp does not follow redirects to another address; if that is the server, give "
            "its address as --base-url")
        assert elsewhere.requests == [] and len(server.completions()) == 1


def test_a_redirect_on_the_same_address_is_refused_too_and_so_is_one_of_the_model_list():
    with HostileServer(redirect(lambda request: request.path.replace("/v1/", "/v2/"))) as server:
        with pytest.raises(BackendError) as raised:
            rate(server)
        assert str(raised.value) == (
            f"{server.url} redirected the request for model {MODEL} to '{server.url[:-3]}/v2/chat/completions' "
            "(HTTP 307): exampp does not follow redirects; if that is the server, give its address as --base-url")
    with HostileServer() as elsewhere, HostileServer(lambda request: Answer(
            301, b"", (("Location", elsewhere.url + "/models"), ("Content-Length", "0")))) as server:
        with pytest.raises(BackendError, match=f"^{server.url} redirected the request for model {MODEL} to "
                                               f"'{elsewhere.url}/models' \\(HTTP 301\\)"):
            rate(server)
        assert elsewhere.requests == [] and server.completions() == []


# --- through exampp grade ------------------------------------------------------------------------------

RUNS = {"a": {"Q1": ["d1", "d2", "d3"], "Q2": ["d4", "d5"]}}
PASSAGES = {f"d{i}": f"Passage {i} about reefs and knots." for i in range(1, 6)}
QUESTIONS = [("Q1", "Q1/a", "What makes corals bleach?"), ("Q1", "Q1/b", "What lives in coral tissues?"),
             ("Q2", "Q2/a", "Which knot joins two ropes?")]
PAIRS = 3 * 2 + 2 * 1


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return write_collection(tmp_path, RUNS, PASSAGES,
                            ({"query_id": q, "question_id": qid, "text": text, "answers": ["heat"]}
                             for q, qid, text in QUESTIONS))


def grade(workspace: Path, server: HostileServer, *args: str):
    argv = ["grade", str(workspace / "runs"), "--corpus", str(workspace / "passages.jsonl"), "--bank",
            str(workspace / "questions.jsonl"), "-w", str(workspace / "ws"), "--no-progress", "--backend", "openai",
            "--base-url", server.url, "--model", MODEL, *args]
    return CliRunner().invoke(main, argv)


def stored(workspace: Path) -> dict[tuple[str, str, str], tuple]:
    with GradeStore(workspace / "ws" / "grades.sqlite") as store:
        return {(r.query_id, r.passage_id, r.question_id): (r.grade, r.answer) for r in store.records()}


@pytest.mark.slow
@pytest.mark.parametrize("bad", ["logprob 709.5", "HTML", "drip"])
def test_a_server_turning_bad_mid_job_is_one_line_the_grades_so_far_kept_and_a_rerun_asks_only_the_rest(
        workspace, bad):
    spoil = _dripped(head=True) if bad == "drip" else MALFORMED[bad]
    deadline = ["--timeout", "3"] if bad == "drip" else []  # the good answers get the default 60 s

    def turning(request: Request) -> Answer:
        if request.method == "POST" and len(server.completions()) > 4:
            return spoil(request)
        return good(request)

    with HostileServer(turning, lifetime=30) as server:
        line = one_line_error(grade(workspace, server, "--chunk-size", "2", "--concurrency", "1", *deadline,
                                    "--max-retries", "0"))
        first = [request.prompt for request in server.completions()[:4]]
    assert line.startswith(f"Error: {server.url} ")
    kept = stored(workspace)
    assert len(kept) == 4 and {grade_ for grade_, _ in kept.values()} == {4.0}
    with HostileServer() as again:
        result = grade(workspace, again)
        assert result.exit_code == 0, result.output
        rest = [request.prompt for request in again.completions()]
    assert len(rest) == PAIRS - 4 and not set(rest) & set(first)
    assert len(stored(workspace)) == PAIRS


@pytest.mark.slow
def test_an_overlong_answer_is_stored_cut_and_the_cut_is_reported(workspace):
    long = "heat " + "x" * (1 << 20)  # a megabyte: under the 4 MiB read, far over 32 tokens
    with HostileServer(completions_only(lambda request: as_json(payload(request, long)))) as server:
        result = grade(workspace, server, "--grader", "qa")
    assert result.exit_code == 0, result.output
    assert f"judge: {PAIRS} requests, {7 * PAIRS} prompt tokens, {PAIRS} completion tokens, {PAIRS} answers cut " \
           "to the length asked for\n" in result.output
    answers = [answer for _, answer in stored(workspace).values()]
    assert len(answers) == PAIRS and {len(answer) for answer in answers} == {32 * CHARS_PER_TOKEN}
    assert (workspace / "ws" / "grades.sqlite").stat().st_size < 1 << 20


@pytest.mark.slow
@pytest.mark.parametrize("grader", ["qa", "self-rating(fast=false)"])
def test_an_answer_with_a_lone_surrogate_is_stored_with_a_replacement_character(workspace, grader):
    # JSON may escape a lone surrogate ("\\ud800"): Python reads it, UTF-8 (the store) cannot hold it.
    with HostileServer(completions_only(lambda request: as_json(payload(request, "heat \ud800")))) as server:
        result = grade(workspace, server, "--grader", grader)
    assert result.exit_code == 0, result.output
    assert {answer for _, answer in stored(workspace).values()} == {"heat \ufffd"}


# --- closing ------------------------------------------------------------------------------------------


def bounded(work):
    """``work()``'s result, or its exception raised, run in a thread given 20 s, so that a hang fails the
    test instead of hanging the run."""
    outcome, _ = within(20, work)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def test_a_closed_backend_closes_again_and_refuses_work_without_hanging():
    with HostileServer() as server:
        backend = open_backend("openai", MODEL, base_url=server.url)
        backend.close()
        bounded(backend.close)
        with pytest.raises(BackendError) as raised:
            bounded(lambda: backend.next_token_labels(["Rate the passage."], GRADES))
        assert str(raised.value) == (f"the openai backend for model {MODEL} at {server.url} is closed (or was "
                                     "opened in another process)")
        assert server.completions() == []


def test_a_close_cut_short_by_a_second_ctrl_c_leaves_a_backend_that_closes_and_refuses_work():
    with HostileServer() as server:
        backend = open_backend("openai", MODEL, base_url=server.url)
        thread = backend._loop_thread
        join = thread.join

        def interrupted(timeout=None):
            thread.join = join
            join(timeout)  # the loop has stopped, and is left unclosed
            raise KeyboardInterrupt

        thread.join = interrupted
        with pytest.raises(KeyboardInterrupt):
            backend.close()
        bounded(backend.close)
        with pytest.raises(BackendError, match="is closed"):
            bounded(lambda: backend.generate(["Say 4."]))
        assert server.completions() == []


def test_a_backend_whose_loop_thread_is_gone_as_after_a_fork_refuses_work_and_closes():
    with HostileServer() as server:
        backend = open_backend("openai", MODEL, base_url=server.url)
        backend._loop.call_soon_threadsafe(backend._loop.stop)
        backend._loop_thread.join()
        with pytest.raises(BackendError, match="is closed"):
            bounded(lambda: backend.next_token_labels(["Rate the passage."], GRADES))
        bounded(backend.close)
        assert server.completions() == []
