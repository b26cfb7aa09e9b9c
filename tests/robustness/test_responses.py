"""Generated responses (RAG answers), JSONL and TSV: rag_responses.read_responses, segment.load_responses, and
the passage ids segmentation builds from run and query ids."""
from __future__ import annotations

import json

import pytest
from hypothesis import example, strategies as st

from exampp.formats.rag_responses import read_responses
from exampp.formats.trec_run import read_run, write_run
from exampp.segment import load_responses

from .checks import assert_ids, can_write, parse, put, read_file, scratch, tries
from .strategies import hostile, hostile_ids, responses_text, texts


def _assert_segments(segmented) -> None:
    """Passage ids are ids, and a run of them is written and read back unchanged."""
    for name, run in segmented.runs.items():
        for query_id, docs in run.rankings.items():
            assert_ids(d.docid for d in docs)
            assert all(d.docid.split(":")[:2] == [name, query_id] for d in docs)
        assert set(segmented.corpus.texts) >= {d.docid for docs in run.rankings.values() for d in docs}
    with scratch() as folder:
        for name, run in segmented.runs.items():
            if any(run.rankings.values()):
                write_run(run, folder / "out.run")
                assert read_run(folder / "out.run").rankings == {q: d for q, d in run.rankings.items() if d}


@pytest.mark.slow
@tries(150, data=hostile(responses_text))
def test_read_responses_gives_responses_or_a_located_error(data):
    with scratch() as folder:
        path = put(folder / "rag.jsonl", data)
        responses = parse(read_responses, path, data)
        segmented = parse(load_responses, path, data)
    assert (responses is None) == (segmented is None)
    if responses is not None:
        assert_ids(r.run_id for r in responses)
        assert_ids((r.query_id for r in responses), first_column=True)
        assert not any(":" in r.run_id + r.query_id for r in responses)
        _assert_segments(segmented)


@pytest.mark.slow
@tries(100, answers=st.lists(st.tuples(hostile_ids(), hostile_ids(first_column=True), texts), min_size=1, max_size=4))
def test_segment_ids_of_any_run_and_query_id_are_ids_or_the_line_is_refused(answers):
    lines = [json.dumps({"run_id": run, "query_id": query, "response": text}) for run, query, text in answers]
    data = ("\n".join(lines) + "\n").encode()
    segmented = read_file(load_responses, "rag.jsonl", data)
    usable = all(can_write(run, first_column=[query]) and ":" not in run + query for run, query, _ in answers)
    unique = len({(run, query) for run, query, _ in answers}) == len(answers)
    assert (segmented is not None) == (usable and unique)
    if segmented is not None:
        _assert_segments(segmented)


@tries(40, name=hostile_ids(), query=hostile_ids(first_column=True))
@example(name="\r", query="q1")  # the message naming the file ran over two lines
def test_the_file_name_as_run_id_of_a_tsv_file_is_an_id_or_refused(name, query):
    data = f"{query}\tAn answer.\n".encode("utf-8", "surrogatepass")
    with scratch() as folder:
        try:
            path = put(folder / f"{name}.tsv", data)
        except (OSError, ValueError):  # no such file name here (a slash, NUL, too long)
            return
        segmented = parse(load_responses, path, data)
    if segmented is not None:
        _assert_segments(segmented)
