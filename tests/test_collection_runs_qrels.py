"""TREC run and qrels readers: ordering, round trips and every bad-input case (file:line)."""
from __future__ import annotations

import gzip

import pytest

from exampp.collection.runs import RankedDoc, from_scores
from exampp.errors import InputError
from exampp.formats.trec_qrels import read_qrels, write_qrels
from exampp.formats.trec_run import read_run, read_runs, write_run

RUN = """# a comment line, as trec_eval 10 allows
q1 Q0 d1 1 0.5 sysA
q1 Q0 d2 2 0.9 sysA
q1 Q0 d3 3 0.5 sysA
q2 Q0 d9 1 1e1 sysA
"""


def test_run_is_in_trec_eval_order_whatever_the_rank_column(write):
    run = read_run(write("a.run", RUN))
    assert run.name == "sysA"
    # score desc; the 0.5 tie is broken by docid in descending string order: d3 before d1
    assert run.rankings["q1"] == [RankedDoc("d2", 0.9), RankedDoc("d3", 0.5), RankedDoc("d1", 0.5)]
    assert run.rankings["q2"] == [RankedDoc("d9", 10.0)]
    assert [d.docid for d in run.top("q1", 2)] == ["d2", "d3"]
    assert run.top("missing", 20) == []


def test_run_round_trip_plain_and_gzip(tmp_path, write):
    run = read_run(write("a.run", RUN))
    for name in ("out.run", "out.run.gz"):
        write_run(run, tmp_path / name)
        again = read_run(tmp_path / name)
        assert again.rankings == run.rankings and again.name == run.name
    assert (tmp_path / "out.run.gz").read_bytes()[:2] == b"\x1f\x8b"
    # ranks rewritten 1..n in trec_eval order
    lines = (tmp_path / "out.run").read_text().splitlines()
    assert lines[:3] == ["q1 Q0 d2 1 0.9 sysA", "q1 Q0 d3 2 0.5 sysA", "q1 Q0 d1 3 0.5 sysA"]


def test_from_scores_orders_like_a_file():
    run = from_scores("x", {"q": {"a": 1.0, "b": 1.0, "c": 2.0}})
    assert [d.docid for d in run.rankings["q"]] == ["c", "b", "a"]


def test_read_runs_directory_and_duplicate_names(tmp_path, write):
    write("runs/a.run", RUN)
    write("runs/b.run", RUN.replace("sysA", "sysB"))
    write("runs/.hidden", "junk")
    runs = read_runs(tmp_path / "runs")
    assert sorted(runs) == ["sysA", "sysB"]
    write("runs/c.run", RUN)
    with pytest.raises(InputError, match=r"c\.run: run name 'sysA' already used by .*a\.run"):
        read_runs(tmp_path / "runs")


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("q1 Q0 d1 1 0.5 sys\nq1 Q0 d2 2 0.4\n", 2, "expected 6 columns"),
        ("q1 Q0 d1 1 0.5 sys\nq1 Q0 d2 2 high sys\n", 2, "score 'high' is not a number"),
        ("q1 Q0 d1 1 0.5 sys\nq2 Q0 d1 1 0.5 sys\nq1 Q0 d1 2 0.4 sys\n", 3, "duplicate docid 'd1' in query 'q1'"),
        ("q1 Q0 d1 1 nan sys\n", 1, "score is NaN"),
    ],
)
def test_bad_run_lines_name_file_and_line(write, text, line, message):
    path = write("bad.run", text)
    with pytest.raises(InputError) as err:
        read_run(path)
    assert str(err.value).startswith(f"{path}:{line}: ")
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_empty_run_file(write):
    path = write("empty.run", "# only a comment\n\n")
    with pytest.raises(InputError, match=r"empty\.run: empty run"):
        read_run(path)


def test_non_utf8_bytes_name_the_line(write):
    path = write("latin.run", "q1 Q0 d1 1 0.5 sys\n".encode() + "q1 Q0 caf\xe9 2 0.4 sys\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"latin\.run:2: not valid UTF-8 \(byte 0xe9 at column 10\)"):
        read_run(path)


def test_truncated_gzip(tmp_path):
    data = gzip.compress(("".join(f"q1 Q0 d{i} {i} {1 / (i + 1)} sys\n" for i in range(2000))).encode())
    path = tmp_path / "cut.run.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"cut\.run\.gz:\d+: corrupt or truncated gzip data"):
        read_run(path)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match=r"nope\.run: no such file"):
        read_run(tmp_path / "nope.run")


def test_qrels_round_trip_and_errors(tmp_path, write):
    qrels = read_qrels(write("q.qrels", "q2 0 b 1\nq1 0 a 2\nq1 0 c -1\n"))
    assert qrels == {"q1": {"a": 2, "c": -1}, "q2": {"b": 1}}
    write_qrels(qrels, tmp_path / "out.qrels")
    assert (tmp_path / "out.qrels").read_text() == "q1 0 a 2\nq1 0 c -1\nq2 0 b 1\n"
    assert read_qrels(tmp_path / "out.qrels") == qrels

    for text, line, message in [
        ("q1 0 a 1\nq1 0 b\n", 2, "expected 4 columns"),
        ("q1 0 a 1\nq1 0 b yes\n", 2, "relevance 'yes' is not a number"),
        ("q1 0 a 1\nq1 0 a 0\n", 2, "duplicate docid 'a' in query 'q1'"),
    ]:
        path = write("bad.qrels", text)
        with pytest.raises(InputError) as err:
            read_qrels(path)
        assert str(err.value) == f"{path}:{line}: {message}" or str(err.value).startswith(f"{path}:{line}: {message}")
    with pytest.raises(InputError, match="empty qrels"):
        read_qrels(write("e.qrels", ""))


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    from exampp.files.io import atomic_write

    target = tmp_path / "out.txt"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as fh:
            fh.write("half")
            raise RuntimeError("crash mid-write")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_text_after_runid_is_ignored_like_trec_eval(write):
    run = read_run(write("junk.run", "q1 Q0 d1 1 0.5 sysA some junk\n"))
    assert run.rankings == {"q1": [RankedDoc("d1", 0.5)]} and run.name == "sysA"


def test_atomic_write_gives_the_umask_mode(tmp_path):
    import os

    from exampp.files.io import atomic_write

    old = os.umask(0o022)
    try:
        with atomic_write(tmp_path / "f.txt") as fh:
            fh.write("x")
    finally:
        os.umask(old)
    assert (tmp_path / "f.txt").stat().st_mode & 0o777 == 0o644


def test_run_query_missing_from_qrels_names_the_run_line(write):
    from exampp.formats.trec_run import check_judged

    run = read_run(write("r.run", "q1 Q0 a 1 2 sys\nq9 Q0 b 1 1 sys\nq8 Q0 c 1 1 sys\n"))
    runs = {run.name: run}
    assert check_judged(runs, ["q1", "q8", "q9"], "x.qrels") == []
    [warning] = check_judged(runs, ["q1"], "x.qrels")
    assert warning == f"{run.path}:3: warning: query 'q8' and 1 more not in x.qrels, left out"
    with pytest.raises(InputError) as err:
        check_judged(runs, ["q1", "q8"], "x.qrels", strict=True)
    assert str(err.value) == f"{run.path}:2: query 'q9' is not in x.qrels"


def test_qrels_from_ir_datasets(tmp_path):
    from conftest import register_local_dataset

    name = register_local_dataset(tmp_path, "d1\tdoc\n", "q1\tquery\n", "q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n")
    assert read_qrels(f"irds:{name}") == {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}
    (tmp_path / "plain").mkdir()
    without = register_local_dataset(tmp_path / "plain", "d\tt\n", "q\tt\n")
    with pytest.raises(InputError, match="has no qrels"):
        read_qrels(f"irds:{without}")
