"""TREC AutoJudge's NuggetBanks JSONL as a question bank format (exampp.formats.autojudge_nuggets): golden
records by hand, autojudge_base's own models validating and round-tripping what exampp writes, exampp reading
what autojudge_base writes, and `bank import` / `bank export`."""
from __future__ import annotations

import hashlib
import json

import pytest
from click.testing import CliRunner

from exampp.cli import main
from exampp.collection.questions import Question, QuestionBank, question_id_for
from exampp.errors import InputError
from exampp.formats.autojudge_nuggets import nugget_banks_records, read_nugget_banks_records
from exampp.formats.question_bank import load_question_bank, read_question_bank, write_question_bank


def md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


# Every field exampp has: a facet, answers, importance, source, info, choices, a disabled question, a claim,
# an id of exampp's own, and one made from the text.
BANK = QuestionBank([
    Question("t1", question_id_for("t1", "What is solar power?"), "What is solar power?",
             answers=("light to electricity", "sunlight"), info={"importance": "vital", "model": "m"},
             facet_id="f1", facet_text="basics", source="generated:m"),
    Question("t1", "t1-q2", "Which panel is best?", choices=("mono", "poly"), correct_choice=0, disabled=True),
    Question("t2", question_id_for("t2", "What is solar power?"), "What is solar power?"),
    # a topic's claims come after its questions, where the format writes them
    Question("t2", question_id_for("t2", "Panels need sun."), "Panels need sun.", info={"claim": True,
                                                                                      "importance": 2}),
], query_texts={"t1": "solar power"})


def test_records_golden_by_hand():
    assert list(nugget_banks_records(BANK)) == [
        {"query_id": "t1", "title_query": "solar power", "format_version": "v3", "nugget_bank": {
            "What is solar power?": {
                "question": "What is solar power?", "question_id": md5("What is solar power?"),
                "answers": {"light to electricity": {"answer": "light to electricity"},
                            "sunlight": {"answer": "sunlight"}},
                "query_id": "t1", "importance": "vital",
                "metadata": {"facet_id": "f1", "facet_text": "basics", "source": "generated:m",
                             "info": {"model": "m"}}},
            "Which panel is best?": {
                "question": "Which panel is best?", "question_id": "t1-q2", "query_id": "t1",
                "metadata": {"choices": ["mono", "poly"], "correct_choice": 0, "disabled": True}}}},
        {"query_id": "t2", "format_version": "v3",
         "nugget_bank": {"What is solar power?": {"question": "What is solar power?",
                                                  "question_id": md5("What is solar power?"), "query_id": "t2"}},
         "claim_bank": {"Panels need sun.": {"claim": "Panels need sun.", "claim_id": md5("Panels need sun."),
                                            "query_id": "t2", "importance": 2}}},
    ]


def test_written_and_read_back_is_the_same_bank(tmp_path):
    write_question_bank(BANK, tmp_path / "b.jsonl.gz", "autojudge")
    read = load_question_bank(tmp_path / "b.jsonl.gz")  # auto: recognised by nugget_bank
    assert read.format == "autojudge" and read.bank == BANK
    assert list(read.lines.values()) == [1, 1, 2, 2]


def test_autojudge_base_validates_and_round_trips_what_exampp_writes(tmp_path):
    from autojudge_base.nugget_data import NuggetBank, NuggetBanks, load_nugget_banks_from_file, write_nugget_banks

    for record in nugget_banks_records(BANK):
        NuggetBank.model_validate(record)  # pydantic: raises on a field of the wrong shape
    write_question_bank(BANK, tmp_path / "exampp.jsonl", "autojudge")
    banks = load_nugget_banks_from_file(tmp_path / "exampp.jsonl")
    assert isinstance(banks, NuggetBanks) and sorted(banks.banks) == ["t1", "t2"]
    t1 = banks.banks["t1"]
    assert t1.title_query == "solar power"
    assert t1.nugget_bank["What is solar power?"].question_id == md5("What is solar power?")
    assert list(t1.nugget_bank["What is solar power?"].answers) == ["light to electricity", "sunlight"]
    assert banks.banks["t2"].claim_bank["Panels need sun."].importance == 2
    write_nugget_banks(banks, tmp_path / "autojudge.jsonl")
    assert read_question_bank(tmp_path / "autojudge.jsonl", disabled=True) == BANK


def test_exampp_reads_what_autojudge_base_writes(tmp_path):
    from autojudge_base.nugget_data import NuggetBank, NuggetBanks, NuggetClaim, NuggetQuestion, write_nugget_banks

    q1 = NuggetQuestion.from_lazy("t1", "Who built it?", gold_answers=["Ann", "Bob"], importance="vital")
    q2 = NuggetQuestion.from_lazy("t1", "When?", question_id="n-7", metadata={"lang": "en"})
    claim = NuggetClaim(claim="It works.", query_id="t1")
    bank = NuggetBank(query_id="t1", title_query="the thing").add_nuggets([q1, q2, claim])
    other = NuggetBank(query_id="t2").add_nuggets(NuggetQuestion.from_lazy("t2", "Who built it?"))
    write_nugget_banks(NuggetBanks.from_banks_list([bank, other]), tmp_path / "n.jsonl.gz")
    read = read_question_bank(tmp_path / "n.jsonl.gz", "autojudge")
    assert read == QuestionBank([
        Question("t1", question_id_for("t1", "Who built it?"), "Who built it?", answers=("Ann", "Bob"),
                 info={"importance": "vital"}),
        Question("t1", "n-7", "When?", info={"lang": "en"}),
        Question("t1", question_id_for("t1", "It works."), "It works.", info={"claim": True}),
        # the same text in another topic: AutoJudge's id (its md5) is the same, exampp's is the topic's
        Question("t2", question_id_for("t2", "Who built it?"), "Who built it?"),
    ], query_texts={"t1": "the thing"})


def test_ragtime_2026_banks_list_their_nuggets():
    record = {"metadata": {"topic_id": 301, "team_id": "x", "run_id": "r"},
              "nugget_bank": [{"question": "Why?", "aggregator_type": "OR",
                               "answers": [{"answer": "because", "references": ["d1"]}]}]}
    bank = read_nugget_banks_records([(1, record)], "r.jsonl").bank
    assert bank.questions == [Question("301", question_id_for("301", "Why?"), "Why?", answers=("because",))]


@pytest.mark.parametrize("records, message", [
    ([(1, ["x"])], "r.jsonl:1: expected a NuggetBank object, found list"),
    ([(1, {"nugget_bank": {"Q?": {"question": "Q?"}}})], "r.jsonl:1: the bank names no topic"),
    ([(1, {"query_id": "t", "nugget_bank": "Q?"})], "r.jsonl:1: a bank's questions must be an object or a list"),
    ([(1, {"query_id": "t", "nugget_bank": [{"text": "Q?"}]})], "r.jsonl:1: expected a question object with"),
    ([(1, {"query_id": "t", "nugget_bank": {"Q?": {"question_id": "n1"}}}),
      (2, {"query_id": "u", "nugget_bank": {"R?": {"question_id": "n1"}}})],
     "r.jsonl:2: question id 'n1' is also on line 1"),
    ([(3, {"query_id": "t", "nugget_bank": {"Q?": {"answers": [7]}}})], "r.jsonl:3: question 'Q?': an answer must"),
    ([(1, {"query_id": "t"})], "r.jsonl: empty question bank"),
    ([(2, {"query_id": "t", "nugget_bank": {"Q?": {"metadata": 5}}})],  # was a TypeError
     "r.jsonl:2: question 'Q?': metadata must be an object, found int"),
])
def test_malformed_banks_are_told_by_line(records, message):
    with pytest.raises(InputError) as caught:
        read_nugget_banks_records(records, "r.jsonl")
    assert str(caught.value).startswith(message)


def test_two_questions_of_a_topic_with_one_text_cannot_be_written():
    bank = QuestionBank([Question("t", "a", "Same?"), Question("t", "b", "Same?")])
    with pytest.raises(ValueError, match="'a' and 'b' of topic 't' have the same text"):
        list(nugget_banks_records(bank))


def test_a_question_with_one_answer_twice_cannot_be_written(tmp_path):
    """Found by the robustness suite's round trip: AutoJudge keys a question's answers by their text, so the second
    'a' would be lost; the write is refused and leaves no file."""
    bank = QuestionBank([Question("0", "0", "0", answers=("a", "a"))])
    with pytest.raises(ValueError, match="question '0' has the answer 'a' twice"):
        list(nugget_banks_records(bank))
    with pytest.raises(ValueError):
        write_question_bank(bank, tmp_path / "bank.jsonl", "autojudge")
    assert list(tmp_path.iterdir()) == []


def test_bank_export_and_import(tmp_path):
    write_question_bank(BANK, tmp_path / "bank.jsonl")
    runner = CliRunner()
    out = runner.invoke(main, ["bank", "export", str(tmp_path / "bank.jsonl"), "--format", "autojudge",
                               "-o", str(tmp_path / "aj.jsonl")])
    assert out.exit_code == 0, out.output
    assert [json.loads(line)["query_id"] for line in (tmp_path / "aj.jsonl").read_text().splitlines()] == ["t1", "t2"]
    back = runner.invoke(main, ["bank", "import", str(tmp_path / "aj.jsonl"), "-o", str(tmp_path / "back.jsonl")])
    assert back.exit_code == 0, back.output
    assert "(autojudge): 4 questions" in back.stderr
    assert read_question_bank(tmp_path / "back.jsonl", disabled=True) == BANK
