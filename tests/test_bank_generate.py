"""``exampp bank generate`` end to end: the real openai backend against a loopback OpenAI-compatible
server answering canned and malformed replies, a tiny local model through the hf backend, and a
run killed mid-way that resumes without asking a finished item again."""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import EXAMPLES, REPO, shared_path
from exampp.api.bank_generate import NothingGenerated, generate_bank
from exampp.cli import main
from exampp.errors import InputError
from exampp.formats.question_bank import read_question_bank
from exampp.generation.bank_prompts import QUESTIONS_FACET
from exampp.generation.journal import journal_path
from exampp.generation.question_requests import Settings
from exampp.llm.backend import BackendSpec
from exampp.testing.openai_server import Fault, OpenAIServer, Seen
from killing import ctrl_c_at_chunk, kill_when

DATE = "2026-01-02T03:04:05Z"
TOPICS = [
    {"query_id": "Q1", "text": "coral reef bleaching", "subtopics": [
        {"facet_id": "Q1.1", "text": "causes of coral bleaching"},
        {"facet_id": "Q1.2", "text": "mass bleaching events"}]},
    {"query_id": "Q2", "text": "history of the printing press"},
]
JSON_FORMAT = ('Give the question set in the following JSON format:\n'
               '```json\n{"questions":[question_text_1, question_text_2,...]}\n```')


def car_prompt(title: str, subtopic: str) -> str:
    """The EXAM++ subtopic prompt, verbatim (DESIGN.md §2)."""
    return (f"Explore the connection between '{title}' with a specific focus on the subtopic '{subtopic}'. Generate "
            f"insightful questions that delve into advanced aspects of '{subtopic}', showcasing a deep understanding "
            f"of the subject matter. Avoid basic or introductory-level inquiries. {JSON_FORMAT}")


def query_prompt(title: str) -> str:
    return (f"Explore the query '{title}'. Generate about ten insightful questions that a passage relevant to "
            f"'{title}' should answer, showcasing a deep understanding of the subject matter. Avoid basic or "
            f"introductory-level inquiries. Keep the questions short. {JSON_FORMAT}")


CORRECTIVE = f"I could not find any questions in that answer. {JSON_FORMAT}"
# what picks out each item's prompt (its first user message)
CAUSES, MASS = "subtopic 'causes of coral bleaching'", "subtopic 'mass bleaching events'"
PRESS = "'history of the printing press'"


class Replies:
    """The server's answers: for the first ``key`` found in a request's first message, the answer of its
    attempt (the number of assistant turns in the request; the last answer repeats)."""

    def __init__(self) -> None:
        self.table: dict[str, list[str]] = {}

    def __call__(self, seen: Seen) -> str:
        first = seen.messages[0]["content"]
        attempt = sum(m["role"] == "assistant" for m in seen.messages)
        for key, answers in self.table.items():
            if key in first:
                return answers[min(attempt, len(answers) - 1)]
        return ""


def fenced(*questions: str) -> str:
    return "Here you are:\n```json\n" + json.dumps({"questions": list(questions)}) + "\n```\nAnything else?"


@pytest.fixture
def replies() -> Replies:
    return Replies()


@pytest.fixture
def server(replies):
    with OpenAIServer(name="gen", reply=replies) as server:
        yield server


def topics_file(tmp_path: Path, topics=TOPICS) -> Path:
    path = tmp_path / "topics.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in topics), encoding="utf-8")
    return path


def spec(server: OpenAIServer, **options) -> BackendSpec:
    return BackendSpec("openai", "gen", {"base_url": server.url, **options})


def generate(tmp_path, server, topics=TOPICS, output="bank.jsonl", **kwargs):
    """Run the job; returns (result, warnings)."""
    warnings: list[str] = []
    result = generate_bank(topics_file(tmp_path, topics), tmp_path / output, spec(server), now=lambda: DATE,
                           warn=warnings.append, progress=False, **kwargs)
    return result, warnings


def record(query_id: str, text: str, facet: tuple[str, str] | None = None, *, attempts: int = 1,
           prompt: str | None = None, **extra) -> dict:
    """A line of the bank as exampp writes it for a generated question."""
    titles = {t["query_id"]: t["text"] for t in TOPICS} | {"Q3": "how vaccines train the immune system"}
    line = {"query_id": query_id, "question_id": f"{query_id}/{hashlib.md5(text.encode()).hexdigest()}",
            "text": text}
    if facet:
        line |= {"facet_id": facet[0], "facet_text": facet[1]}
    prompt = prompt or ("genq-facet@v1" if facet else "genq-query@v1")
    return line | {"query_text": titles[query_id], "source": "generated:gen+chat",
                   "info": {"model": "gen+chat", "prompt": prompt, "temperature": 0.0, "date": DATE,
                            "attempts": attempts, **extra}}


def bank_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def texts(path: Path) -> list[str]:
    return [line["text"] for line in bank_lines(path)]


C11, C12 = ("Q1.1", "causes of coral bleaching"), ("Q1.2", "mass bleaching events")


def test_a_bank_with_ids_facets_and_provenance_one_request_per_subtopic(tmp_path, server, replies):
    replies.table = {
        CAUSES: [fenced("What triggers coral bleaching?", "Why do corals expel zooxanthellae?")],
        MASS: ['{"questions": ["How often do mass bleaching events occur?"]} I hope this helps!'],
        PRESS: ["Sure.\n1. Who built the first press with movable metal type?\n2) How did printing spread "
                "across Europe?\nThese cover the topic."],
    }
    result, warnings = generate(tmp_path, server)
    assert bank_lines(tmp_path / "bank.jsonl") == [
        record("Q1", "What triggers coral bleaching?", C11),
        record("Q1", "Why do corals expel zooxanthellae?", C11),
        record("Q1", "How often do mass bleaching events occur?", C12),
        record("Q2", "Who built the first press with movable metal type?"),
        record("Q2", "How did printing spread across Europe?"),
    ]
    # one chat request per subtopic with the CAR prompt verbatim, the query prompt for a topic without
    assert sorted(seen.prompt for seen in server.completions()) == sorted([
        car_prompt("coral reef bleaching", "causes of coral bleaching"),
        car_prompt("coral reef bleaching", "mass bleaching events"), query_prompt("history of the printing press")])
    assert all(len(seen.messages) == 1 and seen.messages[0]["role"] == "user" for seen in server.completions())
    assert all(seen.body["temperature"] == 0.0 and seen.body["max_tokens"] == 1024 for seen in server.completions())
    assert (result.generated, result.resumed, result.already, result.failed, result.new_questions) == (3, 0, 0, (), 5)
    assert result.written and warnings == [] and result.usage.requests == 3
    assert not journal_path(tmp_path / "bank.jsonl").exists()
    bank = read_question_bank(tmp_path / "bank.jsonl")
    assert bank.topics()["Q1"].subtopics[1].text == "mass bleaching events"


def test_the_subtopic_prompt_is_the_papers_verbatim():
    design = shared_path("DESIGN.md").read_text(encoding="utf-8")
    block = design.split("Question bank generation, query with subtopic (TREC CAR style):\n\n", 1)[1]
    lines = []
    for line in block.splitlines():
        if not line.startswith("    "):
            break
        lines.append(line[4:])
    assert QUESTIONS_FACET.render(query_title="{query_title}", query_subtopic="{query_subtopic}") == "\n".join(lines)
    assert car_prompt("{query_title}", "{query_subtopic}") == "\n".join(lines)


Q = ["Who printed the Gutenberg Bible?", "Why was paper cheaper than parchment?", "What did Aldus Manutius publish?"]


@pytest.mark.slow
@pytest.mark.parametrize("answer, expected", [
    ('{"questions": ["Who printed the Gutenberg Bible?", "Why was paper cheaper than parchment?", '
     '"What did Aldus Manutius publish?"]}', Q),  # bare JSON
    (fenced(*Q), Q),  # fenced JSON with prose around it
    ("Here are some questions:\n\n1. Who printed the Gutenberg Bible?\n2. Why was paper cheaper than parchment?\n"
     "3. What did Aldus Manutius publish?\n\nLet me know if you want more.", Q),  # a numbered list in prose
    ('```json\n{"questions": ["Who printed the Gutenberg Bible?", "Why was paper cheaper than parchment?", "What d',
     Q[:2]),  # cut off by the token limit: the complete questions
    ('[{"question": "Who printed the Gutenberg Bible?"}, {"question": "Why was paper cheaper than parchment?"}]',
     Q[:2]),
])
def test_every_answer_shape_gives_its_questions(tmp_path, server, replies, answer, expected):
    replies.table = {PRESS: [answer]}
    result, _ = generate(tmp_path, server, topics=TOPICS[1:])
    assert texts(tmp_path / "bank.jsonl") == expected
    assert result.usage.requests == 1


@pytest.mark.slow
@pytest.mark.parametrize("bad", ["", "I am sorry, I cannot help with that.", '{"questions": []}', "```json\n```"])
def test_an_answer_without_questions_is_asked_again_in_the_same_conversation(tmp_path, server, replies, bad):
    replies.table = {PRESS: [bad, fenced("Who printed the Gutenberg Bible?")]}
    result, warnings = generate(tmp_path, server, topics=TOPICS[1:])
    first, retry = server.completions()
    assert first.messages == [{"role": "user", "content": query_prompt("history of the printing press")}]
    assert retry.messages == [{"role": "user", "content": query_prompt("history of the printing press")},
                              {"role": "assistant", "content": bad}, {"role": "user", "content": CORRECTIVE}]
    assert bank_lines(tmp_path / "bank.jsonl") == [record("Q2", "Who printed the Gutenberg Bible?", attempts=2)]
    assert warnings == [] and result.usage.requests == 2


def journal_entries(output: Path) -> dict:
    """The journal's items, each as its last line holds it."""
    lines = [json.loads(line) for line in journal_path(output).read_text(encoding="utf-8").splitlines()[1:]]
    return {line["key"]: line["value"] for line in lines}


@pytest.mark.slow
def test_a_failed_item_is_kept_not_asked_again_and_asked_again_with_retry_failed(tmp_path, server, replies):
    replies.table = {CAUSES: ["No questions here."], MASS: [fenced("How often do mass bleaching events occur?")],
                     PRESS: [fenced("Who printed the Gutenberg Bible?")]}
    result, warnings = generate(tmp_path, server, settings=Settings(max_attempts=2))
    assert warnings == ["Q1 Q1.1: no questions (2 answers, the last: 'No questions here.'); --retry-failed asks it "
                        "again"]
    assert [(o.key, o.problem, o.answers) for o in result.failed] == [
        ("Q1 Q1.1", "no questions", ("No questions here.", "No questions here."))]
    assert result.generated == 2 and len(server.completions()) == 4  # twice the failing subtopic
    assert texts(tmp_path / "bank.jsonl") == ["How often do mass bleaching events occur?",
                                              "Who printed the Gutenberg Bible?"]
    # the journal stays, holding the failure and its answers
    entry = journal_entries(tmp_path / "bank.jsonl")["Q1 Q1.1"]
    assert (entry["problem"], entry["answers"], "value" in entry) == ("no questions", ["No questions here."] * 2, False)
    # the same run again asks nothing: a deterministic model would answer the same way
    server.reset()
    replies.table[CAUSES] = [fenced("What triggers coral bleaching?")]
    again, warnings = generate(tmp_path, server, settings=Settings(max_attempts=2))
    assert server.completions() == []
    assert warnings == ["Q1 Q1.1: no questions (2 answers in an earlier run, the last: 'No questions here.'); "
                        "--retry-failed asks it again"]
    assert (again.generated, again.already, [o.key for o in again.failed], again.written) == (0, 2, ["Q1 Q1.1"], False)
    # --retry-failed asks it, and only it
    retried, warnings = generate(tmp_path, server, settings=Settings(max_attempts=2), retry_failed=True)
    assert [seen.prompt for seen in server.completions()] == [car_prompt("coral reef bleaching",
                                                                         "causes of coral bleaching")]
    assert (retried.generated, retried.already, retried.failed, retried.new_questions, warnings) == (1, 2, (), 1, [])
    # merged after its query's questions; no failure left, no journal
    assert texts(tmp_path / "bank.jsonl") == ["How often do mass bleaching events occur?",
                                              "What triggers coral bleaching?", "Who printed the Gutenberg Bible?"]
    assert not journal_path(tmp_path / "bank.jsonl").exists()
    # all there: nothing asked, the bank as it was
    server.reset()
    third, _ = generate(tmp_path, server, settings=Settings(max_attempts=2))
    assert (third.already, third.written, server.completions()) == (3, False, [])


@pytest.mark.slow
def test_a_429_is_retried_and_the_summary_counts_requests_retries_and_tokens(tmp_path, server, replies):
    replies.table = {CAUSES: [fenced("What triggers coral bleaching?", "Why do corals expel zooxanthellae?")],
                     MASS: [fenced("How often do mass bleaching events occur?")],
                     PRESS: [fenced("Who printed the Gutenberg Bible?", "Why was paper cheaper than parchment?")]}
    server.faults[0] = Fault(status=429, headers={"Retry-After": "0"})
    output = tmp_path / "bank.jsonl"
    result = CliRunner().invoke(main, ["bank", "generate", str(topics_file(tmp_path)), "--backend", "openai",
                                       "--base-url", server.url, "--model", "gen", "-o", str(output), "--no-progress"])
    assert result.exit_code == 0, result.output
    answered = [seen for seen in server.completions() if seen.status == 200]
    assert [seen.status for seen in server.completions()].count(429) == 1 and len(answered) == 3
    # the server counts words as tokens
    prompt_tokens = sum(len(" ".join(m["content"] for m in seen.messages).split()) for seen in answered)
    completion_tokens = sum(len(replies(seen).split()) for seen in answered)
    assert result.stderr.splitlines() == [
        f"{server.url}: retrying 1 request (HTTP 429, overloaded)",  # said as it happens, --no-progress or not
        "3 queries or subtopics: 3 generated, 0 from an interrupted run, 0 already in the bank, 0 failed",
        f"wrote 5 questions (5 new) for 2 queries to {output}",
        f"generator: 3 requests (1 retried), {prompt_tokens} prompt tokens, {completion_tokens} completion tokens",
    ]
    assert len(bank_lines(output)) == 5 and result.stdout == ""


def test_nuggets_with_their_importance(tmp_path, server, replies):
    replies.table = {
        CAUSES: ['```json\n{"nuggets": [{"text": "Heat stress expels symbiotic algae", "importance": "vital"}, '
                 '{"text": "Pollution adds stress", "importance": "okay"}]}\n```'],
        MASS: ['{"nuggets": {"vital": ["1998 was the first global event"], "okay": ["Events recur every six years"]}}'],
        PRESS: ["1. [vital] Gutenberg printed around 1450\n2. Paper came from China (okay)\n3. Presses spread fast"],
    }
    generate(tmp_path, server, prompt="nuggets")
    nugget = {"prompt": "nuggets-facet@v1"}
    assert bank_lines(tmp_path / "bank.jsonl") == [
        record("Q1", "Heat stress expels symbiotic algae", C11, importance="vital", **nugget),
        record("Q1", "Pollution adds stress", C11, importance="okay", **nugget),
        record("Q1", "1998 was the first global event", C12, importance="vital", **nugget),
        record("Q1", "Events recur every six years", C12, importance="okay", **nugget),
        record("Q2", "Gutenberg printed around 1450", prompt="nuggets-query@v1", importance="vital"),
        record("Q2", "Paper came from China", prompt="nuggets-query@v1", importance="okay"),
        record("Q2", "Presses spread fast", prompt="nuggets-query@v1"),
    ]
    press = next(seen.prompt for seen in server.completions() if PRESS in seen.prompt)
    assert press == (
        "Explore the query 'history of the printing press'. List about ten nuggets: short atomic facts (at most a "
        "dozen words each) that a relevant answer must contain. Mark each nugget's importance: \"vital\" when an "
        "answer without it fails the query, \"okay\" when it is good to have but not essential. Give the nugget set "
        'in the following JSON format:\n```json\n{"nuggets":[{"text": nugget_text_1, "importance": "vital"}, '
        '{"text": nugget_text_2, "importance": "okay"},...]}\n```')


def test_near_duplicates_are_dropped_across_a_querys_subtopics(tmp_path, server, replies):
    topics = [{"query_id": "Q1", "text": "coral reef bleaching", "subtopics": [
        {"facet_id": "Q1.1", "text": "causes of coral bleaching"},
        {"facet_id": "Q1.2", "text": "mass bleaching events"},
        {"facet_id": "Q1.3", "text": "reef recovery"}]}]
    replies.table = {
        CAUSES: [fenced("What causes coral bleaching?", "What causes coral bleaching", "Why does heat matter?")],
        MASS: [fenced("what causes Coral-Bleaching??", "When was the first mass bleaching event?")],
        "'reef recovery'": [fenced("Why does heat matter?")],
    }
    result, warnings = generate(tmp_path, server, topics=topics)
    assert [(line["facet_id"], line["text"]) for line in bank_lines(tmp_path / "bank.jsonl")] == [
        ("Q1.1", "What causes coral bleaching?"), ("Q1.1", "Why does heat matter?"),
        ("Q1.2", "When was the first mass bleaching event?")]
    assert warnings == ["Q1 Q1.3: every question was a near-duplicate of another of query Q1 (1 answer, the last: "
                        "'Here you are: ```json {\"questions\": [\"Why does heat matter?\"]} ``` Anything else...'); "
                        "--retry-failed asks it again"]  # the answer shown cut at 80 characters
    assert result.new_questions == 3 and [o.key for o in result.failed] == ["Q1 Q1.3"]
    # a failure like any other: kept, with its answer, and not asked again
    assert journal_entries(tmp_path / "bank.jsonl")["Q1 Q1.3"]["problem"] == (
        "every question was a near-duplicate of another of query Q1")
    server.reset()
    again, _ = generate(tmp_path, server, topics=topics)
    assert server.completions() == [] and (again.already, len(again.failed)) == (2, 1)


def test_max_questions_caps_each_item(tmp_path, server, replies):
    replies.table = {CAUSES: [fenced("A one?", "A two?")], MASS: [fenced("B one?", "B two?", "B three?")],
                     PRESS: [fenced("C one?")]}
    generate(tmp_path, server, settings=Settings(max_questions=1))
    assert texts(tmp_path / "bank.jsonl") == ["A one?", "B one?", "C one?"]


def test_a_lone_surrogate_control_characters_and_line_breaks_give_plain_questions_that_read_back(
        tmp_path, server, replies):
    replies.table = {
        # the model's JSON escapes a lone surrogate, NUL, a line break, a bell
        CAUSES: ['{"questions": ["Why \\ud800 here?", "What\\u0000 triggers\\ncoral\\u0007 bleaching?"]}'],
        # the server's JSON does: the answer itself holds a lone surrogate
        MASS: [fenced("How often do mass bleaching events occur?") + " \udfff"],
        PRESS: ['{"questions": ["Who printed\\r\\n\\tthe Bible?", "' + "x" * 1001 + '?"]}'],
    }
    result, warnings = generate(tmp_path, server)
    output = tmp_path / "bank.jsonl"
    assert texts(output) == ["Why \ufffd here?", "What triggers coral bleaching?",
                             "How often do mass bleaching events occur?", "Who printed the Bible?"]
    assert warnings == ["Q2: 1 of its questions left out: longer than 1,000 characters"]
    assert read_question_bank(output, disabled=True) == result.bank  # what was written reads back
    assert not journal_path(output).exists()


def test_json_nested_too_deep_is_an_answer_without_questions(tmp_path, server, replies):
    deep = '{"questions": ' + "[" * 50_000 + "]" * 50_000 + "}"
    replies.table = {PRESS: [deep], CAUSES: [fenced("What triggers coral bleaching?")],
                     MASS: [fenced("How often do they occur?")]}
    result, warnings = generate(tmp_path, server, settings=Settings(max_attempts=2))
    assert [o.key for o in result.failed] == ["Q2"]
    assert warnings == ["Q2: no questions (2 answers, the last: '{\"questions\": " + "[" * 66 + "...'); "
                        "--retry-failed asks it again"]
    assert texts(tmp_path / "bank.jsonl") == ["What triggers coral bleaching?", "How often do they occur?"]


def test_an_answer_gives_at_most_max_items_questions_and_says_so(tmp_path, server, replies, monkeypatch):
    monkeypatch.setattr("exampp.generation.question_requests.MAX_ITEMS", 3)
    many = [f"Which press was number {i}?" for i in range(7)]
    replies.table = {PRESS: [fenced(*many)]}
    result, warnings = generate(tmp_path, server, topics=TOPICS[1:])
    assert texts(tmp_path / "bank.jsonl") == many[:3]
    assert warnings == ["Q2: the answer held 7 questions: the first 3 taken"]
    assert result.failed == () and result.new_questions == 3


def test_a_note_is_journaled_and_said_again_when_a_run_resumes(tmp_path, server, replies, monkeypatch):
    monkeypatch.setattr("exampp.generation.question_requests.MAX_ITEMS", 1)
    replies.table = {CAUSES: [fenced("What triggers coral bleaching?", "Why do corals expel algae?")],
                     MASS: [fenced("How often do they occur?")]}
    server.faults[1] = Fault(status=400)  # the run stops after the first item
    with pytest.raises(Exception, match="HTTP 400"):
        generate(tmp_path, server, topics=TOPICS[:1], chunk_size=1)
    entry = journal_entries(tmp_path / "bank.jsonl")["Q1 Q1.1"]
    assert (entry["value"], entry["note"]) == ([{"text": "What triggers coral bleaching?"}],
                                               "the answer held 2 questions: the first 1 taken")
    result, warnings = generate(tmp_path, server, topics=TOPICS[:1], chunk_size=1)
    assert warnings == ["Q1 Q1.1: the answer held 2 questions: the first 1 taken"]
    assert (result.resumed, result.generated) == (1, 1)


@pytest.mark.slow
def test_a_run_stopped_by_an_error_resumes_from_its_journal(tmp_path, server, replies):
    replies.table = {CAUSES: [fenced("What triggers coral bleaching?")], MASS: [fenced("How often do they occur?")],
                     PRESS: [fenced("Who printed the Gutenberg Bible?")]}
    output = tmp_path / "bank.jsonl"
    server.faults[1] = Fault(status=400)  # the second item's request is refused (not retried): the run stops
    with pytest.raises(Exception, match="HTTP 400"):
        generate(tmp_path, server, chunk_size=1)
    assert not output.exists()
    journal = journal_path(output)
    assert [json.loads(line).get("key") for line in journal.read_text().splitlines()] == [None, "Q1 Q1.1"]
    # another temperature may not go on with it
    with pytest.raises(InputError, match=r"bank\.jsonl\.journal\.jsonl:1: written by a run with other settings "
                                         r"\(temperature\)"):
        generate(tmp_path, server, settings=Settings(temperature=0.5))
    server.reset()
    result, _ = generate(tmp_path, server, chunk_size=1)
    assert sorted(seen.prompt for seen in server.completions()) == sorted([
        car_prompt("coral reef bleaching", "mass bleaching events"), query_prompt("history of the printing press")])
    assert (result.resumed, result.generated) == (1, 2) and not journal.exists()
    generate(tmp_path, server, output="uninterrupted.jsonl")
    assert bank_lines(output) == bank_lines(tmp_path / "uninterrupted.jsonl")


def test_the_command_line_says_where_a_stopped_run_keeps_its_answers(tmp_path, server, replies):
    replies.table = {CAUSES: [fenced("What triggers coral bleaching?")]}
    server.faults[1] = Fault(status=400)
    output = tmp_path / "bank.jsonl"
    result = CliRunner().invoke(main, ["bank", "generate", str(topics_file(tmp_path)), "--backend", "openai",
                                       "--base-url", server.url, "--model", "gen", "-o", str(output),
                                       "--chunk-size", "1", "--no-progress"])
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {server.url} answered HTTP 400 for model gen: injected HTTP 400 (what was "
                             f"answered is kept in {output}.journal.jsonl: the same command again goes on from "
                             "there)\n")


@pytest.mark.slow
def test_ctrl_c_says_how_many_items_are_kept_where_and_the_same_command_resumes(tmp_path, server, replies,
                                                                                   monkeypatch):
    replies.table = {CAUSES: [fenced("What triggers coral bleaching?")], MASS: [fenced("How often do they occur?")],
                     PRESS: [fenced("Who printed the Gutenberg Bible?")]}
    output = tmp_path / "bank.jsonl"
    command = ["bank", "generate", str(topics_file(tmp_path)), "--backend", "openai", "--base-url", server.url,
               "--model", "gen", "-o", str(output), "--chunk-size", "1", "--no-progress"]
    ctrl_c_at_chunk(monkeypatch, 3)
    stopped = CliRunner().invoke(main, command)
    assert stopped.exit_code == 130 and "Aborted!" not in stopped.output, stopped.output
    assert stopped.stderr == (f"interrupted: 2 of 3 items answered and kept in {output}.journal.jsonl; run the same "
                              "command to resume\n")
    monkeypatch.undo()
    server.reset()
    resumed = CliRunner().invoke(main, command)
    assert resumed.exit_code == 0, resumed.output
    assert len(server.completions()) == 1  # what the message said was kept is not asked again
    assert resumed.stderr.startswith("3 queries or subtopics: 1 generated, 2 from an interrupted run, ")


@pytest.mark.slow
def test_topics_that_grew_add_their_queries_to_the_bank(tmp_path, server, replies):
    replies.table = {CAUSES: [fenced("What triggers coral bleaching?")], MASS: [fenced("How often do they occur?")],
                     PRESS: [fenced("Who printed the Gutenberg Bible?")]}
    output = tmp_path / "bank.jsonl"
    generate(tmp_path, server, topics=TOPICS[1:])
    disabled = json.dumps(bank_lines(output)[0] | {"disabled": True}) + "\n"  # someone disabled it since
    output.write_text(disabled, encoding="utf-8")
    server.reset()
    result, _ = generate(tmp_path, server)
    assert len(server.completions()) == 2 and (result.already, result.generated) == (1, 2)
    after = output.read_text(encoding="utf-8")
    assert after.startswith(disabled)  # the earlier questions as they were, the new query's after them
    assert texts(output) == ["Who printed the Gutenberg Bible?", "What triggers coral bleaching?",
                             "How often do they occur?"]


def test_no_question_at_all_writes_nothing_and_keeps_the_failures(tmp_path, server, replies):
    with pytest.raises(NothingGenerated, match=r"^no item gave a question \(3 failed\): nothing written to "):
        generate(tmp_path, server, settings=Settings(max_attempts=1))
    assert not (tmp_path / "bank.jsonl").exists()
    assert sorted(journal_entries(tmp_path / "bank.jsonl")) == ["Q1 Q1.1", "Q1 Q1.2", "Q2"]
    server.reset()
    with pytest.raises(NothingGenerated):  # asked nothing
        generate(tmp_path, server, settings=Settings(max_attempts=1))
    assert server.completions() == []
    replies.table = {PRESS: [fenced("Who printed the Gutenberg Bible?")]}
    result, warnings = generate(tmp_path, server, settings=Settings(max_attempts=1), retry_failed=True)
    assert len(server.completions()) == 3 and texts(tmp_path / "bank.jsonl") == ["Who printed the Gutenberg Bible?"]
    assert [o.key for o in result.failed] == ["Q1 Q1.1", "Q1 Q1.2"] and len(warnings) == 2


def test_input_errors_come_before_any_model(tmp_path):
    topics = str(topics_file(tmp_path))
    runner = CliRunner()
    result = runner.invoke(main, ["bank", "generate", topics, "--prompt", "facet", "--model", "x", "-o",
                                  str(tmp_path / "b.jsonl")])
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {topics}: query Q2 has no subtopics, which --prompt facet needs (--prompt auto "
                             "asks such a query as a whole)\n")
    result = runner.invoke(main, ["bank", "generate", topics, "-o", str(tmp_path / "b.jsonl")])
    assert result.stderr == ("Error: bank generate needs --model: a generating (chat) model; with --backend hf, a "
                             "local model folder or HF hub id\n")
    result = runner.invoke(main, ["bank", "generate", topics, "--backend", "embedding", "--model", "x", "-o",
                                  str(tmp_path / "b.jsonl")])
    assert result.stderr == "Error: bank generate needs a backend that can generate; backend embedding offers: embed\n"


# --- killed mid-way -----------------------------------------------------------------------------------

SUBTOPIC = re.compile(r"^Explore the connection between '(.*?)' with a specific focus on the subtopic '(.*?)'")


def example_reply(seen: Seen) -> str:
    title, subtopic = SUBTOPIC.match(seen.messages[0]["content"]).groups()
    return fenced(f"What is known about {subtopic}?", f"How does {subtopic} shape {title}?")


@pytest.mark.slow
def test_a_killed_run_resumes_without_asking_a_finished_item_again(tmp_path):
    topics = EXAMPLES / "topics" / "topics.jsonl"  # 6 queries, 4 subtopics each
    command = ["bank", "generate", str(topics), "--backend", "openai", "--model", "gen", "--concurrency", "1",
               "--no-progress"]
    with OpenAIServer(name="gen", reply=example_reply) as server:
        reference = tmp_path / "uninterrupted.jsonl"
        result = CliRunner().invoke(main, [*command, "--base-url", server.url, "-o", str(reference)])
        assert result.exit_code == 0, result.output

        server.reset()
        server.delay = 0.1
        output = tmp_path / "killed.jsonl"
        journal = journal_path(output)
        args = [sys.executable, "-m", "exampp", *command, "--base-url", server.url, "-o", str(output)]
        process = subprocess.Popen(args, cwd=REPO, env=os.environ.copy(), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        # the settings line and 3 items
        kill_when(process, lambda: journal.exists() and journal.read_text().count("\n") >= 4, "3 items journaled")
        assert not output.exists()
        done = [json.loads(line)["key"] for line in journal.read_text().splitlines()[1:] if line.endswith("}")]
        assert 3 <= len(done) < 24

        server.reset()
        resumed = subprocess.run(args, cwd=REPO, env=os.environ.copy(), capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        asked = {SUBTOPIC.match(seen.prompt).group(2) for seen in server.completions()}
    subtopics = {f"{t['query_id']} {s['facet_id']}": s["text"]
                 for t in map(json.loads, topics.read_text().splitlines()) for s in t["subtopics"]}
    assert asked == {subtopics[key] for key in subtopics if key not in done}  # nothing finished asked again
    assert len(server.completions()) == 24 - len(done)
    assert resumed.stderr.splitlines()[0] == (f"24 queries or subtopics: {24 - len(done)} generated, {len(done)} from "
                                              "an interrupted run, 0 already in the bank, 0 failed")

    def undated(path: Path) -> list[dict]:
        return [line | {"info": {k: v for k, v in line["info"].items() if k != "date"}} for line in bank_lines(path)]

    assert undated(output) == undated(reference) and len(undated(output)) == 48
    assert not journal.exists()


# --- a tiny local model through the hf backend ----------------------------------------------------------

@pytest.mark.slow
def test_a_local_model_generates_retries_and_fails(tmp_path, tiny_t5_dir):
    from exampp.llm.backends.hf import HFBackend
    from exampp.llm.prompt import as_text
    from exampp.testing.tiny_models import steer

    model = HFBackend.load(str(tiny_t5_dir), device="cpu", batch_size=4)
    vaccines, flu = "how vaccines train the immune system", "flu season"
    topics = [TOPICS[1], {"query_id": "Q3", "text": vaccines}, {"query_id": "Q4", "text": flu}]
    tokenizer = model.tokenizer

    def ids(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]

    def retry(prompt: str) -> str:  # a model without a chat format reads the conversation as one text
        return as_text((("user", prompt), ("assistant", "Sorry."), ("user", CORRECTIVE)))

    # Q2 answers at once, Q3 after the corrective turn, Q4 never
    steer(model, [query_prompt("history of the printing press"), query_prompt(vaccines), retry(query_prompt(vaccines)),
                  query_prompt(flu), retry(query_prompt(flu))],
          [ids("1. Who printed the first Bible?"), ids("Sorry."), ids("- What do vaccines teach?"), ids("Sorry."),
           ids("Sorry.")])
    warnings: list[str] = []
    output = tmp_path / "bank.jsonl"
    result = generate_bank(topics_file(tmp_path, topics), output, model, settings=Settings(max_new_tokens=16,
                           max_attempts=2), now=lambda: DATE, warn=warnings.append, progress=False)
    name = str(tiny_t5_dir)

    def line(query_id: str, title: str, text: str, attempts: int) -> dict:
        return {"query_id": query_id, "question_id": f"{query_id}/{hashlib.md5(text.encode()).hexdigest()}",
                "text": text, "query_text": title, "source": f"generated:{name}",
                "info": {"model": name, "prompt": "genq-query@v1", "temperature": 0.0, "date": DATE,
                         "attempts": attempts}}

    assert bank_lines(output) == [line("Q2", "history of the printing press", "Who printed the first Bible?", 1),
                                  line("Q3", vaccines, "What do vaccines teach?", 2)]
    assert [(o.key, o.answers) for o in result.failed] == [("Q4", ("Sorry.", "Sorry."))]
    assert warnings == ["Q4: no questions (2 answers, the last: 'Sorry.'); --retry-failed asks it again"]
    assert model.usage.requests == 5
