"""Nugget banks in the ``nuggetizer`` format (its ``create`` output, and the TREC RAG track's
assignment files read as banks), both directions, and assignment files read as RAG responses."""
from __future__ import annotations

import gzip
import json

import pytest
from click.testing import CliRunner

from conftest import jsonl, shared_path
from exampp.cli import main
from exampp.collection.questions import Question, QuestionBank, question_id_for
from exampp.errors import InputError
from exampp.formats.question_bank import load_question_bank, read_question_bank, write_question_bank
from exampp.formats.rag_responses import Response, read_responses


def nugget(text: str, importance: str = "vital", assignment: str | None = None) -> dict:
    return {"text": text, "importance": importance, **({} if assignment is None else {"assignment": assignment})}


def answer(qid: str, run: str, nuggets: list[dict], text: str = "An answer.", query: str = "a topic") -> dict:
    return {"query": query, "qid": qid, "nuggets": nuggets, "run_id": run, "answer_text": text}


CREATED = jsonl({"qid": "t1", "query": "what is a cat", "nuggets": [nugget("Cats are mammals"),
                                                                     nugget("Cats purr", "okay")]},
                {"qid": 2024, "query": "dogs", "nuggets": [nugget("Dogs bark", "okay")]})


def nuggets_of(bank: QuestionBank) -> list[tuple]:
    return [(q.query_id, q.question_id, q.text, q.info) for q in bank]


def test_nuggetizer_create_output_is_a_bank_of_nuggets_with_their_importance(write):
    read = load_question_bank(write("nuggets.jsonl", CREATED))
    assert read.format == "nuggetizer"  # recognised by "auto"
    assert nuggets_of(read.bank) == [
        ("t1", question_id_for("t1", "Cats are mammals"), "Cats are mammals", {"importance": "vital"}),
        ("t1", question_id_for("t1", "Cats purr"), "Cats purr", {"importance": "okay"}),
        ("2024", question_id_for("2024", "Dogs bark"), "Dogs bark", {"importance": "okay"}),  # a numeric qid
    ]
    assert read.bank.query_texts == {"t1": "what is a cat", "2024": "dogs"}
    assert read.lines == {question_id_for("t1", "Cats are mammals"): 1, question_id_for("t1", "Cats purr"): 1,
                          question_id_for("2024", "Dogs bark"): 2}
    assert read.bank.questions[0].source is None and not read.bank.questions[0].facet_id


def test_an_assignment_file_is_the_bank_of_its_topics_nuggets_each_once(write):
    t1 = [nugget("Cats are mammals", "vital", "support"), nugget("Cats purr", "okay", "not_support")]
    path = write("assignments.jsonl", jsonl(
        answer("t1", "run-a", t1, query="what is a cat"),
        answer("t2", "run-a", [nugget("Dogs bark", "okay", "partial_support")], query="dogs"),
        answer("t1", "run-b", [{**n, "assignment": "partial_support"} for n in t1], query="what is a cat")))
    read = load_question_bank(path)
    assert read.format == "nuggetizer"
    assert nuggets_of(read.bank) == [
        ("t1", question_id_for("t1", "Cats are mammals"), "Cats are mammals", {"importance": "vital"}),
        ("t1", question_id_for("t1", "Cats purr"), "Cats purr", {"importance": "okay"}),
        ("t2", question_id_for("t2", "Dogs bark"), "Dogs bark", {"importance": "okay"}),
    ]
    assert read.bank.query_texts == {"t1": "what is a cat", "t2": "dogs"}


TOPIC = {"qid": "t1", "query": "q", "nuggets": [nugget("A"), nugget("B", "okay")]}
BAD = [
    ("not JSON", ["{broken"], 1, "invalid JSON: Expecting property name enclosed in double quotes at column 2"),
    ("not an object", [TOPIC, ["t1"]], 2, "expected a topic's nuggets object, found list"),
    ("missing qid", [TOPIC, {"query": "q", "nuggets": []}], 2, "'qid' must be a string, found null"),
    ("importance high", [{"qid": "t1", "nuggets": [nugget("A", "high")]}], 1,
     "nuggets[0].importance is 'high', not one of vital, okay"),
    ("importance missing", [{"qid": "t1", "nuggets": [{"text": "A"}]}], 1,
     "nuggets[0].importance is null, not one of vital, okay"),
    ("assignment yes", [{"qid": "t1", "nuggets": [nugget("A", "vital", "yes")]}], 1,
     "nuggets[0].assignment is 'yes', not one of not_support, partial_support, support"),
    ("nuggets not a list", [{"qid": "t1", "nuggets": "A"}], 1, "'nuggets' must be a list, found str"),
    ("blank nugget", [{"qid": "t1", "nuggets": [nugget(" ")]}], 1, "nuggets[0].text must be a non-empty string"),
    ("nugget twice", [{"qid": "t1", "nuggets": [nugget("A"), nugget("A", "okay")]}], 1,
     "nugget 'A' is listed twice"),
    ("other importance", [TOPIC, {"qid": "t2", "nuggets": [nugget("C")]},
                          {"qid": "t1", "nuggets": [nugget("A"), nugget("B", "vital")]}], 3,
     "topic 't1' has other nuggets (or importance) than on line 1"),
    ("fewer nuggets", [TOPIC, {"qid": "t1", "nuggets": [nugget("A")]}], 2,
     "topic 't1' has other nuggets (or importance) than on line 1"),
    ("bad qid", [{"qid": "t 1", "nuggets": []}], 1,
     "qid 't 1' contains whitespace (' '), which would break the line formats (runs, qrels) it is written to"),
    ("no nuggets", [{"qid": "t1", "nuggets": []}], None, "empty question bank"),
]


@pytest.mark.parametrize("records, line, message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_nugget_bank_input_is_one_line_naming_file_and_line(write, records, line, message):
    path = write("nuggets.jsonl", jsonl(*records))
    with pytest.raises(InputError) as caught:
        read_question_bank(path, "nuggetizer")
    where = f"{path}:{line}" if line else str(path)
    assert str(caught.value) == f"{where}: {message}"


def test_an_empty_file_is_an_empty_bank(write):
    with pytest.raises(InputError, match=r"nuggets.jsonl: empty question bank$"):
        read_question_bank(write("nuggets.jsonl", "\n"), "nuggetizer")


BANK = QuestionBank([Question("t1", question_id_for("t1", "Cats purr"), "Cats purr", info={"importance": "okay"}),
                     Question("t2", question_id_for("t2", "Dogs bark"), "Dogs bark", info={"importance": "vital"}),
                     Question("t1", question_id_for("t1", "Cats meow"), "Cats meow", info={"importance": "vital"})],
                    query_texts={"t1": "what is a cat"})


def test_written_a_line_per_topic_with_importance(tmp_path):
    path = tmp_path / "nuggets.jsonl"
    write_question_bank(BANK, path, "nuggetizer")
    assert [json.loads(line) for line in path.read_text("utf-8").splitlines()] == [
        {"qid": "t1", "query": "what is a cat", "nuggets": [{"text": "Cats purr", "importance": "okay"},
                                                            {"text": "Cats meow", "importance": "vital"}]},
        {"qid": "t2", "query": "", "nuggets": [{"text": "Dogs bark", "importance": "vital"}]},  # no known text
    ]
    back = read_question_bank(path)
    assert back.questions == [BANK.questions[i] for i in (0, 2, 1)]  # by topic
    assert back.query_texts == BANK.query_texts  # the blank query is no text


def test_importance_survives_every_nugget_format(tmp_path):
    nuggetizer = tmp_path / "a.jsonl"
    write_question_bank(BANK, nuggetizer, "nuggetizer")
    start = read_question_bank(nuggetizer)
    path = nuggetizer
    for fmt in ("exampp", "reference-nuggets", "nuggetizer", "reference", "nuggetizer"):
        bank = read_question_bank(path)
        path = tmp_path / f"{fmt}-{path.name}"
        write_question_bank(bank, path, fmt)
        assert read_question_bank(path) == start, fmt
    assert path.read_bytes() == nuggetizer.read_bytes()


@pytest.mark.parametrize("question, message", [
    (Question("t1", "t1/x", "A nugget", info={"importance": "vital"}),
     "question 't1/x': the nuggetizer format has no id, and read back this nugget would be "
     f"{question_id_for('t1', 'A nugget')!r}; write the 'exampp' or 'reference-nuggets' format"),
    (Question("t1", question_id_for("t1", "Q?"), "Q?"),
     f"question {question_id_for('t1', 'Q?')!r} has no importance (info.importance vital or okay), which the "
     "nuggetizer format needs; write the 'exampp' format"),
    (Question("t1", question_id_for("t1", "Q?"), "Q?", info={"importance": "high"}),
     f"question {question_id_for('t1', 'Q?')!r} has no importance (info.importance vital or okay), which the "
     "nuggetizer format needs; write the 'exampp' format"),
])
def test_writer_refuses_what_it_cannot_hold_and_writes_nothing(tmp_path, question, message):
    path = tmp_path / "nuggets.jsonl"
    with pytest.raises(ValueError) as caught:
        write_question_bank(QuestionBank([question]), path, "nuggetizer")
    assert str(caught.value) == message
    assert not path.exists() and list(tmp_path.iterdir()) == []


def test_export_says_what_the_format_leaves_out(tmp_path, write):
    bank = write("bank.jsonl", jsonl(
        {"query_id": "t1", "text": "Cats purr", "source": "generated:gpt-4o", "facet_id": "f1",
         "info": {"importance": "okay", "model": "gpt-4o"}},
        {"query_id": "t1", "text": "Cats meow", "info": {"importance": "vital"}, "disabled": True}))
    out = tmp_path / "nuggets.jsonl"
    result = CliRunner().invoke(main, ["bank", "export", str(bank), "--format", "nuggetizer", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        "warning: left out 1 disabled questions: the nuggetizer format cannot mark a question disabled\n"
        "warning: the nuggetizer format leaves out facet_id (1 questions), source (1 questions), info (1 questions)\n"
        f"wrote 1 questions for 1 queries to {out} (nuggetizer)\n")
    assert out.read_text("utf-8") == jsonl({"qid": "t1", "query": "", "nuggets": [nugget("Cats purr", "okay")]})


def test_assignment_file_read_as_rag_responses(write):
    path = write("assignments.jsonl", jsonl(
        answer("t1", "run-a", [nugget("A", "vital", "support")], text="Cats purr. They are mammals."),
        answer("t1", "run-b", [nugget("A", "vital", "not_support")], text="No idea.")))
    assert read_responses(path) == [Response("run-a", "t1", "Cats purr. They are mammals.", 1),
                                    Response("run-b", "t1", "No idea.", 2)]


def raw(path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.mark.shared
def test_the_track_file_as_a_bank_and_as_responses():
    path = shared_path("data", "rag24", "nugget-assignments.dev.jsonl.gz")
    lines = raw(path)
    first = {}
    for record in lines:
        first.setdefault(record["qid"], record)
    bank = read_question_bank(path)
    assert len(first) == 11 and len(bank) == sum(len(r["nuggets"]) for r in first.values()) == 153
    assert [(q.query_id, q.text, q.info["importance"]) for q in bank] == [
        (qid, n["text"], n["importance"]) for qid, r in first.items() for n in r["nuggets"]]
    assert bank.query_texts == {qid: r["query"] for qid, r in first.items()}
    responses = read_responses(path)
    assert len(responses) == len(lines) == 487
    assert [(r.run_id, r.query_id, r.text) for r in responses] == [
        (r["run_id"], r["qid"], r["answer_text"]) for r in lines]
