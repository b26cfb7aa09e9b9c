"""`exampp nuggets assign` and the nugget-support method: the AutoNuggetizer's prompts, sent through the
real ``openai`` SDK to a loopback server with canned replies, compared with the ``nuggetizer`` package's
own prompts; label reading, asking again and counting what stays unread; the track's format written;
a second run asking nothing; responses with a bank; bad inputs as one line."""
from __future__ import annotations

import ast
import gzip
import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from nuggetizer.core.types import NuggetAssignMode, ScoredNugget
from nuggetizer.models.nuggetizer import Nuggetizer

import cli_results
from exampp.api.nugget_assign import NuggetAssignJob
from exampp.cli import main
from exampp.collection.questions import Question
from exampp.errors import InputError
from exampp.formats.nugget_assignments import read_assignments
from exampp.grading.base import Pair
from exampp.grading.method import MethodError
from exampp.grading.methods.nugget_support import (
    KEPT_CHARS,
    SYSTEM,
    UNPARSED,
    NuggetSupport,
    assign_conversation,
    max_new_tokens,
    parse_labels,
)
from exampp.grading.registry import parse_method
from exampp.llm.backend import BackendSpec
from exampp.stores.grade_store import GradeStore
from exampp.testing.openai_server import OpenAIServer, Seen

NAME = "judge"
BEES = "what do bees make"
EVEREST = "how tall is everest"
# T1 has 12 nuggets (a window of 10 and one of 2), T2 has 3.
T1 = [f"bees make {thing}" for thing in ("honey", "wax", "propolis", "royal jelly", "pollen loads", "noise",
                                          "hives", "queens", "drones", "combs", "maps", "dances")]
T2 = ["everest is 8849 m tall", "everest is in nepal", "sherpas climb everest"]
ANSWERS = {  # (run, topic) -> answer text
    ("runA", "T1"): "Bees make honey and bees make wax. They also make propolis and they dance.",
    ("runB", "T1"): "bees make royal jelly. bees make maps? no. bees are insects",
    ("runA", "T2"): "everest is 8849 m tall and lies in nepal.",
    ("runB", "T2"): "",
}
QUERIES = {"T1": BEES, "T2": EVEREST}


def nuggets_of(qid: str) -> list[dict]:
    texts = T1 if qid == "T1" else T2
    return [{"text": text, "importance": "vital" if i % 2 == 0 else "okay", "assignment": "support"}
            for i, text in enumerate(texts)]


def track_file(path: Path, answers=ANSWERS) -> Path:
    """A track assignment file (gzipped), its assignments all 'support' (ignored on reading)."""
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for (run, qid), text in answers.items():
            fh.write(json.dumps({"query": QUERIES[qid], "qid": qid, "nuggets": nuggets_of(qid), "run_id": run,
                                 "answer_text": text}) + "\n")
    return path


def expected_label(nugget: str, passage: str) -> str:
    """The canned judge: support when the nugget's text is in the passage, partial when its last word is."""
    if nugget.lower() in passage.lower():
        return "support"
    return "partial_support" if nugget.split()[-1].lower() in passage.lower() else "not_support"


_ASKED = re.compile(r"Passage: (.*)\nNugget List: (\[.*\])\nOnly return", re.DOTALL)


def asked(seen: Seen) -> tuple[str, list[str]]:
    """The passage and nuggets of a request (test code: the list is our own prompt's)."""
    passage, listed = _ASKED.search(seen.messages[-1]["content"]).groups()
    return passage, ast.literal_eval(listed)


class Judge:
    """Canned replies: the right labels in a format ``style`` chooses; ``bad`` answers garbage to the
    first ``bad`` requests of a window (counted per user message)."""

    def __init__(self) -> None:
        self.style = "list"
        self.bad: dict[str, int] = {}
        self.seen: dict[str, int] = {}

    def __call__(self, seen: Seen) -> str:
        passage, nuggets = asked(seen)
        labels = [expected_label(n, passage) for n in nuggets]
        content = seen.messages[-1]["content"]
        self.seen[content] = self.seen.get(content, 0) + 1
        if self.style == "garbage" or self.seen[content] <= self.bad.get(passage, 0):
            return "I think most of them are fine." + " blah" * 400
        if self.style == "surrogate":  # JSON carries a lone surrogate (as \ud800), which no UTF-8 store holds
            return "['support', '\ud800']"
        if self.style == "short":  # a label missing
            return str(labels[:-1]) if len(labels) > 1 else "[]"
        if self.style == "fenced":
            return "```python\n" + str([label.title() for label in labels]) + "\n```"
        return str(labels)


@pytest.fixture
def judge() -> Judge:
    return Judge()


@pytest.fixture
def server(judge):
    with OpenAIServer(name=NAME, reply=judge) as running:
        yield running


def served(server: OpenAIServer) -> BackendSpec:
    return BackendSpec("openai", NAME, {"base_url": server.url})


def cli(*args: str):
    return CliRunner().invoke(main, ["nuggets", "assign", *args, "--no-progress"])


def served_args(server: OpenAIServer) -> list[str]:
    return ["--backend", "openai", "--base-url", server.url, "--model", NAME]


def nuggetizer_messages(query: str, passage: str, nuggets: list[str], mode=NuggetAssignMode.SUPPORT_GRADE_3):
    """The package's own assignment prompt (its prompt builder only reads the mode)."""
    package = Nuggetizer.__new__(Nuggetizer)
    package.assigner_mode = mode
    return package._create_assign_prompt(query, passage, [ScoredNugget(text=n, importance="vital") for n in nuggets])


def expected_requests(window: int, mode=NuggetAssignMode.SUPPORT_GRADE_3) -> list[str]:
    """Every request nuggetizer sends for ANSWERS with this window (none for an empty answer), sorted."""
    requests = []
    for (_, qid), text in ANSWERS.items():
        texts = T1 if qid == "T1" else T2
        if text.strip():
            for start in range(0, len(texts), window):
                requests.append(nuggetizer_messages(QUERIES[qid], text, texts[start:start + window], mode))
    return sorted(json.dumps(messages) for messages in requests)


def sent(server: OpenAIServer) -> list[str]:
    return sorted(json.dumps(seen.messages) for seen in server.completions())


def assigned(path: Path) -> dict[tuple[str, str], list[str]]:
    return {(a.run_id, a.query_id): [n.assignment for n in a.nuggets] for a in read_assignments(path)}


def truth() -> dict[tuple[str, str], list[str]]:
    return {key: [expected_label(n, text) if text else "not_support" for n in (T1 if key[1] == "T1" else T2)]
            for key, text in ANSWERS.items()}


# --- the prompts are the package's ------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("method, window, mode", [
    ("nugget-support", 10, NuggetAssignMode.SUPPORT_GRADE_3),
    ("nugget-support(window=1)", 1, NuggetAssignMode.SUPPORT_GRADE_3),
    ("nugget-support(labels=2)", 10, NuggetAssignMode.SUPPORT_GRADE_2),
])
def test_requests_are_the_nuggetizers_own_prompts(tmp_path, server, method, window, mode):
    result = NuggetAssignJob(track_file(tmp_path / "in.jsonl.gz"), tmp_path / "out.jsonl", method=method,
                             backend=served(server), workspace=tmp_path, progress=False).run()
    assert sent(server) == expected_requests(window, mode)
    bodies = [seen.body for seen in server.completions()]
    assert {(b["temperature"], b["max_tokens"]) for b in bodies} == {(0.0, max_new_tokens(window))}
    assert result.usage.requests == len(bodies) == (5 if window == 10 else 2 * 12 + 3)
    if mode is NuggetAssignMode.SUPPORT_GRADE_3:
        assert assigned(tmp_path / "out.jsonl") == truth()


@pytest.mark.slow
def test_the_assign_command_writes_the_tracks_format_and_a_second_run_asks_nothing(tmp_path, server):
    source = track_file(tmp_path / "in.jsonl.gz")
    first = cli(str(source), "-o", str(tmp_path / "out.jsonl.gz"), "-w", str(tmp_path / "ws"), *served_args(server))
    assert first.exit_code == 0, first.output
    assert first.stderr.strip() == (f"4 answers, 30 nuggets assigned (30 graded now, 0 from the store), 5 requests, 0 "
                                    f"nuggets unparsed (graded not_support); wrote {tmp_path / 'out.jsonl.gz'}")
    lines = [json.loads(line) for line in gzip.open(tmp_path / "out.jsonl.gz", "rt", encoding="utf-8")]
    assert lines[0] == {"query": BEES, "qid": "T1", "run_id": "runA", "answer_text": ANSWERS["runA", "T1"],
                        "response_length": 14,
                        "nuggets": [{"text": n["text"], "importance": n["importance"],
                                     "assignment": expected_label(n["text"], ANSWERS["runA", "T1"])}
                                    for n in nuggets_of("T1")]}
    assert assigned(tmp_path / "out.jsonl.gz") == truth()
    assert (tmp_path / "ws" / "grades.sqlite").is_file()
    server.reset()
    again = cli(str(source), "-o", str(tmp_path / "again.jsonl.gz"), "-w", str(tmp_path / "ws"), *served_args(server))
    assert again.exit_code == 0, again.output
    assert server.completions() == []
    assert "(0 graded now, 30 from the store), 0 requests" in again.stderr
    assert assigned(tmp_path / "again.jsonl.gz") == truth()


@pytest.mark.slow
@pytest.mark.parametrize("method, window", [("nugget-support", 10), ("nugget-support(window=4)", 4)])
def test_chunks_smaller_than_an_answer_keep_its_nuggets_together_in_the_packages_own_windows(
        tmp_path, server, method, window):
    """Chunks of 4 pairs: the runner still hands an answer's nuggets over together, so each request is
    one of the windows nuggetizer itself would send (the topic's nuggets, ``window`` at a time, in order)."""
    result = NuggetAssignJob(track_file(tmp_path / "in.jsonl.gz"), tmp_path / "out.jsonl", backend=served(server),
                             workspace=tmp_path, chunk_size=4, progress=False, method=method).run()
    sent = sorted((passage, tuple(nuggets)) for passage, nuggets in map(asked, server.completions()))
    texts = {qid: [n["text"] for n in nuggets_of(qid)] for qid in QUERIES}
    package = sorted((text, tuple(texts[qid][start:start + window]))
                     for (_, qid), text in ANSWERS.items() if text.strip()
                     for start in range(0, len(texts[qid]), window))
    assert sent == package
    assert result.summary.graded == 30 and assigned(tmp_path / "out.jsonl") == truth()



@pytest.mark.slow
def test_a_stopped_run_keeps_its_grades_and_the_next_asks_only_the_rest(tmp_path, server):
    source = track_file(tmp_path / "in.jsonl.gz")
    out = tmp_path / "out.jsonl"
    stopped = cli(str(source), "-o", str(out), "-w", str(tmp_path), "--chunk-size", "4", "--max-requests", "3",
                  *served_args(server))
    assert one_line_error(stopped).startswith("request budget spent: ")
    assert not out.exists()
    with GradeStore(tmp_path / "grades.sqlite") as store:
        kept = {(row.passage_id, row.question_id) for row in store.grades().itertuples()}
    assert 0 < len(kept) < 30
    first = {json.dumps(asked(seen)) for seen in server.completions()}
    server.reset()
    result = NuggetAssignJob(source, out, backend=served(server), workspace=tmp_path, chunk_size=4,
                             progress=False).run()
    assert (result.summary.reused, result.summary.graded) == (len(kept), 30 - len(kept))
    assert not first & {json.dumps(asked(seen)) for seen in server.completions()}
    assert assigned(out) == truth()

# --- reading the judge's replies ----------------------------------------------------------------------


@pytest.mark.parametrize("reply, count, labels", [
    ("['support', 'not_support', 'partial_support']", 3, [2, 0, 1]),
    ('```python\n["Support", "NOT_SUPPORT"]\n```', 2, [2, 0]),
    ("Labels: [not supported, partially-supported] (see [1])", 2, [0, 1]),
    ("support", 1, [2]),
    ("['support', 'support']", 3, None),  # a label missing
    ("['unsupported']", 1, None),  # no label word
    ("The passage does not mention it.", 1, None),
    ("", 1, None),
])
def test_labels_are_read_in_order_without_evaluating_the_reply(reply, count, labels):
    assert parse_labels(reply, count) == labels


def test_fenced_title_case_replies_are_read(tmp_path, server, judge):
    judge.style = "fenced"
    NuggetAssignJob(track_file(tmp_path / "in.jsonl.gz"), tmp_path / "out.jsonl", backend=served(server),
                    workspace=tmp_path, progress=False).run()
    assert assigned(tmp_path / "out.jsonl") == truth()


def test_a_reply_without_every_label_is_asked_again_at_temperature_0_2(tmp_path, server, judge):
    judge.bad = {ANSWERS["runA", "T2"]: 2}  # two unreadable replies, then the labels
    result = NuggetAssignJob(track_file(tmp_path / "in.jsonl.gz"), tmp_path / "out.jsonl", backend=served(server),
                             workspace=tmp_path, progress=False).run()
    everest = [seen.body["temperature"] for seen in server.completions() if asked(seen)[0] == ANSWERS["runA", "T2"]]
    assert everest == [0.0, 0.2, 0.2]
    assert result.unparsed == 0 and result.usage.requests == 5 + 2
    assert assigned(tmp_path / "out.jsonl") == truth()


def test_what_stays_unread_is_not_support_counted_and_kept_for_inspection(tmp_path, server, judge):
    judge.style = "short"
    result = NuggetAssignJob(track_file(tmp_path / "in.jsonl.gz"), tmp_path / "out.jsonl",
                             method="nugget-support(attempts=2)", backend=served(server), workspace=tmp_path,
                             progress=False).run()
    assert result.usage.requests == 2 * 5  # every window asked twice
    assert result.unparsed == 27  # the empty answer's 3 nuggets are not_support without a request
    assert all(labels == ["not_support"] * len(labels) for labels in assigned(tmp_path / "out.jsonl").values())
    with GradeStore(tmp_path / "grades.sqlite") as store:
        answers = set(store.grades(result.method_id)["answer"])
    short = str([expected_label(n, ANSWERS["runA", "T2"]) for n in T2][:-1])
    assert UNPARSED + short in answers and "not_support" in answers  # the empty answer's


def test_a_huge_garbage_reply_is_kept_cut(tmp_path, server, judge):
    judge.style = "garbage"
    result = NuggetAssignJob(track_file(tmp_path / "in.jsonl.gz"), tmp_path / "out.jsonl",
                             method="nugget-support(attempts=1)", backend=served(server), workspace=tmp_path,
                             progress=False).run()
    assert result.unparsed == 27 and result.usage.requests == 5
    with GradeStore(tmp_path / "grades.sqlite") as store:
        kept = {a for a in store.grades(result.method_id)["answer"] if a.startswith(UNPARSED)}
    assert kept == {UNPARSED + ("I think most of them are fine." + " blah" * 400)[:KEPT_CHARS]}



def test_a_reply_with_a_lone_surrogate_is_kept_readable(tmp_path, server, judge):
    judge.style = "surrogate"
    result = NuggetAssignJob(track_file(tmp_path / "in.jsonl.gz"), tmp_path / "out.jsonl",
                             method="nugget-support(attempts=1)", backend=served(server), workspace=tmp_path,
                             progress=False).run()
    assert result.unparsed == 27  # one label, and no window of one nugget
    with GradeStore(tmp_path / "grades.sqlite") as store:
        kept = {a for a in store.grades(result.method_id)["answer"] if a.startswith(UNPARSED)}
    assert kept == {UNPARSED + "['support', '\ufffd']"}

# --- responses and a bank ----------------------------------------------------------------------------


def bank_file(path: Path, *, query_text: bool = True, importance: bool = True) -> Path:
    """An exampp bank of T2's nuggets (not T1's)."""
    lines = [{"query_id": "T2", "text": text, "info": {"importance": "vital"} if importance or i else {},
              **({"query_text": EVEREST} if query_text else {})} for i, text in enumerate(T2)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def responses_file(path: Path) -> Path:
    lines = [{"run_id": run, "topic_id": qid, "answer": [{"text": text, "citations": []}]}
             for (run, qid), text in ANSWERS.items()]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_responses_take_their_nuggets_from_the_bank(tmp_path, server):
    result = cli(str(responses_file(tmp_path / "responses.jsonl")), "--bank", str(bank_file(tmp_path / "bank.jsonl")),
                 "-o", str(tmp_path / "out.jsonl"), "-w", str(tmp_path), *served_args(server))
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("2 answers, 6 nuggets assigned (6 graded now, 0 from the store), 1 requests, 0 "
                                    "nuggets unparsed (graded not_support); 2 answers left out: their topic has no "
                                    "nuggets; wrote ")
    assert sent(server) == [json.dumps(nuggetizer_messages(EVEREST, ANSWERS["runA", "T2"], T2))]
    written = read_assignments(tmp_path / "out.jsonl")
    assert [(a.run_id, a.query, [n.importance for n in a.nuggets]) for a in written] == \
        [("runA", EVEREST, ["vital"] * 3), ("runB", EVEREST, ["vital"] * 3)]
    assert assigned(tmp_path / "out.jsonl") == {key: labels for key, labels in truth().items() if key[1] == "T2"}


def test_a_folder_of_answer_files_is_read_whole(tmp_path, server):
    folder = tmp_path / "answers"
    folder.mkdir()
    track_file(folder / "a.jsonl.gz", {key: text for key, text in ANSWERS.items() if key[0] == "runA"})
    track_file(folder / "b.jsonl.gz", {key: text for key, text in ANSWERS.items() if key[0] == "runB"})
    NuggetAssignJob(folder, tmp_path / "out.jsonl", backend=served(server), workspace=tmp_path, progress=False).run()
    assert assigned(tmp_path / "out.jsonl") == truth()
    track_file(folder / "c.jsonl.gz", {("runA", "T2"): "again"})
    repeated = r"c\.jsonl\.gz:1: run 'runA' already answered topic 'T2' \(in .*a\.jsonl\.gz\)"
    with pytest.raises(InputError, match=repeated):
        NuggetAssignJob(folder, tmp_path / "out.jsonl", backend=served(server), workspace=tmp_path,
                        progress=False).run()


# --- bad input: one line, nothing written ---------------------------------------------------------------


def one_line_error(result) -> str:
    return cli_results.one_line_error(result).removeprefix("Error: ")


def test_bad_inputs_are_one_line(tmp_path, server):
    responses = str(responses_file(tmp_path / "responses.jsonl"))
    out = str(tmp_path / "out.jsonl")
    assert one_line_error(cli(responses, "-o", out, *served_args(server))) == \
        f"{responses}: a responses file has no nuggets: give the nugget bank (--bank)"
    bank = bank_file(tmp_path / "bank.jsonl", importance=False)
    assert one_line_error(cli(responses, "--bank", str(bank), "-o", out, *served_args(server))) == \
        f"{bank}:1: question 'everest is 8849 m tall' is no nugget: its info.importance is null, not one of vital, okay"
    bank = bank_file(tmp_path / "bank.jsonl", query_text=False)
    assert one_line_error(cli(responses, "--bank", str(bank), "-o", out, *served_args(server))) == \
        "method nugget-support cannot grade the nuggets of topic 'T2': no query text for it (the assignment " \
        "file's 'query', or the bank's query texts, give it)"
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps({"qid": "T1", "run_id": "r", "answer_text": "x", "nuggets": [{"text": "n"}]}) + "\n")
    assert one_line_error(cli(str(broken), "-o", out, *served_args(server))) == \
        f"{broken}:1: nuggets[0].importance is null, not one of vital, okay"
    assert one_line_error(cli(str(track_file(tmp_path / "in.jsonl.gz")), "-o", out, "--method", "self-rating",
                              *served_args(server))) == \
        "method self-rating cannot assign nuggets: that needs a method grading an answer against each nugget 0-2 " \
        "(not_support, partial_support, support), e.g. nugget-support"
    assert server.completions() == [] and not Path(out).exists()


def test_bad_method_parameters_are_refused(tmp_path):
    with pytest.raises(MethodError, match="window must be at least 1"):
        parse_method("nugget-support(window=0)")
    result = cli(str(track_file(tmp_path / "in.jsonl.gz")), "-o", "y", "--method", "nugget-support(labels=4)")
    assert result.exit_code == 2 and "labels='4' is not one of 2, 3" in result.output



# --- other backends: a model without a chat format, and the offline method ---------------------------


@pytest.mark.slow
def test_a_model_without_chat_format_reads_both_turns_as_one_text_its_passage_cut_to_fit(tiny_t5_dir):
    """FLAN-T5 has no chat template: the system and user turns go as one text, a blank line apart,
    fitted to its 512 tokens by cutting the passage only, and the model reads all of it."""
    from exampp.llm.backends.hf import HFBackend
    from exampp.llm.prompt import as_text

    backend = HFBackend.load(str(tiny_t5_dir), device="cpu")
    passage = "Bees make honey in hives. " * 300
    text = as_text(assign_conversation(backend, BEES, passage, T1[:10]))
    assert not backend.chat and backend.max_input_tokens == 512 and backend.usage.cut_contexts == 1
    assert text.startswith(SYSTEM + "\n\nBased on the query and passage, label each of the 10 nuggets")
    assert text.endswith(f"\nNugget List: {T1[:10]}\nOnly return the list of labels (List[str]). Do not explain."
                         "\nLabels:")
    fitted = backend.count_tokens(text)
    assert 500 <= fitted <= 512
    question = Question("T1", "T1/n", T1[0], info={"query": BEES})
    judgments = NuggetSupport(window=10, attempts=1).grade(backend, [Pair("T1", "runA", passage, question)])
    assert backend.usage.requests == 1 and backend.usage.prompt_tokens == backend.count_tokens(
        as_text(assign_conversation(backend, BEES, passage, T1[:1])))  # read whole: nothing cut beyond the fit
    assert len(judgments) == 1 and judgments[0].grade in (0.0, 1.0, 2.0)


@pytest.mark.slow
def test_the_offline_method_assigns_through_the_same_command_without_a_server(tmp_path):
    """nugget-embedding opens its own default backend (embedding): no GENERATE, no requests sent."""
    pytest.importorskip("sentence_transformers", reason="the embedding backend needs sentence-transformers")
    from exampp.api.nugget_assign import nugget_pairs, read_answers
    from exampp.llm.backend import open_backend

    source = track_file(tmp_path / "in.jsonl.gz")
    result = cli(str(source), "-o", str(tmp_path / "out.jsonl"), "--method", "nugget-embedding", "-w", str(tmp_path))
    assert result.exit_code == 0, result.output
    answers, _ = read_answers(source)
    with open_backend("embedding") as backend:
        grades = [j.grade for j in parse_method("nugget-embedding").grade(backend, nugget_pairs(answers))]
    written = [n.grade for a in read_assignments(tmp_path / "out.jsonl") for n in a.nuggets]
    assert written == grades
    assert "(30 graded now, 0 from the store)" in result.stderr and "0 nuggets unparsed" in result.stderr


def test_answers_from_a_fifo_are_refused_in_one_line_rather_than_read_without_their_first_line(tmp_path):
    from exampp.api.nugget_assign import read_answers

    fifo = tmp_path / "answers.fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"answers\.fifo: not a regular file or a folder: answers are read twice"):
        read_answers(fifo)
