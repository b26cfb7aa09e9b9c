"""`exampp bank import` / `exampp bank export`: the TSV, multiple-choice and TQA formats, import's
checks (answer keys, topics, merging) with their file:line errors, and the reference banks."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import EXAMPLES, jsonl, shared_path
from exampp.api.bank_io import export_bank, import_banks
from exampp.cli import main
from exampp.collection.questions import Question, QuestionBank, question_id_for
from exampp.errors import InputError
from exampp.formats.question_bank import load_question_bank, read_question_bank, write_question_bank
from exampp.formats.topic_files import read_topics

REPO = Path(__file__).resolve().parents[1]
TQA_SAMPLE = REPO / "tests" / "data" / "banks" / "tqa_sample.json"
TOPICS = EXAMPLES / "topics" / "topics.jsonl"
LAYOUT = "expected query_id<TAB>question[<TAB>answer...]"


def bank_cli(*args) -> object:
    return CliRunner().invoke(main, ["bank", *map(str, args)])


def md5_id(query_id: str, text: str) -> str:
    return question_id_for(query_id, text)


# --- TSV -----------------------------------------------------------------------------------------

TSV = ("# hand-written bank\n"
       "query_id\tquestion\tanswer\n"
       "Q1\tWhat is coral bleaching?\n"
       "\n"
       "Q1\tWho first printed with movable metal type? \tGutenberg\tJohannes Gutenberg\t\t\n"
       "# a comment between questions\n"
       "Q2\tWhen?\t\t1450\n")


def test_tsv_reads_comments_header_verbatim_text_and_answers(write):
    read = load_question_bank(write("bank.tsv", TSV))
    assert read.format == "tsv" and read.dropped == 0
    printed = "Who first printed with movable metal type? "  # the trailing space is part of the text
    assert read.bank.questions == [
        Question("Q1", md5_id("Q1", "What is coral bleaching?"), "What is coral bleaching?"),
        Question("Q1", md5_id("Q1", printed), printed, answers=("Gutenberg", "Johannes Gutenberg")),
        Question("Q2", md5_id("Q2", "When?"), "When?", answers=("1450",)),
    ]
    assert read.bank.query_texts == {}
    assert list(read.lines.values()) == [3, 5, 7]


def test_tsv_from_a_spreadsheet_with_a_byte_order_mark_and_crlf(write):
    bank = read_question_bank(write("bank.tsv", "\ufeffquery_id\tquestion\r\nQ1\tA?\tx\r\n".encode("utf-8")))
    assert bank.questions == [Question("Q1", md5_id("Q1", "A?"), "A?", answers=("x",))]


def test_tsv_header_only_on_the_first_line(write):
    # a later line that looks like the header is a question of query 'query_id'
    bank = read_question_bank(write("bank.tsv", "Q1\tA?\nquery_id\tquestion\n"))
    assert [(q.query_id, q.text) for q in bank] == [("Q1", "A?"), ("query_id", "question")]


# --- the multiple-choice form -------------------------------------------------------------------

CHOICE_LINES = jsonl(
    {"query_id": "Q1", "question": "Which algae live in corals?", "choices": ["zooxanthellae", "kelp", "diatoms"],
     "correct_key": "a", "facet_id": "Q1.1", "facet_text": "causes", "query_text": "coral reef bleaching"},
    {"query_id": "Q1", "question_id": "Q1/mine", "question": "Which ocean?",
     "choices": {"x": "Pacific", "y": "Atlantic"}, "correct_key": "y", "answers": ["the Atlantic", "Atlantic"],
     "source": "textbook", "info": {"page": 12}},
    "",
    {"query_id": "Q2", "question": "Who printed first?", "answers": ["Bi Sheng"], "disabled": True},
)


def test_choice_form_reads_list_and_object_choices_keys_and_open_questions(write):
    read = load_question_bank(write("mc.jsonl", CHOICE_LINES))
    assert read.format == "choices"
    assert read.bank.questions == [
        Question("Q1", md5_id("Q1", "Which algae live in corals?"), "Which algae live in corals?", "Q1.1", "causes",
                 answers=("zooxanthellae",), choices=("zooxanthellae", "kelp", "diatoms"), correct_choice=0),
        Question("Q1", "Q1/mine", "Which ocean?", answers=("the Atlantic", "Atlantic"), choices=("Pacific", "Atlantic"),
                 correct_choice=1, source="textbook", info={"page": 12}),
        Question("Q2", md5_id("Q2", "Who printed first?"), "Who printed first?", answers=("Bi Sheng",), disabled=True),
    ]
    assert read.bank.query_texts == {"Q1": "coral reef bleaching"}
    assert list(read.lines.values()) == [1, 2, 4]
    assert len(read_question_bank(write("mc.jsonl", CHOICE_LINES))) == 2  # the disabled one is left out for grading


# --- TQA -----------------------------------------------------------------------------------------

def tqa_line(key: str) -> int:
    """The line of ``"key": {`` in the sample, found independently of the reader."""
    lines = TQA_SAMPLE.read_text("utf-8").splitlines()
    return next(i for i, line in enumerate(lines, start=1) if line.strip().startswith(f'"{key}": {{'))


def test_tqa_lessons_are_queries_and_non_diagram_questions_multiple_choice(caplog):
    with caplog.at_level(logging.WARNING):
        read = load_question_bank(TQA_SAMPLE)
    assert read.format == "tqa"
    assert read.bank.questions == [
        Question("L_0001", "NDQ_000001", "the outermost layer of the earth is the", answers=("crust",),
                 choices=("crust", "mantle", "outer core", "inner core"), correct_choice=0),
        Question("L_0001", "NDQ_000002", "the mantle is made of liquid rock.", answers=("false",),
                 choices=("true", "false"), correct_choice=1),
        Question("L_0002", "NDQ_000010", "at a divergent boundary, plates", answers=("move apart",),
                 choices=("collide", "move apart", "slide past each other"), correct_choice=1),
    ]
    assert read.bank.query_texts == {"L_0001": "layers of the earth", "L_0002": "plate tectonics"}
    # NDQ_000003's key 'e' names none of its choices: dropped, as the reference tool drops it
    assert read.dropped == 1
    assert ("dropped 1 questions whose answer key does not fit their choices, as the reference tool does "
            "(NDQ_000003: 'correctAnswer' 'e' is not among the choices' keys a, b)") in caplog.text
    assert read.lines == {key: tqa_line(key) for key in ("NDQ_000001", "NDQ_000002", "NDQ_000010")}


def test_tqa_on_one_line_names_line_1(write):
    one_line = json.dumps(json.loads(TQA_SAMPLE.read_text("utf-8")))
    read = load_question_bank(write("tqa.json", one_line))
    assert set(read.lines.values()) == {1}
    assert read.bank == read_question_bank(TQA_SAMPLE)


TQA_ERRORS = [
    ({"globalID": "L_1", "questions": {"nonDiagramQuestions": {"NDQ_1": {"beingAsked": "x"}}}},
     "lesson 'L_1', question 'NDQ_1': 'beingAsked' must be an object with a string 'processedText'"),
    ({"globalID": "L_1", "questions": {"nonDiagramQuestions": {"NDQ_1": {
        "beingAsked": {"processedText": "q?"}, "answerChoices": ["a"]}}}},
     "lesson 'L_1', question 'NDQ_1': 'answerChoices' must be an object {key: {\"processedText\": ..}}"),
    ({"globalID": "L_1", "questions": []}, "lesson 'L_1': 'questions' must be an object"),
    ({"lessonName": "no id"}, "lesson 1: expected a lesson object with a 'globalID' string"),
]


@pytest.mark.parametrize("lesson, message", TQA_ERRORS)
def test_tqa_structure_errors_name_lesson_question_and_line(write, lesson, message):
    path = write("tqa.json", json.dumps([lesson], indent=2))
    with pytest.raises(InputError) as info:
        read_question_bank(path)
    assert message in str(info.value) and str(info.value).startswith(str(path))
    if "question 'NDQ_1'" in message:  # the line of the question's id
        assert str(info.value).startswith(f"{path}:6: ")


# --- auto-detection and round trips -------------------------------------------------------------

@pytest.mark.parametrize("text, fmt", [
    (TSV, "tsv"),
    ("\n\nQ1\tA?\n", "tsv"),
    (CHOICE_LINES, "choices"),
    (jsonl({"query_id": "q", "text": "a"}), "exampp"),
    (jsonl({"qid": "q/1", "question": "a"}), "car"),
    (jsonl({"query_id": "q", "questions": [{"question_id": "q/1", "question_text": "a"}]}), "reference"),
    ("\n  [" + TQA_SAMPLE.read_text("utf-8").lstrip()[1:], "tqa"),
])
def test_format_recognised_from_the_first_line(write, text, fmt):
    assert load_question_bank(write("bank", text)).format == fmt


def choice_bank() -> QuestionBank:
    """Every field the choice form holds, and each default it must keep apart."""
    return QuestionBank([
        Question("Q1", md5_id("Q1", "Which?"), "Which?", "Q1.1", "causes", answers=("b",), choices=("a", "b"),
                 correct_choice=1, source="manual"),
        Question("Q1", "Q1/no-answers", "Which not?", choices=("a", "b", "c"), correct_choice=0),  # answers ()
        Question("Q1", "Q1/open", "Why?", answers=("heat",), info={"page": 3}, disabled=True),
        Question("Q2", "other-id", "Qué? ", answers=("x", "y"), choices=("x", "z"), correct_choice=0),
    ], query_texts={"Q1": "coral reef bleaching"})


def tsv_bank() -> QuestionBank:
    return QuestionBank([Question("Q1", md5_id("Q1", t), t, answers=a) for t, a in
                         [("Qué es? ", ()), ("Who?", ("Ada", "Ada Lovelace")), (" lead", ("  x  ",))]])


def tqa_bank() -> QuestionBank:
    return QuestionBank([
        Question("L_1", "NDQ_1", "pick one", answers=("b",), choices=("a", "b"), correct_choice=1),
        Question("L_1", "Q1/x", "the third", answers=("c",), choices=("a", "b", "c"), correct_choice=2),
        Question("L_2", "NDQ_2", "¿cuál?", answers=("z",), choices=("x", "y", "z"), correct_choice=2),
    ], query_texts={"L_1": "lesson one"})


@pytest.mark.parametrize("fmt, bank", [("choices", choice_bank), ("tsv", tsv_bank), ("tqa", tqa_bank)])
@pytest.mark.parametrize("name", ["bank.out", "bank.out.gz"])
def test_round_trip(tmp_path, fmt, bank, name):
    write_question_bank(bank(), tmp_path / name, fmt)
    read = load_question_bank(tmp_path / name)
    assert read.format == fmt
    assert read.bank == bank() and read.bank.questions == bank().questions
    assert ((tmp_path / name).read_bytes()[:2] == b"\x1f\x8b") == name.endswith(".gz")


def test_writers_spell_the_formats(tmp_path):
    write_question_bank(choice_bank(), tmp_path / "mc.jsonl", "choices")
    lines = [json.loads(line) for line in (tmp_path / "mc.jsonl").read_text("utf-8").splitlines()]
    assert lines[0] == {"query_id": "Q1", "question_id": md5_id("Q1", "Which?"), "question": "Which?",
                        "facet_id": "Q1.1", "facet_text": "causes", "query_text": "coral reef bleaching",
                        "choices": ["a", "b"], "correct_key": "b", "source": "manual"}  # answers: the default
    assert lines[1]["answers"] == [] and lines[3]["answers"] == ["x", "y"]
    assert lines[2] == {"query_id": "Q1", "question_id": "Q1/open", "question": "Why?",
                        "query_text": "coral reef bleaching", "answers": ["heat"], "info": {"page": 3},
                        "disabled": True}
    write_question_bank(tsv_bank(), tmp_path / "b.tsv", "tsv")
    assert (tmp_path / "b.tsv").read_text("utf-8") == "Q1\tQué es? \nQ1\tWho?\tAda\tAda Lovelace\nQ1\t lead\t  x  \n"
    interleaved = QuestionBank([tqa_bank().questions[i] for i in (0, 2, 1)], query_texts=tqa_bank().query_texts)
    write_question_bank(interleaved, tmp_path / "tqa.json", "tqa")  # a lesson per query
    lessons = json.loads((tmp_path / "tqa.json").read_text("utf-8"))
    assert [(lesson["globalID"], lesson["lessonName"], list(lesson["questions"]["nonDiagramQuestions"]))
            for lesson in lessons] == [("L_1", "lesson one", ["NDQ_1", "Q1/x"]), ("L_2", "", ["NDQ_2"])]
    assert lessons[0]["questions"]["nonDiagramQuestions"]["NDQ_1"] == {
        "globalID": "NDQ_1", "questionType": "Multiple Choice",
        "beingAsked": {"processedText": "pick one", "rawText": "pick one"},
        "answerChoices": {"a": {"idStructural": "a.", "processedText": "a", "rawText": "a"},
                          "b": {"idStructural": "b.", "processedText": "b", "rawText": "b"}},
        "correctAnswer": {"processedText": "b", "rawText": "b"}}


REFUSED = [
    ("tsv", Question("q", md5_id("q", "a"), "a", choices=("x", "y"), correct_choice=0),
     "has choices, which the tsv format cannot hold; write the 'choices' or 'exampp' format"),
    ("tsv", Question("q", "q/1", "a"),
     f"the tsv format has no id column, and read back this question would be {md5_id('q', 'a')!r}"),
    ("tsv", Question("q", md5_id("q", "a\tb"), "a\tb"), "its text holds a tab or a line break"),
    ("tsv", Question("q", md5_id("q", "a"), "a", answers=("x", "y\nz")), "its answer 2 holds a tab or a line break"),
    ("tsv", Question("q", md5_id("q", "a"), "a", answers=(" ",)), "its answer 1 is blank"),
    ("choices", Question("q", "q/1", "a", choices=("x", "y")),
     "has choices without an answer key (which choice is correct), which the choices format cannot hold"),
    ("choices", Question("q", "q/1", "a", choices=("x",), correct_choice=0),
     "has 1 choice: a multiple-choice question needs 2 or more"),
    ("choices", Question("q", "q/1", "a", choices=tuple("abcdefghijklmnopqrstuvwxyz!"), correct_choice=0),
     "has 27 choices, more than the 26 keys a to z"),
    ("tqa", Question("q", "q/1", "a", answers=("x",)), "has no choices, which the tqa format needs"),
    ("tqa", Question("q", "q/1", "a", choices=("x", " "), correct_choice=0), "has a blank choice"),
]


@pytest.mark.parametrize("fmt, question, message", REFUSED)
def test_writers_refuse_what_would_read_back_as_another_question(tmp_path, fmt, question, message):
    with pytest.raises(ValueError) as info:
        write_question_bank(QuestionBank([question]), tmp_path / "out", fmt)
    assert str(info.value).startswith(f"question {question.question_id!r}") and message in str(info.value)
    assert not (tmp_path / "out").exists()


# --- bad input through the command line: one line naming file:line --------------------------------

MC = {"query_id": "Q1", "question": "Which?", "choices": ["x", "y", "z", "w"], "correct_key": "a"}
UNKEYED = jsonl({"query_id": "Q1", "text": "A?"}, {"query_id": "Q1", "text": "B?", "choices": ["x", "y"]})

BAD_INPUT = [
    # (file name, content, line, message)
    ("bank.tsv", "Q1\tA?\nQ1\n", 2, f"query 'Q1' has no question text: {LAYOUT}"),
    ("bank.tsv", "Q1\tA?\n\nQ1\t  \tanswer\n", 3, f"query 'Q1' has no question text: {LAYOUT}"),
    ("bank.tsv", "# bank\nQ1 What is it?\n", 2, f"no tab: {LAYOUT}"),
    ("bank.tsv", "Q1\tA?\nQ 1\tB?\n", 2, "'query_id' 'Q 1' contains whitespace (' '), which would break the line "
                                          "formats (runs, qrels) it is written to"),
    ("bank.tsv", "Q1\tA?\nQ2\tB?\nQ1\tA?\tx\n", 3, f"duplicate question id {md5_id('Q1', 'A?')!r} (first on line 1)"),
    ("mc.jsonl", jsonl(MC, {**MC, "question": " "}), 2, "no question text: 'question' must be a non-empty string"),
    ("mc.jsonl", jsonl({k: v for k, v in MC.items() if k != "correct_key"}), 1,
     "choices without an answer key: 'correct_key' must name the correct choice"),
    ("mc.jsonl", jsonl({**MC, "correct_key": "e"}), 1, "'correct_key' 'e' is not among the choices' keys a, b, c, d"),
    ("mc.jsonl", jsonl({**MC, "correct_key": "A"}), 1, "'correct_key' 'A' is not among the choices' keys a, b, c, d"),
    ("mc.jsonl", jsonl({**MC, "choices": {"1": "x", "2": "y"}, "correct_key": "zebra"}), 1,
     "'correct_key' 'zebra' is not among the choices' keys 1, 2"),
    ("mc.jsonl", jsonl({**MC, "choices": ["x"]}), 1, "a multiple-choice question needs 2 or more choices, found 1"),
    ("mc.jsonl", jsonl({**MC, "choices": ["x", ""]}), 1, "choice 'b' must be a non-empty string"),
    ("mc.jsonl", jsonl({"query_id": "Q1", "question": "Which?", "correct_key": "a"}), 1,
     "'correct_key' 'a' given without 'choices'"),
    ("mc.jsonl", jsonl({**MC, "choices": "x or y"}), 1,
     "'choices' must be a list of choice texts or an object {key: choice text}"),
    # formats that reading for grading takes with unkeyed choices: import refuses them
    ("bank.jsonl", UNKEYED, 2,
     f"question {md5_id('Q1', 'B?')!r} has choices without an answer key (which choice is correct)"),
    ("car.jsonl", jsonl({"qid": "Q1/1", "question": "A?", "choices": {"a": "x", "b": "y"}, "correct": "z"}), 1,
     "question 'Q1/1' has choices without an answer key (which choice is correct)"),
    ("bank.jsonl", jsonl({"query_id": "Q1", "text": "A?", "choices": ["x"], "correct_choice": 0}), 1,
     f"question {md5_id('Q1', 'A?')!r} has 1 choice: a multiple-choice question needs 2 or more"),
]


@pytest.mark.parametrize("name, content, line, message", BAD_INPUT)
def test_bad_input_is_one_line_naming_file_and_line(write, name, content, line, message):
    path = write(name, content)
    result = bank_cli("import", path, "-o", path.parent / "out.jsonl")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr == f"Error: {path}:{line}: {message}\n"
    assert not (path.parent / "out.jsonl").exists()


def test_reading_for_grading_still_takes_choices_without_a_key(write):
    path = write("bank.jsonl", UNKEYED)
    assert read_question_bank(path)[md5_id("Q1", "B?")].choices == ("x", "y")


def test_unknown_query_or_facet_against_the_topics(write):
    bank = write("bank.tsv", "Q1\tA?\nQ9\tB?\n")
    result = bank_cli("import", bank, "--topics", TOPICS, "-o", bank.parent / "out.jsonl")
    assert result.exit_code == 1
    assert result.stderr == f"Error: {bank}:2: unknown query 'Q9': not in the topics ({TOPICS})\n"
    facets = write("mc.jsonl", jsonl({**MC, "facet_id": "Q1.2"}, {**MC, "question": "B?", "facet_id": "Q1.9"}))
    result = bank_cli("import", facets, "--topics", TOPICS, "-o", bank.parent / "out.jsonl")
    assert result.stderr == (f"Error: {facets}:2: unknown facet 'Q1.9' of query 'Q1': the topics list "
                             "Q1.1, Q1.2, Q1.3, Q1.4\n")
    # a query whose topic lists no subtopics takes any facet
    topics = write("t.tsv", "Q1\tcoral reef bleaching\n")
    assert bank_cli("import", facets, "--topics", topics, "-o", bank.parent / "out.jsonl").exit_code == 0


def test_merging_files_keeps_exact_repeats_once_and_refuses_conflicts(write, tmp_path):
    first = write("a.tsv", "Q1\tA?\tx\nQ2\tB?\n")
    again = write("b.jsonl", jsonl({"query_id": "Q2", "text": "B?"}, {"query_id": "Q3", "text": "C?"}))
    result = import_banks([(first, "auto"), (again, "auto")])
    assert [q.text for q in result.bank] == ["A?", "B?", "C?"]
    assert result.repeats == 1 and result.dropped == 1
    assert [(f.path, f.format, f.questions, f.dropped) for f in result.files] == [
        (str(first), "tsv", 2, 0), (str(again), "exampp", 2, 0)]
    other = write("c.jsonl", jsonl({"query_id": "Q3", "text": "Z?"},
                                   {"query_id": "Q1", "text": "A?", "answers": ["y"]}))
    result = bank_cli("import", first, other, "-o", tmp_path / "out.jsonl")
    assert result.stderr == (f"Error: {other}:2: question id {md5_id('Q1', 'A?')!r} is also on {first}:1, "
                             "for a different question\n")


def test_import_summary_source_topics_texts_and_output_format(write, tmp_path):
    bank = write("bank.tsv", "Q1\tA?\tx\nQ2\tB?\n")
    mc = write("mc.jsonl", CHOICE_LINES)
    out = tmp_path / "out.jsonl"
    result = bank_cli("import", bank, mc, "--topics", TOPICS, "--source", "manual", "-o", out)
    assert result.exit_code == 0, result.output
    assert result.stderr == (f"read {bank} (tsv): 2 questions\n"
                             f"read {mc} (choices): 3 questions\n"
                             f"imported 5 questions for 2 queries (2 with choices, 4 with answers; 0 dropped) "
                             f"into {out} (exampp)\n")
    read = read_question_bank(out, disabled=True)
    assert [q.source for q in read] == ["manual", "manual", "manual", "textbook", "manual"]
    # query and facet texts: the bank's own where it has one, else the topics'
    assert read.query_texts == {"Q1": "coral reef bleaching", "Q2": "history of the printing press"}
    assert [(q.facet_id, q.facet_text) for q in read] == [(None, None)] * 2 + [("Q1.1", "causes")] + [(None, None)] * 2
    facet = write("facet.jsonl", jsonl({**MC, "facet_id": "Q1.2"}))
    assert import_banks([(facet, "auto")], TOPICS).bank.questions[0].facet_text == "mass bleaching events"
    tsv_out = tmp_path / "out.tsv"
    result = bank_cli("import", bank, "--output-format", "tsv", "-o", tsv_out)
    assert tsv_out.read_text("utf-8") == "Q1\tA?\tx\nQ2\tB?\n"


def test_query_prefix_lines_tqa_lessons_up_with_car_y3_queries(write, tmp_path):
    topics = write("topics.jsonl", jsonl({"query_id": "tqa2:L_0001", "text": "layers"},
                                         {"query_id": "tqa2:L_0002", "text": "plates"}))
    result = bank_cli("import", TQA_SAMPLE, "--topics", topics, "-o", tmp_path / "out.jsonl")
    assert result.stderr.splitlines()[-1] == (
        f"Error: {TQA_SAMPLE}:19: unknown query 'L_0001': not in the topics ({topics}); the topics have "
        "'tqa2:L_0001': import with the query prefix 'tqa2:'")
    result = bank_cli("import", TQA_SAMPLE, "--topics", topics, "--query-prefix", "tqa2:", "--source", "tqa",
                      "-o", tmp_path / "out.jsonl")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[-2:] == [
        f"read {TQA_SAMPLE} (tqa): 3 questions, 1 dropped",
        f"imported 3 questions for 2 queries (3 with choices, 3 with answers; 1 dropped) into {tmp_path / 'out.jsonl'} "
        "(exampp)"]
    bank = read_question_bank(tmp_path / "out.jsonl")
    assert [(q.query_id, q.question_id, q.source) for q in bank] == [
        ("tqa2:L_0001", "NDQ_000001", "tqa"), ("tqa2:L_0001", "NDQ_000002", "tqa"),
        ("tqa2:L_0002", "NDQ_000010", "tqa")]
    assert bank.query_texts == {"tqa2:L_0001": "layers of the earth", "tqa2:L_0002": "plate tectonics"}
    # ids <query_id>/... take the prefix too, so that they stay the ids of their texts
    prefixed = import_banks([(write("b.tsv", "L_1\tA?\n"), "tsv")], query_prefix="tqa2:").bank
    assert prefixed.questions == [Question("tqa2:L_1", md5_id("tqa2:L_1", "A?"), "A?")]


def test_export_warns_of_what_the_format_leaves_out(tmp_path):
    out = tmp_path / "q.tsv"
    result = bank_cli("export", EXAMPLES / "question_banks" / "questions.jsonl", "--format", "tsv", "-o", out)
    assert result.exit_code == 0, result.output
    assert result.stderr == ("warning: the tsv format leaves out facet_id (60 questions), facet_text (60 questions), "
                             "source (60 questions)\n"
                             f"wrote 60 questions for 6 queries to {out} (tsv)\n")
    source = [json.loads(line)
              for line in (EXAMPLES / "question_banks" / "questions.jsonl").read_text("utf-8").splitlines()]
    assert out.read_text("utf-8").splitlines() == [f"{r['query_id']}\t{r['text']}" for r in source]
    # read back with the topics, the same questions under the same ids
    back = import_banks([(out, "auto")], TOPICS).bank
    assert [(q.query_id, q.question_id, q.text) for q in back] == [
        (r["query_id"], r["question_id"], r["text"]) for r in source]


def test_export_refusal_writes_nothing_and_names_the_question(tmp_path):
    out = tmp_path / "ak.tsv"
    result = bank_cli("export", EXAMPLES / "question_banks" / "answer_key.jsonl", "--format", "tsv", "-o", out)
    assert result.exit_code == 1 and not out.exists()
    assert result.stderr == (f"Error: {out}: question 'Q1/fa109e04df2202d701a7a1fdb3380686' has choices, which the "
                             "tsv format cannot hold; write the 'choices' or 'exampp' format\n")


def test_export_leaves_disabled_questions_out_where_the_format_cannot_mark_them(write, tmp_path):
    bank = write("mc.jsonl", CHOICE_LINES)
    warnings: list[str] = []
    written = export_bank(bank, "tqa", tmp_path / "b.json", warn=warnings.append)
    assert (written.questions, written.disabled_left_out, written.fields_left_out) == (
        2, 1, {"facet_id": 1, "facet_text": 1, "source": 1, "info": 1, "answers": 1})
    assert warnings == ["warning: left out 1 disabled questions: the tqa format cannot mark a question disabled",
                        "warning: the tqa format leaves out facet_id (1 questions), facet_text (1 questions), "
                        "source (1 questions), info (1 questions), answers (1 questions)"]
    export_bank(bank, "choices", tmp_path / "b.jsonl", warn=warnings.append)
    assert read_question_bank(tmp_path / "b.jsonl", disabled=True) == read_question_bank(bank, disabled=True)
    assert len(warnings) == 2  # nothing left out


def test_example_answer_key_through_the_choice_form(tmp_path):
    source = EXAMPLES / "question_banks" / "answer_key.jsonl"
    out = tmp_path / "ak.jsonl"
    assert bank_cli("export", source, "--format", "choices", "-o", out).exit_code == 0
    again = tmp_path / "again.jsonl"
    assert bank_cli("import", out, "--topics", TOPICS, "-o", again).exit_code == 0
    original = read_question_bank(source)
    assert original.query_texts == {}
    imported = read_question_bank(again)
    assert imported.questions == original.questions
    # query texts from the topics were added
    assert imported.query_texts == {qid: t.text for qid, t in read_topics(TOPICS).items()
                                    if qid in original.query_ids()}


# --- the reference banks beside the project ---------------------------------------------------------

@pytest.mark.slow
@pytest.mark.shared
@pytest.mark.parametrize("parts, topics, formats, refused", [
    (("car-y3", "car-y3-genq.jsonl.gz"), None, ("exampp", "choices", "car", "reference"),
     {"tsv": "the tsv format has no id column", "tqa": "has no choices, which the tqa format needs"}),
    (("dl19", "dl19-genq.jsonl.gz"), ("dl19", "dl19-queries.json"), ("exampp", "choices", "car", "reference", "tsv"),
     {"tqa": "has no choices, which the tqa format needs"}),
])
def test_reference_banks_export_and_import_again(tmp_path, parts, topics, formats, refused):
    path = shared_path("data", *parts)
    topics_path = shared_path("data", *topics) if topics else None
    imported = tmp_path / "imported.jsonl.gz"
    result = bank_cli("import", path, "-o", imported, *(("--topics", topics_path) if topics_path else ()))
    assert result.exit_code == 0, result.output
    bank = read_question_bank(imported)
    assert bank == read_question_bank(path)
    for fmt in formats:
        out = tmp_path / f"bank.{fmt}.gz"
        assert bank_cli("export", imported, "--format", fmt, "-o", out).exit_code == 0
        again = import_banks([(out, "auto")], topics_path).bank
        assert again == bank, fmt  # TSV's lost query texts come back from the topics
        assert load_question_bank(out).format == fmt
    for fmt, message in refused.items():
        result = bank_cli("export", imported, "--format", fmt, "-o", tmp_path / f"bank.{fmt}")
        assert result.exit_code == 1 and message in result.stderr and not (tmp_path / f"bank.{fmt}").exists()
