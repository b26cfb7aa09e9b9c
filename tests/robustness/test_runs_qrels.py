"""Run and qrels files: read_run, read_runs, read_qrels; write_run, write_qrels."""
from __future__ import annotations

import math

import pytest
from hypothesis import example, strategies as st

from exampp.collection.qrels import MAX_GRADE
from exampp.collection.runs import from_scores, trec_order
from exampp.errors import InputError
from exampp.formats.trec_qrels import read_qrels, write_qrels
from exampp.formats.trec_run import read_run, read_runs, write_run

from .checks import (
    assert_ids,
    assert_located,
    can_write,
    outcome,
    parse,
    put,
    read_file,
    scratch,
    streamed,
    tries,
    written_or_refused,
)
from .strategies import hostile, hostile_ids, qrels_text, run_text

GZIP = b"\x1f\x8b"



@pytest.mark.slow
@tries(150, data=hostile(run_text))
@example(data=b"q1 Q0 d1 1 3 s\rq1 Q0 d2 2 2 s\rq2 Q0 d3 1 1 s\r")  # read as one result: the rest past the runid
def test_read_run_gives_a_run_or_a_located_error(data):
    run = read_file(read_run, "a.run", data)
    if run is not None:
        if data[:2] != GZIP:  # every line (as any tool splits them) is a result: none hides in another
            lines = [line.strip() for line in data.decode("utf-8").splitlines()]
            assert sum(map(len, run.rankings.values())) == sum(1 for line in lines if line and line[0] != "#")
        assert_ids([run.name, *(d.docid for docs in run.rankings.values() for d in docs)])
        assert_ids(run.rankings, first_column=True)
        for docs in run.rankings.values():
            assert docs == trec_order(docs) and not any(math.isnan(d.score) for d in docs)


@pytest.mark.slow
@tries(100, data=hostile(run_text))
def test_run_file_read_a_query_at_a_time_equals_the_whole_run(data):
    with scratch() as folder:
        path = put(folder / "a.run", data)
        whole = outcome(read_run, path, data)
        in_blocks = outcome(streamed, path, data)
    assert in_blocks[0] == whole[0]
    assert in_blocks[1] == (whole[1].rankings if whole[0] == "ok" else whole[1])


@pytest.mark.slow
@tries(40, files=st.lists(hostile(run_text), min_size=1, max_size=3))
def test_read_runs_of_a_folder_gives_runs_or_names_the_bad_file(files):
    with scratch() as folder:
        paths = [put(folder / f"r{i}.run", data) for i, data in enumerate(files)]
        try:
            runs = read_runs(folder)
        except InputError as exc:
            bad = next(p for p in paths if exc.path == str(p))
            assert_located(exc, bad, files[paths.index(bad)])
        else:
            assert len(runs) == len(files)


@pytest.mark.slow
@tries(150, data=hostile(qrels_text))
@example(data=b"q1 0 d1 99999999999999999999\n")  # pytrec_eval: SystemError, later a segfault; eval: OverflowError
@example(data=b"q1 0 d1 2147483648\n")  # eval built a table of 2**31 grades
def test_read_qrels_gives_judgments_or_a_located_error(data):
    qrels = read_file(read_qrels, "qrels", data)
    if qrels is not None:
        assert all(abs(rel) <= MAX_GRADE for docs in qrels.values() for rel in docs.values())
        assert_ids(qrels, first_column=True)
        assert_ids(docid for docs in qrels.values() for docid in docs)


scored_docs = st.dictionaries(hostile_ids(), st.floats(), min_size=1, max_size=4)


@pytest.mark.slow
@tries(150, name=hostile_ids(), scores=st.dictionaries(hostile_ids(first_column=True), scored_docs, max_size=3),
       depth=st.none() | st.integers(1, 3))
@example(name="s", scores={"q": {"d": math.nan}}, depth=None)  # was written as 'nan', which no reader takes
def test_a_written_run_reads_back_as_written_or_is_refused(name, scores, depth):
    run = from_scores(name, scores)
    expected = {q: docs[:depth] for q, docs in run.rankings.items()}
    docids = [d.docid for docs in expected.values() for d in docs]  # those past the depth go unwritten
    nan = any(math.isnan(d.score) for docs in expected.values() for d in docs)  # a score no reader takes
    with scratch() as folder:
        path = folder / "out.run"
        if not written_or_refused(lambda p: write_run(run, p, depth), path):
            assert not can_write(name, *docids, first_column=scores) or nan
            return
        if not expected:  # nothing to write: the reader refuses an empty run as such
            assert parse(read_run, path) is None
            return
        assert can_write(name, *docids, first_column=scores) and not nan
        back = read_run(path)
    assert back.name == name and back.rankings == expected


@pytest.mark.slow
@tries(150, qrels=st.dictionaries(hostile_ids(first_column=True),
                                  st.dictionaries(hostile_ids(), st.integers(-2, 10**12), min_size=1, max_size=3),
                                  max_size=3))
def test_written_qrels_read_back_as_written_or_are_refused(qrels):
    docids = [d for docs in qrels.values() for d in docs]
    in_range = all(abs(rel) <= MAX_GRADE for docs in qrels.values() for rel in docs.values())
    with scratch() as folder:
        path = folder / "out.qrels"
        if not written_or_refused(lambda p: write_qrels(qrels, p), path):
            assert not (can_write(*docids, first_column=qrels) and in_range)
            return
        assert can_write(*docids, first_column=qrels) and in_range
        back = parse(read_qrels, path)
    assert back == (qrels or None)  # no judgments: refused by the reader as empty
