"""The ``openai`` backend against a real OpenAI-compatible HTTP server (exampp/testing/openai_server.py) that serves
the tiny FLAN-T5-shaped model the ``hf`` backend loads: the same grades and grade probabilities through
both endpoints, retries, one-line errors, the request budget and resuming without asking twice."""
from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("openai")
pytest.importorskip("transformers")

from click.testing import CliRunner

from cli_results import one_line_error
from conftest import CLOSED_PORT
from exampp.cli import main
from exampp.grading.method_prompts import QUESTION_ANSWERING, SELF_RATING
from exampp.grading.methods.qa import YES_NO
from exampp.grading.methods.self_rating import GRADES
from exampp.llm.backend import BackendError, NextToken, open_backend
from exampp.llm.backends.hf import HFBackend
from exampp.llm.openai.wire import label_scores, token_text
from exampp.stores.grade_store import GradeStore
from exampp.testing.openai_server import Fault, OpenAIServer
from exampp.testing.tiny_models import save_rater
from killing import kill_when
from small_collection import write_collection

REPO = Path(__file__).resolve().parents[1]
NAME = "tiny"  # the served model's name
KEY = "sk-test-1f2e3d4c"  # the key the server asks for in the key tests
CLOSED = CLOSED_PORT + "/v1"  # nothing listens there

PASSAGES = {
    "d1": "Corals bleach when warm water makes them expel the algae that live in their tissues.",
    "d2": "Reef knots join two ropes of equal thickness.",
    "d3": "Heat stress is the main cause of mass bleaching.",
    "d4": "A bowline makes a fixed loop at the end of a rope.",
    "d5": "Sailors tie knots.",
    "d6": "Bleach whitens laundry; never mix it with ammonia, since the fumes are toxic.",
}
RUNS = {
    "a": {"Q1": ["d1", "d2", "d3"], "Q2": ["d4", "d5"]},
    "b": {"Q1": ["d3", "d6"], "Q2": ["d5", "d2"]},
}
QUESTIONS = [
    ("Q1", "Q1/heat", "What makes corals bleach?", ["heat", "warm water"]),
    ("Q1", "Q1/algae", "What lives in coral tissues?", ["algae", "reef"]),
    ("Q2", "Q2/join", "Which knot joins two ropes?", ["reef", "reef knot"]),
    ("Q2", "Q2/loop", "Which knot makes a fixed loop?", ["bowline"]),
]
PAIRS = 14  # the pool: Q1 has d1, d2, d3, d6 and Q2 has d2, d4, d5; two questions each
# The judge answers one of these first tokens, then stops: grades read off the first token (digits),
# and text the methods parse (no, yes, reef, heat).
ANSWERS = ("▁4", "▁2", "▁no", "▁yes", "▁reef", "▁heat")


def prompt_pairs() -> dict[str, tuple[str, str, str]]:
    """The self-rating prompt of each pooled pair -> (query, passage, question)."""
    prompts = {}
    for run in RUNS.values():
        for qid, pids in run.items():
            for pid in pids:
                for query, question_id, text, _ in QUESTIONS:
                    if query == qid:
                        prompts[SELF_RATING.render(context=PASSAGES[pid], question=text)] = (qid, pid, question_id)
    assert len(prompts) == PAIRS
    return prompts


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """Runs, corpus and question bank (with answer keys) of two queries."""
    return write_collection(tmp_path_factory.mktemp("collection"), RUNS, PASSAGES,
                            ({"query_id": qid, "question_id": question_id, "text": text, "answers": answers}
                             for qid, question_id, text, answers in QUESTIONS))


@pytest.fixture(scope="module")
def judge_dir(tiny_t5_dir, tmp_path_factory) -> Path:
    """The tiny model made a rater (:func:`make_rater`) over this collection's prompts, saved as a model folder."""
    return save_rater(tiny_t5_dir, tmp_path_factory.mktemp("judge"), list(prompt_pairs()), ANSWERS)


@pytest.fixture(scope="module")
def server(judge_dir):
    with OpenAIServer(str(judge_dir), NAME) as running:
        yield running


@pytest.fixture
def served(server):
    """The module's server, with a clean record and no faults."""
    server.reset()
    server.api_key, server.logprobs, server.list_models = None, True, True
    yield server
    server.reset()


def grade(workspace: Path, store_dir: Path, *args: str, env: dict | None = None):
    """``exampp grade`` in this process on the collection, into ``store_dir``."""
    argv = ["grade", str(workspace / "runs"), "--corpus", str(workspace / "passages.jsonl"),
            "--bank", str(workspace / "questions.jsonl"), "-w", str(store_dir), "--no-progress", *args]
    return CliRunner().invoke(main, argv, env=env)


def served_args(server: OpenAIServer, *args: str) -> list[str]:
    return ["--backend", "openai", "--base-url", server.url, "--model", NAME, *args]


def stored(store_dir: Path) -> dict[str, dict[tuple[str, str, str], tuple]]:
    """Per grading method (the method id's name and prompt parts, without the judge): (query, passage,
    question) -> (grade, answer, probabilities)."""
    found: dict[str, dict] = {}
    with GradeStore(store_dir / "grades.sqlite") as store:
        for record in store.records():
            name, _judge, prompt = record.method_id.split("|")
            found.setdefault(f"{name}|{prompt}", {})[record.query_id, record.passage_id, record.question_id] = (
                record.grade, record.answer, record.probabilities)
    return found


def method_ids(store_dir: Path) -> list[str]:
    with GradeStore(store_dir / "grades.sqlite") as store:
        return store.methods()


METHODS = ("self-rating", "qa", "qa(verify=llm)")
STORE_NAMES = {"self-rating": "self-rating|self-rating@v1", "qa": "qa|qa@v1+string@v1",
               "qa(verify=llm)": "qa|qa@v1+verify@v1"}


@pytest.fixture(scope="module")
def local(workspace, judge_dir, tmp_path_factory) -> dict[str, dict]:
    """The grades of the local backend (``--backend hf``) for each method."""
    store_dir = tmp_path_factory.mktemp("local")
    for method in METHODS:
        # One prompt per forward pass, as the server computes: padding in a batch moves float32 logits by ~1e-5.
        result = grade(workspace, store_dir, "--grader", method, "--backend", "hf", "--model", str(judge_dir),
                       "--device", "cpu", "--batch-size", "1")
        assert result.exit_code == 0, result.output
    return stored(store_dir)


def assert_same_grades(served_grades: dict, local_grades: dict, *, probabilities: bool = True) -> None:
    assert sorted(served_grades) == sorted(local_grades)
    for key, (grade_, answer, probs) in local_grades.items():
        got_grade, got_answer, got_probs = served_grades[key]
        assert (got_grade, got_answer) == (grade_, answer), key
        if probabilities and probs is not None:
            assert got_probs == probs, key  # bit for bit: the same float32 log-probabilities, summed alike
        else:
            assert got_probs is None, key


# --- reading a server's report ------------------------------------------------------------------


def test_token_strings_read_with_the_vocabularies_space_marks_as_spaces():
    assert [token_text(t) for t in ["▁5", "Ġ4", "5", "▁▁no", "</s>"]] == [" 5", " 4", "5", "  no", "</s>"]


def test_label_scores_sum_the_top_alternatives_per_label():
    top = [("▁4", -0.5), ("4", -1.0), ("Ġ2", -2.0), ("▁the", -0.1), ("6", -3.0), ("2018", -4.0)]
    seen = label_scores(top, "▁the", GRADES, " the end")
    assert seen.top_label is None and seen.text == " the end"
    expected = [-math.inf, -math.inf, math.log(math.exp(-2.0) + math.exp(-4.0)), -math.inf,
                math.log(math.exp(-0.5) + math.exp(-1.0)), -math.inf]
    assert seen.logprobs == pytest.approx(expected)
    assert label_scores(top, "▁4", GRADES, "4").top_label == 4
    yes_no = label_scores([("▁Yes", -0.2), ("no", -1.7)], "▁Yes", YES_NO, "Yes")
    assert (yes_no.top_label, yes_no.logprobs) == (0, pytest.approx((-0.2, -1.7)))


def test_label_scores_read_only_the_20_most_likely_alternatives():
    top = [(f"tok{i}", -1.0 - i / 100) for i in range(25)] + [("▁5", -1.1)]  # 5 is 11th
    assert label_scores(top, "tok0", GRADES, "tok0").logprobs[5] == pytest.approx(-1.1)
    late = [(f"tok{i}", -1.0 - i / 100) for i in range(25)] + [("▁5", -1.5)]  # 26th of 26
    assert label_scores(late, "tok0", GRADES, "tok0").logprobs == (-math.inf,) * 6


def test_a_generated_label_missing_from_the_alternatives_gives_no_probabilities():
    seen = label_scores([("▁the", -0.1), ("▁a", -0.2)], "▁5", GRADES, "5")
    assert seen == NextToken(None, 5, "5")
    from exampp.collection.questions import Question
    from exampp.grading.base import Pair
    from exampp.grading.methods.self_rating import SelfRating
    from exampp.llm.backend import Backend, Capability, Usage

    class Reporting(Backend):  # reports what such a server reports
        name, capabilities, usage = "r", frozenset({Capability.GENERATE, Capability.LABEL_LOGPROBS}), Usage()

        def next_token_labels(self, prompts, labels, *, max_new_tokens=32):
            return [seen] * len(prompts)

    [judgment] = SelfRating().bind(Reporting()).grade([Pair("q", "p", "text", Question("q", "q/1", "Why?"))])
    assert (judgment.grade, judgment.probabilities) == (5.0, None)  # the grade, and no division by zero


def test_without_alternatives_the_text_decides():
    assert label_scores([], "▁4", GRADES, "4 stars") == label_scores([("▁4", -0.1)], None, GRADES, "4 stars") \
        == NextToken(None, None, "4 stars")


# --- the same grades as the local backend ----------------------------------------------------------


@pytest.mark.slow
def test_the_local_grades_take_both_paths(local):
    """Some pairs' most likely first token is a grade (read off, with probabilities), others' is not (text)."""
    ratings = local[STORE_NAMES["self-rating"]].values()
    assert sum(probs is not None for _, _, probs in ratings) == 4
    assert sum(probs is None for _, _, probs in ratings) == 10
    assert {answer for _, answer, _ in ratings} == {"4", "heat", "reef", "no", "yes"}
    assert sorted(grade_ for grade_, _, _ in local[STORE_NAMES["qa"]].values()) == [0.0] * 11 + [1.0] * 3


@pytest.mark.slow
@pytest.mark.parametrize("endpoint", ["chat", "completions"])
@pytest.mark.parametrize("method", METHODS)
def test_served_grades_equal_the_local_backends(served, workspace, local, tmp_path, method, endpoint):
    result = grade(workspace, tmp_path, "--grader", method, *served_args(served, "--endpoint", endpoint))
    assert result.exit_code == 0, result.output
    judge = f"{NAME}+chat" if endpoint == "chat" else NAME  # the chat endpoint renders prompts in a chat template
    assert method_ids(tmp_path) == [STORE_NAMES[method].replace("|", f"|{judge}|", 1)]
    assert_same_grades(stored(tmp_path)[STORE_NAMES[method]], local[STORE_NAMES[method]])
    if method == "self-rating":  # one greedy request per pair, asking for the 20 top alternatives
        expected = {"temperature": 0, "max_tokens": 32, "model": NAME}
        expected.update({"logprobs": True, "top_logprobs": 20} if endpoint == "chat" else {"logprobs": 20})
        requests = served.completions()
        assert sorted(seen.prompt for seen in requests) == sorted(prompt_pairs())
        for seen in requests:
            assert seen.path == f"/v1/{'chat/completions' if endpoint == 'chat' else 'completions'}"
            assert {k: seen.body[k] for k in expected} == expected
        # Usage as the server reported it: each prompt's tokens with </s>, and the answer token and </s>.
        prompt_tokens = sum(served.backend.count_tokens(prompt) for prompt in prompt_pairs())
        assert f"judge: {PAIRS} requests, {prompt_tokens} prompt tokens, {2 * PAIRS} completion tokens\n" \
            in result.output


@pytest.mark.slow
def test_a_server_without_logprobs_gives_the_same_grades_from_the_text(served, workspace, local, tmp_path):
    served.logprobs = False
    result = grade(workspace, tmp_path, "--grader", "self-rating", *served_args(served))
    assert result.exit_code == 0, result.output
    assert_same_grades(stored(tmp_path)[STORE_NAMES["self-rating"]], local[STORE_NAMES["self-rating"]],
                       probabilities=False)


# --- retries, errors, budget -------------------------------------------------------------------------


@pytest.mark.slow
def test_429_500_and_a_slow_answer_are_retried(served, workspace, local, tmp_path):
    # the slow answer comes long past --timeout 1, whatever the load on the machine
    served.faults = {1: Fault(429, {"Retry-After": "1"}), 4: Fault(500), 7: Fault(sleep=60.0)}
    result = grade(workspace, tmp_path, "--grader", "self-rating", *served_args(served, "--timeout", "1",
                                                                                 "--concurrency", "2"))
    assert result.exit_code == 0, result.output
    assert_same_grades(stored(tmp_path)[STORE_NAMES["self-rating"]], local[STORE_NAMES["self-rating"]])
    assert f"judge: {PAIRS} requests (3 retried), " in result.output
    # Said while it happens: the first retry at once (the 429 comes before the others are sent), the
    # rest grouped, never more retries said than made.
    said = [line for line in result.output.splitlines() if line.startswith(f"{served.url}: retrying ")]
    assert said[0] == f"{served.url}: retrying 1 request (HTTP 429, overloaded)", result.output
    assert sum(int(line.split()[2]) for line in said) <= 3
    statuses = [seen.status for seen in served.completions()]
    assert len(statuses) == PAIRS + 3
    assert (statuses[1], statuses[4]) == (429, 500)
    assert sorted(set(served.prompts())) == sorted(prompt_pairs())


def _one_line_error(result) -> str:
    assert result.exit_code == 1, result.output
    return one_line_error(result)


@pytest.mark.slow
def test_401_is_one_line_naming_server_model_and_key_variable_never_the_key(served, workspace, local, tmp_path):
    served.api_key = KEY
    result = grade(workspace, tmp_path, *served_args(served), env={"OPENAI_API_KEY": "sk-wrong-98765"})
    line = _one_line_error(result)
    assert line == (f"Error: {served.url} refused model {NAME} with the API key in $OPENAI_API_KEY: HTTP 401 "
                    "Unauthorized (--api-key-env names the variable to read the key from)")
    assert served.completions() == []  # refused when the model list was asked for
    unset = _one_line_error(grade(workspace, tmp_path, *served_args(served), env={"OPENAI_API_KEY": None}))
    assert "no API key ($OPENAI_API_KEY is unset)" in unset
    # The key from the variable --api-key-env names: grades, and the key is nowhere in the store.
    result = grade(workspace, tmp_path, *served_args(served, "--api-key-env", "EXAMPP_TEST_KEY"),
                   env={"EXAMPP_TEST_KEY": KEY, "OPENAI_API_KEY": None})
    assert result.exit_code == 0, result.output
    assert_same_grades(stored(tmp_path)[STORE_NAMES["self-rating"]], local[STORE_NAMES["self-rating"]])
    assert KEY not in result.output
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_unknown_model_is_one_line(served, workspace, tmp_path):
    # A name the model list lacks is tried (servers accept aliases they do not list); the 404 shows the list.
    line = _one_line_error(grade(workspace, tmp_path, *served_args(served)[:-2], "--model", "nope"))
    assert line == (f"Error: {served.url} has no model nope or no /chat/completions endpoint: HTTP 404: "
                    f"The model `nope` does not exist. (the server lists: {NAME}; choose one with --model)")
    served.list_models = False  # no model list: the name is taken on trust, and the first request says 404
    line = _one_line_error(grade(workspace, tmp_path, *served_args(served)[:-2], "--model", "nope"))
    assert line == (f"Error: {served.url} has no model nope or no /chat/completions endpoint: HTTP 404: "
                    "The model `nope` does not exist.")
    assert not (tmp_path / "grades.sqlite").exists() or stored(tmp_path) == {}


@pytest.mark.slow
def test_what_the_retries_do_not_mend_is_one_line(served, workspace, tmp_path):
    served.faults = {0: Fault(500)}
    line = _one_line_error(grade(workspace, tmp_path, *served_args(served, "--max-retries", "0")))
    assert line == f"Error: {served.url} answered HTTP 500 for model {NAME}: injected HTTP 500"
    served.reset()
    # every attempt (a retry waits without its slot) answered only long after the client gave up, so
    # that no load on the machine lets an answer beat the 0.3 s time-out (the server's threads are daemons)
    served.faults = {i: Fault(sleep=60.0) for i in range(2 * PAIRS)}
    line = _one_line_error(grade(workspace, tmp_path, *served_args(served, "--max-retries", "1", "--timeout", "0.3",
                                                                   "--concurrency", "1")))
    # one request at a time: the second times out as the silence reaches 2 x 0.3 s, before the first's retry
    assert line == (f"Error: {served.url} answered nothing for model {NAME} for 0.6 s (--timeout 0.3 x "
                    "(--max-retries 1 + 1)): every attempt since its last answer timed out; is the server up and "
                    "able to answer?")


def test_multiple_choice_is_refused_for_lack_of_continuation_loglik(served, workspace, tmp_path):
    line = _one_line_error(grade(workspace, tmp_path, "--grader", "multiple-choice", *served_args(served)))
    assert line == ("Error: method multiple-choice needs a backend that can continuation-loglik; backend "
                    "'openai' offers: generate, label-logprobs")
    assert served.requests == []  # refused before the server was asked anything
    assert served.completions() == []


@pytest.mark.slow
def test_max_requests_stops_keeps_the_grades_and_a_rerun_continues(served, workspace, local, tmp_path):
    budget = ["--chunk-size", "2", "--concurrency", "1", "--max-requests", "5"]
    line = _one_line_error(grade(workspace, tmp_path, *served_args(served, *budget)))
    assert line == ("Error: request budget spent: 4 of --max-requests 5 sent, and the next batch needs 2 (only 1 "
                    "left); what is done so far is kept: run again to go on")
    first = stored(tmp_path)[STORE_NAMES["self-rating"]]
    pairs = prompt_pairs()
    assert sorted(first) == sorted(pairs[prompt] for prompt in served.prompts())
    assert len(first) == 4
    served.reset()
    result = grade(workspace, tmp_path, *served_args(served))
    assert result.exit_code == 0, result.output
    assert not {pairs[prompt] for prompt in served.prompts()} & set(first)
    assert len(served.prompts()) == PAIRS - 4
    assert_same_grades(stored(tmp_path)[STORE_NAMES["self-rating"]], local[STORE_NAMES["self-rating"]])


@pytest.mark.slow
def test_a_killed_job_rerun_asks_nothing_already_graded(served, workspace, local, tmp_path):
    served.delay = 0.1
    argv = [sys.executable, "-m", "exampp", "grade", str(workspace / "runs"), "--corpus",
            str(workspace / "passages.jsonl"), "--bank", str(workspace / "questions.jsonl"), "-w", str(tmp_path),
            "--no-progress", *served_args(served, "--chunk-size", "2", "--concurrency", "1")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # Killed once 7 answers are out, however long a loaded machine takes to get there (a fixed 30 s once
    # ran out under load, and the test went on to kill a job that had committed nothing).
    kill_when(process, lambda: len(served.completions()) >= 7, "7 answers")
    pairs = prompt_pairs()
    first = stored(tmp_path)[STORE_NAMES["self-rating"]]
    assert 0 < len(first) < PAIRS
    asked = {pairs[prompt] for prompt in served.prompts()}
    assert set(first) <= asked
    served.reset()
    result = grade(workspace, tmp_path, *served_args(served))
    assert result.exit_code == 0, result.output
    again = [pairs[prompt] for prompt in served.prompts()]
    assert sorted(again) == sorted(set(pairs.values()) - set(first))  # each missing pair once, no other
    assert_same_grades(stored(tmp_path)[STORE_NAMES["self-rating"]], local[STORE_NAMES["self-rating"]])


# --- fitting prompts ---------------------------------------------------------------------------------

LONG = " ".join(f"Sentence {i} says that warm water stresses the coral polyps and their algae." for i in range(80))


@pytest.mark.slow
def test_a_tokenizer_cuts_prompts_exactly_as_the_local_backend(served, judge_dir):
    local_backend = HFBackend.load(str(judge_dir), device="cpu")
    with open_backend("openai", NAME, base_url=served.url, tokenizer=str(judge_dir)) as backend:
        assert backend.max_input_tokens == local_backend.max_input_tokens == 512
        for context in (LONG, LONG[:1500], LONG[:2100], "Short."):
            fitted = backend.fit(SELF_RATING, context=context, question="Why do corals bleach?")
            assert fitted == local_backend.fit(SELF_RATING, context=context, question="Why do corals bleach?")
            assert backend.count_tokens(fitted) == local_backend.count_tokens(fitted)
        assert backend.count_tokens(LONG) == local_backend.count_tokens(LONG) > 512


def test_max_input_tokens_alone_cuts_the_context_by_an_estimate(served):
    head = SELF_RATING.render(context="", question="Why?")
    with open_backend("openai", NAME, base_url=served.url, max_input_tokens=300) as backend:
        fitted = backend.fit(SELF_RATING, context=LONG, question="Why?")
        # 4 characters a token: the template and question take ceil(len(head) / 4), the context the rest.
        assert fitted == head + LONG[:4 * (300 - math.ceil(len(head) / 4))]
        assert backend.count_tokens(fitted) == 300
        assert backend.fit(SELF_RATING, context="Short.", question="Why?") == head + "Short."
    with open_backend("openai", NAME, base_url=served.url) as backend:  # neither: prompts go as they are
        assert backend.max_input_tokens is None
        assert backend.fit(SELF_RATING, context=LONG, question="Why?") == SELF_RATING.render(context=LONG,
                                                                                             question="Why?")


def test_options_the_backend_lacks_are_refused():
    with pytest.raises(BackendError, match="backend 'openai' takes no --device"):
        open_backend("openai", NAME, base_url=CLOSED, device="cpu")


def test_a_server_that_is_not_there_is_one_line(workspace, tmp_path):
    line = _one_line_error(grade(workspace, tmp_path, "--backend", "openai", "--base-url", CLOSED, "--model", NAME,
                                 "--max-retries", "0"))
    assert line.startswith(f"Error: cannot reach {CLOSED} for model {NAME}")


@pytest.mark.slow
def test_the_python_api_passes_max_input_tokens_and_prompts_go_cut(served, workspace, tmp_path):
    from exampp.api.grade import GradeJob

    job = GradeJob.configure(workspace=tmp_path, runs=(str(workspace / "runs"),), grader="qa",
                             corpus=str(workspace / "passages.jsonl"), bank=str(workspace / "questions.jsonl"),
                             backend="openai", model=NAME, base_url=served.url, max_input_tokens=40, progress=False)
    result = job.run()
    assert result.usage.requests == PAIRS
    expected = set()
    for qid, pid, question_id in prompt_pairs().values():
        question = next(text for _, q, text, _ in QUESTIONS if q == question_id)
        head = QUESTION_ANSWERING.render(context="", question=question)
        expected.add(QUESTION_ANSWERING.render(context=PASSAGES[pid][:4 * (40 - math.ceil(len(head) / 4))],
                                               question=question))
    assert sorted(served.prompts()) == sorted(expected)
    whole = {QUESTION_ANSWERING.render(context=PASSAGES[pid], question=text)
             for qid, pid, question_id in prompt_pairs().values() for _, q, text, _ in QUESTIONS if q == question_id}
    assert len(expected - whole) == 12  # all but the pairs of "Sailors tie knots." were cut


# --- what a grade is filed under -----------------------------------------------------------------


@pytest.mark.slow
def test_grades_of_cut_passages_are_another_judges_and_the_cut_is_reported(served, workspace, tmp_path):
    cut = grade(workspace, tmp_path, "--grader", "self-rating", *served_args(served, "--max-input-tokens", "160"))
    assert cut.exit_code == 0, cut.output
    pairs, lost = 0, 0  # what 4 characters a token leaves of each prompt, counted as the backend counts
    for prompt, (_, pid, question_id) in prompt_pairs().items():
        question = next(text for _, q, text, _ in QUESTIONS if q == question_id)
        head = SELF_RATING.render(context="", question=question)
        kept = SELF_RATING.render(context=PASSAGES[pid][:4 * (160 - math.ceil(len(head) / 4))], question=question)
        if kept != prompt:
            pairs, lost = pairs + 1, lost + math.ceil(len(prompt) / 4) - math.ceil(len(kept) / 4)
    assert 0 < pairs < PAIRS and f"{PAIRS} pairs: {PAIRS} new pairs graded" in cut.output
    assert f", {pairs} graded with the passage cut to fit the judge's input ({lost} tokens cut)" in cut.output
    assert method_ids(tmp_path) == [f"self-rating|{NAME}+chat+max_input_chars=640|self-rating@v1"]
    served.reset()
    whole = grade(workspace, tmp_path, "--grader", "self-rating", *served_args(served))
    assert whole.exit_code == 0, whole.output
    # Not one grade of the cut run is reused: every pair is asked again, with its passage whole.
    assert f"{PAIRS} pairs: {PAIRS} new pairs graded" in whole.output and "passage cut" not in whole.output
    assert sorted(served.prompts()) == sorted(prompt_pairs())
    assert sorted(method_ids(tmp_path)) == [f"self-rating|{NAME}+chat+max_input_chars=640|self-rating@v1",
                                           f"self-rating|{NAME}+chat|self-rating@v1"]


@pytest.mark.slow
def test_an_input_length_other_than_the_models_own_is_named_in_the_judge(served, judge_dir):
    def name(**options) -> str:
        with open_backend("openai", NAME, base_url=served.url, **options) as backend:
            return backend.name

    # The tokenizer's own length cuts as the local backend cuts: the same judge (the hf backend's name has no mark).
    assert name(tokenizer=str(judge_dir)) == name(tokenizer=str(judge_dir), max_input_tokens=512) == f"{NAME}+chat"
    assert name(tokenizer=str(judge_dir), max_input_tokens=100) == f"{NAME}+chat+max_input_tokens=100"
    # Without a tokenizer tokens are estimated, so the cut falls at 4 characters a token.
    assert name(endpoint="completions", max_input_tokens=300) == f"{NAME}+max_input_chars=1200"
    assert name(endpoint="completions") == NAME  # nothing cut: the name of every earlier store


def test_without_the_sdk_the_backend_names_the_extra_to_install(monkeypatch):
    import exampp.llm

    monkeypatch.setitem(sys.modules, "openai", None)  # import openai fails, as where the extra is not installed
    monkeypatch.delitem(sys.modules, "exampp.llm.backends.openai")
    for name in [m for m in sys.modules if m.startswith("exampp.llm.openai")]:  # the package, imported anew
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(exampp.llm, "openai", exampp.llm.openai)  # the package's attribute, rebound on importing
    with pytest.raises(BackendError) as caught:
        open_backend("openai", "judge", base_url="http://127.0.0.1:9/v1")
    assert str(caught.value) == ("backend 'openai' needs the package openai: install the exampp extra 'openai' (pip "
                                 "install 'exampp[openai]', or scripts/setup.sh ...,openai) or the package itself")


def test_every_backend_names_an_extra_of_the_package():
    import tomllib

    from exampp.llm.backend import BACKEND_EXTRAS, backend_names

    extras = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert sorted(BACKEND_EXTRAS) == backend_names()
    assert set(BACKEND_EXTRAS.values()) <= set(extras)


@pytest.mark.slow
def test_an_unreachable_server_fails_in_seconds_saying_what_it_tried_and_that_it_retries(capsys):
    start = time.perf_counter()
    with pytest.raises(BackendError) as raised:
        open_backend("openai", NAME, base_url=CLOSED)  # --max-retries 5: the SDK's backoff took 16 s in silence
    assert time.perf_counter() - start < 8
    assert str(raised.value).startswith(f"cannot reach {CLOSED} for model {NAME}")
    assert "(3 attempts; is the server running there? --base-url)" in str(raised.value)
    said = capsys.readouterr().err.splitlines()
    assert [line.split(": ")[0] for line in said] == [f"cannot reach {CLOSED}"] * 2
    assert (said[0].endswith("retrying in 0.5 s (1 of 3 attempts)")
            and said[1].endswith("retrying in 1 s (2 of 3 attempts)"))
