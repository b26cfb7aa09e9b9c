"""Every reader, whatever its source: the same result (or the same error, at the same line) for
the same bytes from a regular file, from a FIFO fed by another thread (what a process
substitution ``<(zcat run.gz)`` gives a program), gzipped through a FIFO, and on standard input
as ``-``; and a located error for a file that is missing, a folder, or a name no file can have."""
from __future__ import annotations

import gzip
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest
from hypothesis import assume, strategies as st

from exampp.formats.corpus_sources import read_passages
from exampp.formats.exampp_toml import read_config
from exampp.formats.leaderboard import read_leaderboard
from exampp.formats.question_bank import read_question_bank
from exampp.formats.reference_grades import read_reference_grades
from exampp.formats.reports import read_reports, read_requests
from exampp.formats.response_matrix import read_response_matrix
from exampp.formats.systems import read_systems
from exampp.formats.topic_files import read_topics
from exampp.formats.trec_qrels import read_qrels
from exampp.formats.trec_run import read_run
from exampp.segment import read_responses

from . import strategies as s
from .checks import fifo, outcome, put, scratch, stdin, streamed, tries


class Reader(NamedTuple):
    read: Callable[[Any], Any]
    text: st.SearchStrategy[str]
    name: str  # the file's name (the FIFO's is <stem>.fifo<suffixes>, in the same folder)
    stdin: bool = True  # reads '-' as standard input
    gzip: bool = True  # reads gzipped input
    same: Callable[[Any], Any] = lambda result: result  # what is compared of a result


def _frame(frame) -> str:
    return frame.to_csv()


READERS = {
    "read_run": Reader(read_run, s.run_text, "a.run"),
    "RunFile": Reader(streamed, s.run_text, "a.run"),
    "read_qrels": Reader(read_qrels, s.qrels_text, "qrels.txt"),
    "read_topics": Reader(read_topics, s.topics_text, "topics.json"),
    "read_question_bank": Reader(read_question_bank, s.bank_text, "bank.jsonl"),
    "read_passages": Reader(read_passages, s.corpus_text, "corpus.jsonl"),
    "read_reference_grades": Reader(read_reference_grades, s.graded_text, "graded.jsonl"),
    "segment.read_responses": Reader(read_responses, s.responses_text, "stdin.jsonl"),  # run id from the name
    "read_reports": Reader(read_reports, s.reports_text, "run.jsonl"),
    "read_requests": Reader(read_requests, s.requests_text, "requests.jsonl"),
    "read_leaderboard": Reader(read_leaderboard, s.leaderboard_text, "board.tsv"),
    "read_systems": Reader(read_systems, s.systems_text, "systems.tsv", same=_frame),
    "read_response_matrix": Reader(read_response_matrix, s.matrix_text, "m.csv", stdin=False,
                                 same=lambda r: (_frame(r.matrix), r.weights)),
    "read_config": Reader(read_config, s.config_text, "exampp.toml", stdin=False, gzip=False,
                          same=lambda config: config.values),
}


def _fifo_name(name: str) -> str:
    stem, dot, suffixes = name.partition(".")
    return f"{stem}.fifo{dot}{suffixes}"


def _same_as_file(reader: Reader, data: bytes, fed: bytes, how: str) -> None:
    """Reading ``fed`` the way ``how`` says gives what reading ``data`` from a file gives."""
    with scratch() as folder:
        expected = outcome(reader.read, put(folder / reader.name, data), data)
        if how == "stdin":
            with stdin(fed):
                got = outcome(reader.read, "-", data)
        else:
            with fifo(folder, _fifo_name(reader.name), fed) as path:
                got = outcome(reader.read, path, data)
    assert got[0] == expected[0], (got, expected)
    if got[0] == "ok":
        assert reader.same(got[1]) == reader.same(expected[1])
    else:
        assert got[1] == expected[1]


@pytest.mark.slow
@pytest.mark.parametrize("name", READERS)
@tries(30, data=st.data())
def test_a_fifo_reads_as_the_file(name, data):
    reader = READERS[name]
    raw = data.draw(s.hostile(reader.text), label="bytes")
    _same_as_file(reader, raw, raw, "fifo")


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n, r in READERS.items() if r.gzip])
@tries(20, data=st.data())
def test_gzipped_through_a_fifo_reads_as_the_plain_file(name, data):
    reader = READERS[name]
    raw = data.draw(s.mutated(reader.text), label="bytes")
    assume(not raw.startswith(b"\x1f\x8b"))  # gzip's magic inside: only the outer layer is unpacked
    _same_as_file(reader, raw, gzip.compress(raw, mtime=0), "fifo")


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n, r in READERS.items() if r.stdin])
@tries(20, data=st.data())
def test_standard_input_reads_as_the_file(name, data):
    reader = READERS[name]
    raw = data.draw(s.hostile(reader.text), label="bytes")
    _same_as_file(reader, raw, raw, "stdin")


@pytest.mark.parametrize("name", READERS)
@pytest.mark.parametrize("source", ["missing.txt", "folder", "nul\0byte.txt", "x" * 300])
def test_a_source_that_is_no_readable_file_is_a_located_error(tmp_path, name, source):
    (tmp_path / "folder").mkdir()
    path = f"{tmp_path}/{source}"
    assert outcome(READERS[name].read, path)[0] == "error"
