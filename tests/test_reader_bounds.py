"""Readers of answer files are bounded in total, not only per line: ``nuggets score`` and ``support
measures`` keep no answer text (the scores never read it), and what a reader keeps of one file is
refused past :data:`~exampp.files.io.MAX_KEPT_BYTES`, naming the line."""
from __future__ import annotations

import gzip
import json
import tracemalloc
from pathlib import Path

import pytest

from exampp.api.nuggets import score_nuggets
from exampp.api.support import support_scores
from exampp.errors import InputError
from exampp.files import io
from exampp.formats.citations import read_citations
from exampp.formats.nugget_assignments import read_assignments

LINES = 40
TEXT = 1 << 20  # characters of text a line carries: 40 MB in all, gzipped to almost nothing


def _nugget_line(n: int) -> dict:
    return {"qid": f"q{n % 4}", "query": "corals", "run_id": f"run{n}", "answer_text": "coral " * (TEXT // 6),
            "nuggets": [{"text": "heat bleaches corals", "importance": "vital", "assignment": "support"},
                        {"text": "algae live in coral tissue", "importance": "okay", "assignment": "not_support"}]}


def _citation_line(n: int) -> dict:
    return {"topic_id": f"q{n % 4}", "run_id": f"run{n}", "sentences": [
        {"sentenceID": 0, "text": "coral " * (TEXT // 6),
         "citations": [{"citationID": 0, "reference": "msmarco_v2.1_doc_1#2", "support": "2"}]}]}


def _gzipped(path: Path, lines: list[dict]) -> Path:
    with gzip.open(path, "wt") as fh:
        for line in lines:
            fh.write(json.dumps(line) + "\n")
    return path


def _peak(work) -> tuple[object, int]:
    tracemalloc.start()
    try:
        result = work()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_nuggets_score_keeps_no_answer_text(tmp_path: Path):
    path = _gzipped(tmp_path / "assignments.jsonl.gz", [_nugget_line(n) for n in range(LINES)])
    result, peak = _peak(lambda: score_nuggets(path))
    assert len(result.per_answer) == LINES
    assert peak < LINES * TEXT / 4, f"{peak >> 20} MiB at peak for {LINES * TEXT >> 20} MiB of answer text"


@pytest.mark.slow
def test_support_measures_keep_no_sentence_text(tmp_path: Path):
    path = _gzipped(tmp_path / "citations.jsonl.gz", [_citation_line(n) for n in range(LINES)])
    table, peak = _peak(lambda: support_scores(path, per_query=True))
    assert len(table) == LINES and set(table["weighted_precision"]) == {1.0}
    assert peak < LINES * TEXT / 4, f"{peak >> 20} MiB at peak for {LINES * TEXT >> 20} MiB of sentence text"


def test_a_nugget_topics_texts_are_kept_once_and_the_answers_text_when_asked(tmp_path: Path):
    path = _gzipped(tmp_path / "assignments.jsonl.gz", [_nugget_line(n) for n in range(8)])
    answers = read_assignments(path)
    assert len(answers[0].text) == 6 * (TEXT // 6) and answers[0].query == "corals"
    assert answers[0].nuggets[0].text is answers[4].nuggets[0].text  # q0's nuggets, shared
    assert [n.assignment for n in answers[4].nuggets] == ["support", "not_support"]
    lean = read_assignments(path, texts=False)
    assert {a.text for a in lean} == {""} and {a.query for a in lean} == {None}
    assert {s.text for a in read_citations(_gzipped(tmp_path / "c.jsonl.gz", [_citation_line(0)]), texts=False)
            for s in a.sentences} == {""}


@pytest.mark.parametrize("read, line", [(read_assignments, _nugget_line), (read_citations, _citation_line)],
                         ids=["nugget assignments", "citations"])
def test_what_a_reader_keeps_of_a_file_is_bounded(tmp_path: Path, monkeypatch, read, line):
    monkeypatch.setattr(io, "MAX_KEPT_BYTES", int(2.5 * TEXT))
    path = _gzipped(tmp_path / "answers.jsonl.gz", [line(n) for n in range(5)])
    with pytest.raises(InputError) as raised:
        read(path)
    assert str(raised.value) == (f"{path}:3: the file holds more than {int(2.5 * TEXT):,} bytes of answers to keep, "
                                 "the most a reader keeps of one file: split it")
