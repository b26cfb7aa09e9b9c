"""The journal of a generation run: items kept as they finish (an item recorded again: its last line
counts), a line cut short by a kill dropped, another run's settings refused, an impossible name
refused before anything is asked, the journal gone once the output is complete."""
from __future__ import annotations

import json

import pytest

from exampp.errors import InputError, OutputError
from exampp.generation.journal import Journal, journal_path

SETTINGS = {"model": "m", "prompts": {"facet": "genq-facet@v1"}, "temperature": 0.0}


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_items_are_on_disk_as_they_finish_and_read_back_in_order(tmp_path):
    output = tmp_path / "sub" / "bank.jsonl"  # the folder is made
    with Journal(output, SETTINGS) as journal:
        assert journal.path == tmp_path / "sub" / "bank.jsonl.journal.jsonl" == journal_path(output)
        journal.record("Q2", {"questions": ["Why?"]})
        journal.record("Q1 Q1.1", ["é", 1])
        # flushed before the block ends: another reader sees both
        assert lines(journal.path) == [{"settings": SETTINGS}, {"key": "Q2", "value": {"questions": ["Why?"]}},
                                       {"key": "Q1 Q1.1", "value": ["é", 1]}]
    again = Journal(output, dict(SETTINGS))
    assert list(again.done.items()) == [("Q2", {"questions": ["Why?"]}), ("Q1 Q1.1", ["é", 1])]
    with again:  # appends, no second settings line
        again.record("Q3", None)
    assert [line.get("key") for line in lines(again.path)] == [None, "Q2", "Q1 Q1.1", "Q3"]


def test_a_last_line_cut_short_is_dropped_and_the_journal_goes_on_cleanly(tmp_path):
    output = tmp_path / "bank.jsonl"
    with Journal(output, SETTINGS) as journal:
        journal.record("Q1", [1])
    complete = journal.path.read_bytes()
    journal.path.write_bytes(complete + b'{"key": "Q2", "value": [2, 3')  # killed mid-line
    resumed = Journal(output, SETTINGS)
    assert resumed.done == {"Q1": [1]}  # Q2 is asked again
    assert resumed.path.read_bytes() == complete  # the piece is gone from the file too
    with resumed:
        resumed.record("Q2", [2])
    assert lines(resumed.path)[1:] == [{"key": "Q1", "value": [1]}, {"key": "Q2", "value": [2]}]


def test_a_settings_line_cut_short_starts_afresh(tmp_path):
    output = tmp_path / "bank.jsonl"
    journal_path(output).write_bytes(b'{"settings": {"mod')
    journal = Journal(output, SETTINGS)
    assert journal.done == {}
    with journal:
        journal.record("Q1", 1)
    assert lines(journal.path) == [{"settings": SETTINGS}, {"key": "Q1", "value": 1}]


def test_a_journal_of_other_settings_is_refused_naming_what_differs(tmp_path):
    output = tmp_path / "bank.jsonl"
    with Journal(output, SETTINGS) as journal:
        journal.record("Q1", 1)
    other = {**SETTINGS, "temperature": 0.7, "max_questions": 5}
    with pytest.raises(InputError) as caught:
        Journal(output, other)
    assert str(caught.value) == (
        f"{journal.path}:1: written by a run with other settings (max_questions, temperature); give those settings "
        "again, or delete this file (or write another output) to start afresh")
    assert lines(journal.path)[1:] == [{"key": "Q1", "value": 1}]  # untouched


def test_a_line_that_is_not_an_entry_is_an_error_naming_its_line(tmp_path):
    output = tmp_path / "bank.jsonl"
    path = journal_path(output)
    path.write_text(json.dumps({"settings": SETTINGS}) + '\n{"key": "Q1", "value": 1}\nnot json\n')
    with pytest.raises(InputError, match=r"bank\.jsonl\.journal\.jsonl:3: not a JSON line$"):
        Journal(output, SETTINGS)
    path.write_text(json.dumps({"settings": SETTINGS}) + '\n[1, 2]\n')
    with pytest.raises(InputError, match=r":2: not a journal entry$"):
        Journal(output, SETTINGS)


def test_remove_after_completion(tmp_path):
    output = tmp_path / "bank.jsonl"
    with Journal(output, SETTINGS) as journal:
        journal.record("Q1", 1)
        journal.remove()
        assert not journal.path.exists()
    assert Journal(output, {"model": "another"}).done == {}  # a fresh start takes any settings


def test_an_item_recorded_again_counts_as_its_last_line_says(tmp_path):
    output = tmp_path / "exam.jsonl"
    with Journal(output, SETTINGS, name="answers") as journal:
        assert journal.path == tmp_path / "exam.jsonl.answers.jsonl" == journal_path(output, "answers")
        journal.record("d1", {"problem": "no 'Question:' line"})
        journal.record("d2", {"value": 2})
        journal.record("d1", {"value": 1})  # asked again, and read this time
    assert list(Journal(output, SETTINGS, name="answers").done.items()) == [("d1", {"value": 1}), ("d2", {"value": 2})]


def test_a_name_that_cannot_be_a_file_is_refused_before_anything_is_asked(tmp_path):
    with pytest.raises(OutputError, match="names a folder"):
        Journal(f"{tmp_path}/", SETTINGS)
    long = tmp_path / ("b" * 250)  # the output's name fits, the journal's (14 more characters) does not
    with pytest.raises(OutputError, match=r"\.journal\.jsonl"):
        Journal(long, SETTINGS)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("line, message", [
    (b'{"key": "Q1", "value": "caf\xe9"}', "not valid UTF-8 (byte 0xe9 at column 28)"),
    (b'{"key": "Q1", "value": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", "not a JSON line"),
    (b'{"key": "Q1", "value": ' + b"9" * 5000 + b"}", "not a JSON line"),
])
def test_a_damaged_line_is_an_error_naming_its_line(tmp_path, line, message):
    output = tmp_path / "bank.jsonl"
    journal_path(output).write_bytes(json.dumps({"settings": SETTINGS}).encode() + b"\n" + line + b"\n")
    with pytest.raises(InputError) as caught:
        Journal(output, SETTINGS)
    assert str(caught.value) == f"{journal_path(output)}:2: {message}"
