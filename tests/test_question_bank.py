"""Question banks: exampp JSONL, the reference tool's bank and CAR formats, both directions."""
from __future__ import annotations

import gzip
import json
import logging

import pytest

from conftest import jsonl, shared_path
from exampp.collection.questions import Question, QuestionBank, question_id_for
from exampp.collection.topics import Subtopic, Topic
from exampp.errors import InputError
from exampp.formats.question_bank import WRITE_FORMATS, read_question_bank, write_question_bank


def test_question_id_is_query_slash_md5_of_the_verbatim_utf8_text():
    # golden ids: the first from the reference DL19 bank, the others from `md5sum`
    text = "What are the primary responsibilities of an AML surveillance analyst?"
    assert question_id_for("1115776", text) == "1115776/efb9be3e3fa2b117fd21308d25053147"
    assert question_id_for("q", "Qué es la fotosíntesis? ") == "q/5cfbfdc2dfef780ab8bba912802f630c"
    assert question_id_for("q", "How?") == "q/3e988a952a29c13a66ce43e24573a010"


def test_exampp_format_reads_fields_and_defaults_the_id(write):
    path = write("bank.jsonl", jsonl(
        {"query_id": "q1", "text": "How?"},
        {"query_id": "q2", "question_id": "mine", "text": "Which?", "facet_id": "f", "facet_text": "Facet",
         "query_text": "second query", "answers": ["a"], "choices": ["x", "y"], "correct_choice": 1,
         "source": "manual", "category": "ignored"},
        "",
        {"query_id": "q1", "text": "Why?"},
    ))
    bank = read_question_bank(path)
    assert bank.questions == [
        Question("q1", "q1/3e988a952a29c13a66ce43e24573a010", "How?"),
        Question("q2", "mine", "Which?", "f", "Facet", ("a",), ("x", "y"), 1, "manual"),
        Question("q1", question_id_for("q1", "Why?"), "Why?"),
    ]
    assert bank.query_ids() == ["q1", "q2"]
    assert [q.text for q in bank.by_query()["q1"]] == ["How?", "Why?"]
    assert bank["mine"].correct_choice == 1 and "mine" in bank and "nope" not in bank and len(bank) == 3
    assert [q.question_id for q in bank] == [q.question_id for q in bank.questions]
    assert bank.query_texts == {"q2": "second query"}
    assert bank.topics() == {"q2": Topic("q2", "second query", (Subtopic("f", "Facet"),))}
    with pytest.raises(KeyError):
        bank["nope"]


def sample_bank() -> QuestionBank:
    return QuestionBank([
        Question("q1", question_id_for("q1", "Qué es? "), "Qué es? "),
        Question("q1", "q1/manual-1", "Who?", answers=("Ada", "Ada Lovelace"), source="manual"),
        Question("c1", "c1/f1/x", "Which rock?", facet_id="f1", facet_text="Geology",
                 choices=("granite", "basalt"), correct_choice=1, answers=("basalt",)),
        Question("c1", "c1/f1/z", "Where?", facet_id="f1", facet_text="Geology", choices=("a", "b", "c")),
        Question("c1", "c1/f2/y", "How old?", facet_id="f2", facet_text="Dating", source="generated:m"),
    ], query_texts={"q1": "what is it", "c1": "Earth"})


def test_reference_format_groups_questions_by_query_and_facet(tmp_path):
    interleaved = QuestionBank([Question("c", "c/1", "a", facet_id="f1"), Question("c", "c/2", "b", facet_id="f2"),
                                Question("c", "c/3", "c", facet_id="f1")])
    write_question_bank(interleaved, tmp_path / "b.jsonl", "reference")
    assert [q.question_id for q in read_question_bank(tmp_path / "b.jsonl")] == ["c/1", "c/3", "c/2"]


@pytest.mark.parametrize("fmt", ["exampp", "reference", "reference-nuggets"])
@pytest.mark.parametrize("name", ["bank.jsonl", "bank.jsonl.gz"])
def test_round_trip_is_lossless(tmp_path, fmt, name):
    bank = sample_bank()
    write_question_bank(bank, tmp_path / name, fmt)
    again = read_question_bank(tmp_path / name)
    assert again == bank
    assert again.questions == bank.questions and again.query_texts == bank.query_texts
    assert ((tmp_path / name).read_bytes()[:2] == b"\x1f\x8b") == name.endswith(".gz")


def test_exampp_writer_leaves_out_empty_fields(tmp_path):
    write_question_bank(sample_bank(), tmp_path / "b.jsonl")
    first, second = (json.loads(line) for line in (tmp_path / "b.jsonl").read_text("utf-8").splitlines()[:2])
    assert first == {"query_id": "q1", "question_id": question_id_for("q1", "Qué es? "), "text": "Qué es? ",
                     "query_text": "what is it"}
    assert second == {"query_id": "q1", "question_id": "q1/manual-1", "text": "Who?", "query_text": "what is it",
                      "answers": ["Ada", "Ada Lovelace"], "source": "manual"}


def test_reference_writer_groups_by_query_and_facet_like_the_tool(tmp_path):
    write_question_bank(sample_bank(), tmp_path / "b.jsonl.gz", "reference")
    lines = [json.loads(line) for line in gzip.open(tmp_path / "b.jsonl.gz", "rt", encoding="utf-8")]
    assert [(r["query_id"], r["facet_id"], r["facet_text"], r["query_text"]) for r in lines] == [
        ("q1", None, None, "what is it"), ("c1", "f1", "Geology", "Earth / Geology"),
        ("c1", "f2", "Dating", "Earth / Dating")]
    assert [i["question_id"] for i in lines[1]["items"]] == ["c1/f1/x", "c1/f1/z"]
    assert lines[1]["items"][0] == {"question_id": "c1/f1/x", "question_text": "Which rock?", "query_id": "c1",
                                    "facet_id": "f1", "gold_answers": ["basalt"],
                                    "info": {"choices": ["granite", "basalt"], "correct_choice": 1}}
    assert lines[0]["items"][0]["gold_answers"] is None and lines[0]["items"][0]["info"] is None
    assert all(isinstance(r["hash"], int) and r["test_collection"] == "exampp" for r in lines)
    nuggets = tmp_path / "n.jsonl"
    write_question_bank(sample_bank(), nuggets, "reference-nuggets")
    item = json.loads(nuggets.read_text("utf-8").splitlines()[0])["items"][1]
    assert item == {"nugget_id": "q1/manual-1", "nugget_text": "Who?", "query_id": "q1", "facet_id": None,
                    "info": {"answers": ["Ada", "Ada Lovelace"], "source": "manual"}}


CAR_LINES = jsonl(
    {"query_id": "tqa2:L_1", "query_text": "Rocks / Igneous", "qid": "tqa2:L_1/T_1/h1", "question": "Which?",
     "choices": {"a": "granite", "b": "basalt"}, "correctKey": "b", "correct": "basalt", "facet_id": "T_1"},
    {"query_id": "tqa2:L_1", "query_text": "Rocks / Igneous", "qid": "tqa2:L_1/T_1/h2", "question": "Why?",
     "choices": None, "correctKey": None, "correct": None, "facet_id": "T_1"},
    {"qid": "tqa2:L_2/h3", "question": "When?", "choices": None, "correctKey": None, "correct": "1990",
     "facet_id": None, "query_text": "Dates"},
    {"qid": "tqa2:L_2/h4", "question": "Odd?", "choices": {"x": "p", "y": "q"}, "correctKey": None,
     "correct": "q", "facet_id": None},
)


def test_car_variant_answer_keys_facets_and_query_ids(write):
    bank = read_question_bank(write("car.jsonl", CAR_LINES))
    assert bank.questions == [
        Question("tqa2:L_1", "tqa2:L_1/T_1/h1", "Which?", "T_1", "Igneous", ("basalt",), ("granite", "basalt"), 1),
        Question("tqa2:L_1", "tqa2:L_1/T_1/h2", "Why?", "T_1", "Igneous"),
        Question("tqa2:L_2", "tqa2:L_2/h3", "When?", answers=("1990",)),
        Question("tqa2:L_2", "tqa2:L_2/h4", "Odd?", answers=("q",), choices=("p", "q"), correct_choice=1),
    ]
    assert bank.query_texts == {"tqa2:L_1": "Rocks", "tqa2:L_2": "Dates"}


def test_car_round_trip(tmp_path, write):
    bank = read_question_bank(write("car.jsonl", CAR_LINES))
    write_question_bank(bank, tmp_path / "out.jsonl.gz", "car")
    assert read_question_bank(tmp_path / "out.jsonl.gz", "car") == bank
    first = json.loads(gzip.open(tmp_path / "out.jsonl.gz", "rt").readline())
    assert first == {"query_id": "tqa2:L_1", "query_text": "Rocks / Igneous", "qid": "tqa2:L_1/T_1/h1",
                     "question": "Which?", "choices": {"a": "granite", "b": "basalt"}, "correctKey": "b",
                     "correct": "basalt", "facet_id": "T_1"}


def test_car_writer_refuses_answer_keys_it_cannot_hold(tmp_path):
    several = QuestionBank([Question("q", "q/1", "Who?", answers=("a", "b"))])
    with pytest.raises(ValueError, match="holds one answer, not 2"):
        write_question_bank(several, tmp_path / "x.jsonl", "car")
    other = QuestionBank([Question("q", "q/1", "Who?", answers=("c",), choices=("a", "b"), correct_choice=0)])
    with pytest.raises(ValueError, match="differs from the correct choice"):
        write_question_bank(other, tmp_path / "x.jsonl", "car")
    assert not (tmp_path / "x.jsonl").exists()  # atomic: nothing half-written


def test_import_drops_blank_questions_and_exact_repeats_with_a_warning(write, caplog):
    line = {"query_id": "q", "query_text": "t", "questions": [
        {"question_id": "q/1", "question_text": "A?", "query_id": "q"},
        {"question_id": "q/2", "question_text": "   ", "query_id": "q"},
        {"question_id": "q/1", "question_text": "A?", "query_id": "q"}]}
    with caplog.at_level(logging.WARNING):
        bank = read_question_bank(write("ref.jsonl", jsonl(line)))
    assert [q.question_id for q in bank] == ["q/1"]
    assert "dropped 1 questions with blank text and 1 exact repeats" in caplog.text


ERRORS = [
    # (format, file lines, line of the error, part of the message)
    ("exampp", [{"query_id": "q", "text": "a"}, {"text": "b"}], 2, "missing field 'query_id'"),
    ("exampp", [{"query_id": "q"}], 1, "missing field 'text'"),
    ("exampp", [{"query_id": "q", "text": 5}], 1, "'text' must be a non-empty string"),
    ("exampp", [{"query_id": "q", "text": "  "}], 1, "'text' must be a non-empty string"),
    ("exampp", [{"query_id": 7, "text": "a"}], 1, "'query_id' must be a non-empty string"),
    ("exampp", [{"query_id": "q", "question_id": "", "text": "a"}], 1, "'question_id' must be a non-empty"),
    ("exampp", [{"query_id": "q", "text": "a", "answers": "x"}], 1, "'answers' must be a list of strings"),
    ("exampp", [{"query_id": "q", "text": "a", "choices": ["x", 1]}], 1, "'choices' must be a list of strings"),
    ("exampp", [{"query_id": "q", "text": "a", "choices": ["x", "y"], "correct_choice": 2}], 1,
     "'correct_choice' 2 is out of range for 2 choices"),
    ("exampp", [{"query_id": "q", "text": "a", "correct_choice": 0}], 1, "out of range for 0 choices"),
    ("exampp", [{"query_id": "q", "text": "a", "choices": ["x"], "correct_choice": True}], 1,
     "'correct_choice' must be an integer"),
    ("exampp", [{"query_id": "q", "text": "a", "facet_id": 3}], 1, "'facet_id' must be a string or null"),
    ("exampp", [{"query_id": "q", "text": "a"}, {"query_id": "r", "text": "b"}, {"query_id": "q", "text": "a"}],
     3, "duplicate question id 'q/0cc175b9c0f1b6a831c399e269772661' (first on line 1)"),
    ("exampp", [{"query_id": "q", "text": "a"}, "{broken"], 2, "invalid JSON"),
    ("exampp", [{"query_id": "q", "text": "a"}, ["q", "a"]], 2, "expected a question object, found list"),
    ("auto", [{"foo": 1}], 1, "not a question bank"),
    ("reference", [{"query_id": "q", "questions": "x"}], 1, "'questions'/'items' must be a list"),
    ("reference", [{"query_id": "q", "questions": [{"question_id": "q/1"}]}], 1,
     "item 1: missing field 'question_text'"),
    ("reference", [{"query_id": "q", "items": [{"question_id": "q/1", "question_text": "a", "query_id": "r"}]}],
     1, "item 1: question's query_id 'r' differs from the bank's 'q'"),
    ("reference", [{"query_id": "q", "questions": [{"question_id": "q/1", "question_text": "a"}]},
                   {"query_id": "q", "questions": [{"question_id": "q/1", "question_text": "b"}]}],
     2, "question id 'q/1' already used on line 1 for a different question"),
    ("reference", [{"query_id": "q", "questions": [{"question_id": "q/1", "question_text": "a",
                                                    "gold_answers": [1]}]}], 1, "'gold_answers' must be a list"),
    ("reference-nuggets", [{"query_id": "q", "items": [{"nugget_id": "q/1", "nugget_text": "a",
                                                        "info": {"choices": "ab"}}]}], 1,
     "item 1: 'choices' must be a list of strings"),
    ("car", [{"qid": "q/1", "question": "a", "choices": {"a": "x"}, "correctKey": "b"}], 1,
     "'correctKey' 'b' is not among the choices' keys ['a']"),
    ("car", [{"qid": "q/1", "question": "a", "choices": {"a": "x"}, "correctKey": "a", "correct": "y"}], 1,
     "'correct' 'y' differs from choice 'a' ('x')"),
    ("car", [{"qid": "q/1", "question": "a", "choices": ["x", "y"]}], 1, "'choices' must be an object"),
    ("car", [{"qid": "q/1", "question": "a", "correctKey": "a"}], 1, "'correctKey' 'a' given without 'choices'"),
    ("car", [{"qid": "q/1", "question": "a"}, {"question": "b"}], 2, "missing field 'qid'"),
]


@pytest.mark.parametrize("fmt, records, line, message", ERRORS)
def test_bad_input_names_file_line_and_problem(write, fmt, records, line, message):
    path = write("bank.jsonl", jsonl(*(r if isinstance(r, (dict, str)) else json.dumps(r) for r in records)))
    with pytest.raises(InputError) as info:
        read_question_bank(path, fmt)
    assert str(info.value).startswith(f"{path}:{line}: ")
    assert message in str(info.value)


def test_empty_file_and_unknown_format(write):
    with pytest.raises(InputError, match="empty question bank"):
        read_question_bank(write("empty.jsonl", "\n"))
    with pytest.raises(InputError, match="empty question bank"):
        read_question_bank(write("empty.jsonl", ""), "exampp")
    with pytest.raises(ValueError, match="unknown question bank format 'xml'"):
        read_question_bank(write("x.jsonl", "{}\n"), "xml")
    with pytest.raises(ValueError, match="unknown question bank format"):
        write_question_bank(QuestionBank(), write("y.jsonl", ""), "xml")


def test_question_bank_rejects_duplicate_ids():
    with pytest.raises(ValueError, match="duplicate question id 'q/1'"):
        QuestionBank([Question("q", "q/1", "a"), Question("q", "q/1", "b")])


# --- the reference data beside the project ---------------------------------------------------

def raw_lines(path):
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


@pytest.mark.slow
@pytest.mark.shared
@pytest.mark.parametrize("name, queries, questions", [
    (("dl19", "dl19-genq.jsonl.gz"), 43, 430), (("dl20", "dl20-genq.jsonl.gz"), 54, 540)])
def test_reference_dl_banks(tmp_path, name, queries, questions):
    path = shared_path("data", *name)
    bank = read_question_bank(path)
    assert len(bank) == questions and len(bank.query_ids()) == queries
    assert all(q.question_id == question_id_for(q.query_id, q.text) for q in bank)
    # exported again, each line holds the same query and the same questions as the tool's file
    write_question_bank(bank, tmp_path / "again.jsonl.gz", "reference")
    ours, theirs = raw_lines(tmp_path / "again.jsonl.gz"), raw_lines(path)
    assert [(r["query_id"], r["query_text"], [(i["question_id"], i["question_text"]) for i in r["items"]])
            for r in ours] == \
           [(r["query_id"], r["query_text"], [(i["question_id"], i["question_text"]) for i in r["questions"]])
            for r in theirs]
    # these hold less: test_bank_io.py, test_nugget_formats.py
    for fmt in (f for f in WRITE_FORMATS if f not in ("tsv", "tqa", "nuggetizer")):
        write_question_bank(bank, tmp_path / f"{fmt}.jsonl", fmt)
        assert read_question_bank(tmp_path / f"{fmt}.jsonl") == bank


@pytest.mark.shared
def test_reference_nugget_bank():
    path = shared_path("data", "dl19", "dl19-nuggets.jsonl.gz")
    bank = read_question_bank(path)
    items = [i for r in raw_lines(path) for i in r["items"]]
    assert len(items) == 464 and len({i["nugget_id"] for i in items}) == 461  # 3 exact repeats in the file
    assert len(bank) == 461 and len(bank.query_ids()) == 43
    assert all(q.question_id == question_id_for(q.query_id, q.text) for q in bank)
    assert {q.source for q in bank} == {"generated:gpt-3.5-turbo"}


@pytest.mark.shared
def test_car_y3_bank():
    path = shared_path("data", "car-y3", "car-y3-genq.jsonl.gz")
    bank = read_question_bank(path)
    raw = raw_lines(path)
    assert len(raw) == 8893
    # independently: distinct ids among lines with a non-blank question (16 blank lines share one id)
    assert len({r["qid"] for r in raw if r["question"].strip()}) == 8877
    assert len(bank) == 8877 and len(bank.query_ids()) == 132
    assert len({(q.query_id, q.facet_id) for q in bank}) == 726
    # CAR ids are <query>/<facet>/<md5>, the md5 taken before the tool cleaned the text
    assert all(q.question_id.startswith(f"{q.query_id}/{q.facet_id}/") for q in bank)
    assert all(not q.choices and not q.answers for q in bank)  # this bank has no answer keys (all null)
    first = bank["tqa2:L_0002/T_0016/c11a9951609583c5c13c2cb3c9824e2e"]
    assert (first.facet_id, first.facet_text) == ("T_0016", "Geology")
    assert bank.query_texts["tqa2:L_0002"] == "Earth Science and its branches"
    assert Subtopic("T_0016", "Geology") in bank.topics()["tqa2:L_0002"].subtopics
