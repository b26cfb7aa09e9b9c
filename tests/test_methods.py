"""Grading methods as value objects: names parse to methods and back, parameters are checked,
each method declares its scale, τ, needs and capabilities, and the store's method ids map back
to methods (so τ defaults come from the stored method)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from exampp.cli import main
from exampp.collection.grades import Method
from exampp.collection.questions import Question
from exampp.grading.method import MethodError, split_name
from exampp.grading.registry import ALIASES, default_tau, method_names, parse_method, stored_method
from exampp.llm.backend import Backend, BackendError, Capability, Usage

NAMES = {
    "self-rating": ("SelfRating", {"prompt": "self-rating", "fast": True}, "self-rating@v1", 5, 4.0),
    "self-rating(fast=false)": ("SelfRating", {"prompt": "self-rating", "fast": False}, "self-rating@v1", 5, 4.0),
    "qa": ("QA", {"verify": "string"}, "qa@v1+string@v1", 1, 1.0),
    "qa(verify=llm)": ("QA", {"verify": "llm"}, "qa@v1+verify@v1", 1, 1.0),
    "qa-extractive": ("ExtractiveQA", {}, "extractive-squad2@v1+string@v1", 1, 1.0),
    "multiple-choice": ("MultipleChoice", {}, "multiple-choice@v1", 1, 1.0),
    "direct:thomas": ("Direct", {"prompt": "thomas"}, "direct-thomas@v1", 2, 1.0),
    "direct:sun_few": ("Direct", {"prompt": "sun_few"}, "direct-sun-few@v1", 1, 1.0),
    "embedding(thresholds=0.1/0.2/0.3/0.4/0.9)": (
        "Embedding", {"thresholds": (0.1, 0.2, 0.3, 0.4, 0.9)}, "cosine@v1:0.1,0.2,0.3,0.4,0.9", 5, 4.0),
}


@pytest.mark.parametrize("name", NAMES)
def test_names_parse_to_methods_and_back(name):
    cls, params, prompt_id, top, tau = NAMES[name]
    method = parse_method(name)
    assert type(method).__name__ == cls
    assert {f.name: getattr(method, f.name) for f in method.parameters()} == params
    assert (method.prompt_id, method.grades[-1], method.tau) == (prompt_id, top, tau)
    assert str(method) == name and parse_method(str(method)) == method  # canonical: defaults left out
    assert hash(method) == hash(parse_method(name))  # a value object: usable as a key


def test_spelling_is_forgiving_where_it_is_unambiguous():
    assert parse_method(" qa( verify = llm ) ") == parse_method("qa(verify=llm)")
    assert parse_method("self-rating(fast=No)") == parse_method("self-rating(fast=false)")
    assert parse_method("direct(prompt=helm)") == parse_method("direct:helm")
    assert parse_method("qa()") == parse_method("qa")
    assert {old: str(parse_method(old)) for old in ALIASES} == {"qa-llm": "qa(verify=llm)"}


@pytest.mark.parametrize("name, message", [
    ("nope", "unknown grading method 'nope'; choose one of citation-support, direct, embedding, injection-check, "
             "multiple-choice, "
             "nugget-cosine, nugget-embedding, nugget-support, qa, qa-extractive, self-rating "
             "(exampp grade --list-graders)"),
    ("qa(verify=regex)", "qa(verify=regex): verify='regex' is not one of string, llm"),
    ("qa(verifier=llm)", "qa(verifier=llm): unknown parameter(s) verifier of 'qa' (has: verify)"),
    ("qa(verify)", "qa(verify): 'verify' is not key=value"),
    ("qa(verify=llm,verify=string)", "qa(verify=llm,verify=string): verify given twice"),
    ("qa:llm", "qa:llm: method 'qa' takes no ':' value"),
    ("direct", "direct: method 'direct' needs prompt"),
    ("direct:sun(prompt=helm)", "direct:sun(prompt=helm): prompt given twice"),
    ("self-rating(fast=maybe)", "self-rating(fast=maybe): fast='maybe' is not true or false"),
    ("embedding(thresholds=0.5/0.4/0.6/0.7/0.8)", "embedding(thresholds=0.5/0.4/0.6/0.7/0.8): thresholds must be "
                                                  "in ascending order: (0.5, 0.4, 0.6, 0.7, 0.8)"),
    ("embedding(thresholds=a)", "embedding(thresholds=a): thresholds='a': could not convert string to float: 'a'"),
    ("embedding(thresholds=0.1/0.2)", "embedding(thresholds=0.1/0.2): need 5 thresholds (grades 1-5), got 2"),
    ("Self Rating", "'Self Rating' is not a grading method name: name[:value][(key=value, ...)]"),
])
def test_bad_names_say_what_is_wrong(name, message):
    with pytest.raises(MethodError) as error:
        parse_method(name)
    assert str(error.value) == message


def test_split_name():
    assert split_name("direct:thomas(x=1, y=a/b)") == ("direct", "thomas", {"x": "1", "y": "a/b"})
    assert split_name("self-rating") == ("self-rating", None, {})


def test_what_a_question_must_carry():
    bare = Question("q", "q/1", "Why?")
    keyed = Question("q", "q/2", "Why?", answers=("because",))
    choices = Question("q", "q/3", "Which?", choices=("a", "b"), correct_choice=0)
    unkeyed_choices = Question("q", "q/4", "Which?", choices=("a", "b"))
    usable = {name: [parse_method(name).usable(q) for q in (bare, keyed, choices, unkeyed_choices)]
              for name in ("self-rating", "qa", "qa-extractive", "multiple-choice")}
    assert usable == {"self-rating": [True] * 4, "qa": [False, True, False, False],
                      "qa-extractive": [False, True, False, False], "multiple-choice": [False, False, True, False]}


@pytest.mark.parametrize("method_id, tau", [
    ("self-rating|google/flan-t5-large|self-rating@v1", 4.0),
    # grades imported from the reference tool keep its prompt class as the prompt part
    ("self-rating|google/flan-t5-large|QuestionSelfRatedUnanswerablePromptWithChoices", 4.0),
    ("qa|google/flan-t5-large|qa@v1+string@v1", 1.0),
    ("qa|sjrhuschlee/flan-t5-large-squad2|extractive-squad2@v1+string@v1", 1.0),
    ("multiple-choice|m|multiple-choice@v1", 1.0),
    ("direct:thomas|m|direct-thomas@v1", 1.0),
    ("embedding|sentence-transformers/all-MiniLM-L6-v2|cosine@v1:0.5234,0.5234,0.5234,0.5325,0.7149", 4.0),
])
def test_store_method_ids_map_back_to_methods_and_their_tau(method_id, tau):
    assert stored_method(method_id) is not None
    assert default_tau(method_id) == tau


def test_tau_of_a_method_unknown_here_follows_its_grades():
    assert stored_method("mine|m|v1") is None
    assert default_tau("mine|m|v1", [0.0, 1.0, 1.0]) == 1.0
    assert default_tau("mine|m|v1", [0.0, 3.0]) == default_tau("mine|m|v1") == 4.0


class _TextOnly(Backend):
    name, capabilities = "text-only", frozenset({Capability.GENERATE})

    def __init__(self):
        self.usage = Usage()


def test_a_backend_lacking_a_capability_is_refused_before_grading():
    with pytest.raises(BackendError) as error:
        parse_method("multiple-choice").bind(_TextOnly())
    assert str(error.value) == ("method multiple-choice needs a backend that can continuation-loglik; backend "
                                "_TextOnly (text-only) offers: generate")
    with pytest.raises(BackendError, match="method qa\\(verify=llm\\) needs a backend that can label-logprobs"):
        parse_method("qa(verify=llm)").bind(_TextOnly())
    grader = parse_method("self-rating").bind(_TextOnly())  # no label log-probabilities: generation
    assert grader.method == Method("self-rating", "text-only", "self-rating@v1")


def test_a_grader_closes_only_the_backend_it_opened(monkeypatch):
    from exampp.grading.registry import make_grader
    from exampp.llm.backend import BackendSpec

    class Closing(_TextOnly):
        closed = 0

        def close(self):
            self.closed += 1

    given, opened_here = Closing(), Closing()
    with make_grader("self-rating", given) as grader:
        assert grader.backend is given
    assert given.closed == 0  # the caller's to close
    monkeypatch.setattr(BackendSpec, "open", lambda spec: opened_here)
    with make_grader("self-rating", BackendSpec("openai", "m")) as grader:
        assert grader.backend is opened_here
    assert opened_here.closed == 1


def test_list_graders_prints_every_method_with_its_parameters():
    result = CliRunner().invoke(main, ["grade", "--list-graders"])
    assert result.exit_code == 0
    heads = [line.split("  ")[0] for line in result.output.splitlines() if line and not line.startswith(" ")]
    assert heads[:-1] == method_names() and heads[-1] == "aliases: qa-llm = qa(verify=llm)"
    assert "qa  (grades 0-1, default tau 1; backend hf; needs answers)" in result.output
    assert "    verify=... {string|llm} [default: string]: how the extracted answer is checked" in result.output
    assert "    direct:PROMPT {thomas|faggiolib|helm|sun|faggiolib_few|sun_few}: the baseline's prompt" in result.output


# --- stores written before methods were value objects ------------------------------------------

OLD_IDS = {  # the ids the grader classes of commit e1d8380 wrote, for a judge named M
    "self-rating": "self-rating|M|self-rating@v1",
    "qa": "qa|M|qa@v1+string@v1",
    "qa-llm": "qa|M|qa@v1+verify@v1",
    "qa-extractive": "qa|M|extractive-squad2@v1+string@v1",
    "multiple-choice": "multiple-choice|M|multiple-choice@v1",
    "direct:thomas": "direct:thomas|M|direct-thomas@v1",
    "direct:faggiolib_few": "direct:faggiolib_few|M|direct-faggiolib-few@v1",
    "embedding": "embedding|M|cosine@v1:0.5234,0.5234,0.5234,0.5325,0.7149",
}


@pytest.mark.parametrize("name", OLD_IDS)
def test_method_ids_are_those_earlier_versions_wrote(name):
    method = parse_method(name)
    assert method.method_id("M").method_id == OLD_IDS[name]


def test_a_store_written_before_the_change_is_read_and_reused(tmp_path):
    """A grade store the embedding grader of commit e1d8380 wrote (`exampp grade runs/ --depth 2`
    on the example collection): today's code reuses every grade and writes the same qrels."""
    pytest.importorskip("sentence_transformers")
    import shutil
    from pathlib import Path

    data = Path(__file__).parent / "data"
    examples = Path(__file__).resolve().parents[1] / "examples"  # the example collection
    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copy(data / "grades-e1d8380-embedding-depth2.sqlite", ws / "grades.sqlite")
    result = CliRunner().invoke(main, ["grade", str(examples / "runs"), "--config", str(examples / "exampp.toml"),
                                       "-w", str(ws), "--depth", "2", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "0 new pairs graded" in result.output and ", 0 reused" not in result.output
    assert (ws / "qrels" / "exam.qrels").read_text() == (data / "exam-e1d8380-embedding-depth2.qrels").read_text()
    cover = [CliRunner().invoke(main, ["cover", str(examples / "runs"), "-w", str(ws), "--depth", "2",
                                       "--format", "tsv", *tau]) for tau in ([], ["--tau", "4"], ["--tau", "1"])]
    assert [c.exit_code for c in cover] == [0, 0, 0]
    assert cover[0].output == cover[1].output != cover[2].output  # the stored method's tau: 4, embedding grades 0-5
    assert cover[0].output.splitlines()[1].startswith("dense-like\t0.4833")


def test_tau_of_imported_grades_of_a_prompt_class_unknown_here_follows_their_grades(tmp_path):
    """The reference tool's FagB direct grades are filed as direct:fagb, which is no prompt here: their
    0/1 grades are read at tau 1 (all runs would score 0 at 4)."""
    from exampp.api.workspace import stored_grades
    from exampp.collection.grades import Grade
    from exampp.stores.grade_store import GradeStore

    method = "direct:fagb|google/flan-t5-large|FagB"
    with GradeStore(tmp_path / "grades.sqlite") as store:
        passages = store.register_passages("q1", {f"p{i}": f"passage {i}" for i in range(4)})
        [question] = store.register_questions([("q1", "direct", "the title")]).values()
        store.put_many((Grade("q1", f"p{i}", "direct", float(i % 2), method), passages[f"p{i}"], question)
                       for i in range(4))
    assert stored_method(method) is None
    assert stored_grades(tmp_path).default_tau == 1.0


def test_a_backend_lacking_a_capability_is_refused_before_it_is_opened():
    from exampp.grading.registry import make_grader

    # Port 9 (discard) would fail or hang a connection: the refusal comes before any.
    with pytest.raises(BackendError, match=r"^method multiple-choice needs a backend that can continuation-loglik; "
                                           r"backend 'openai' offers: generate, label-logprobs$"):
        make_grader("multiple-choice", "openai", model="m", base_url="http://127.0.0.1:9/v1")


@pytest.mark.slow
def test_finding_the_methods_imports_no_scipy():
    # Every grading command finds the methods first; scipy (half a second to import) is for the analyses.
    import subprocess
    import sys

    code = "import sys; from exampp.grading.registry import methods; methods(); print('scipy' in sys.modules)"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout == "False\n"
