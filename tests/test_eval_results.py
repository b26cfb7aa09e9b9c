"""Per-topic results in TREC AutoJudge's leaderboard formats (exampp.formats.eval_results): golden files by
hand, round trips, autojudge-evaluate's own loader on what exampp writes, exampp on what autojudge_base's
Leaderboard.write writes, and the commands that write and read them."""
from __future__ import annotations

import gzip
import json
import math

import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from exampp.cli import main
from exampp.errors import InputError
from exampp.formats.eval_results import (
    EVAL_FORMATS,
    eval_result_lines,
    read_eval_results,
    write_eval_results,
)
from test_cli_scores import GRADES, RATED, tiny_workspace

# Two runs, two topics, two measures; run b lacks topic t2's AP (written as 0).
VALUES = pd.DataFrame(
    [("b", "t1", "P@1", 1.0), ("b", "t1", "AP", 0.5), ("b", "t2", "P@1", 0.0),
     ("a", "t1", "P@1", 0.0), ("a", "t1", "AP", 0.25), ("a", "t2", "P@1", 1.0), ("a", "t2", "AP", 0.75)],
    columns=["run", "query_id", "measure", "value"])

GOLDEN_TOT = """\
a\tP@1\tt1\t0.0
a\tAP\tt1\t0.25
a\tP@1\tt2\t1.0
a\tAP\tt2\t0.75
a\tP@1\tall\t0.5
a\tAP\tall\t0.5
b\tP@1\tt1\t1.0
b\tAP\tt1\t0.5
b\tP@1\tt2\t0.0
b\tAP\tt2\t0.0
b\tP@1\tall\t0.5
b\tAP\tall\t0.25
"""


def test_tot_golden_file_by_hand():
    assert "".join(eval_result_lines(VALUES, "tot")) == GOLDEN_TOT


def test_the_other_formats_hold_the_same_rows_in_their_column_orders(tmp_path):
    rows = [line.split("\t") for line in GOLDEN_TOT.splitlines()]
    assert "".join(eval_result_lines(VALUES, "ir_measures")).splitlines() == [
        f"{run}\t{topic}\t{measure}\t{value}" for run, measure, topic, value in rows]
    assert [json.loads(line) for line in eval_result_lines(VALUES, "jsonl")] == [
        {"run_id": run, "topic_id": topic, "measure": measure, "value": float(value)}
        for run, measure, topic, value in rows]
    assert list(json.loads(next(eval_result_lines(VALUES, "jsonl")))) == ["run_id", "topic_id", "measure", "value"]
    assert write_eval_results(VALUES, tmp_path / "te", "trec_eval") == 2
    assert sorted(p.name for p in (tmp_path / "te").iterdir()) == ["a", "b"]
    fewer = VALUES[VALUES["run"] == "a"]  # b's file would stay and be read back as a run
    with pytest.raises(ValueError, match=r"holds files of runs not in this leaderboard \(b\)"):
        write_eval_results(fewer, tmp_path / "te", "trec_eval")
    assert write_eval_results(VALUES, tmp_path / "te", "trec_eval") == 2  # the same runs again: rewritten
    assert (tmp_path / "te" / "b").read_text().splitlines() == [
        f"{measure}\t{topic}\t{value}" for run, measure, topic, value in rows if run == "b"]


def test_a_wide_table_is_one_measure_per_column():
    wide = pd.DataFrame([("a", "t1", 0.5, 1.0), ("a", "t2", 0.25, 0.0)], columns=["run", "query_id", "cover", "x"])
    assert "".join(eval_result_lines(wide, "tot")) == (
        "a\tcover\tt1\t0.5\na\tx\tt1\t1.0\na\tcover\tt2\t0.25\na\tx\tt2\t0.0\na\tcover\tall\t0.375\na\tx\tall\t0.5\n")


@pytest.mark.parametrize("values, message", [
    (pd.DataFrame([("a b", "t1", "m", 1.0)], columns=["run", "query_id", "measure", "value"]), "whitespace"),
    (pd.DataFrame([("a", "all", "m", 1.0)], columns=["run", "query_id", "measure", "value"]), "topic named 'all'"),
    (pd.DataFrame([("a", "t", "m", math.nan)], columns=["run", "query_id", "measure", "value"]), "finite"),
    (pd.DataFrame([("a", "t", "m", 1.0)] * 2, columns=["run", "query_id", "measure", "value"]), "two values"),
])
def test_what_the_formats_cannot_hold_is_refused(values, message):
    with pytest.raises(ValueError, match=message):
        list(eval_result_lines(values, "tot"))


def test_a_run_that_cannot_name_a_file_is_refused_for_trec_eval(tmp_path):
    values = VALUES.replace({"run": {"a": ".hidden"}})
    with pytest.raises(ValueError, match="cannot name a trec_eval file"):
        write_eval_results(values, tmp_path / "te", "trec_eval")
    assert not (tmp_path / "te").exists()


ids = st.text(st.sampled_from("abcXYZ019_-.@"), min_size=1, max_size=4).filter(lambda s: s != "all")


@settings(deadline=None, max_examples=40)  # each example writes and reads files
@given(cells=st.dictionaries(st.tuples(ids.filter(lambda s: not s.startswith(".")), ids, ids),
                             st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=30),
       format=st.sampled_from(EVAL_FORMATS))
def test_round_trip(tmp_path_factory, cells, format):
    """Read back by exampp, and by autojudge-evaluate's loader with its checks on: the same values."""
    from autojudge_evaluate.eval_results import io

    values = pd.DataFrame([(*key, value) for key, value in cells.items()],
                          columns=["run", "query_id", "measure", "value"])
    path = tmp_path_factory.mktemp("rt") / "results"
    write_eval_results(values, path, format)
    theirs = io.load(path, format, recompute_aggregates=False, verify=True, on_missing="error")
    theirs = {(e.run_id, e.topic_id, e.measure): e.value for e in theirs.entries}
    topics = sorted(set(values["query_id"]))
    for measure in set(values["measure"]):
        board, table = read_eval_results(path, format, measure=measure)
        assert table is not None and list(table.columns) == topics
        for run in set(values["run"]):
            expected = [cells.get((run, topic, measure), 0.0) for topic in topics]
            assert list(table.loc[run]) == expected  # repr and json keep every bit
            assert board[run] == pytest.approx(math.fsum(expected) / len(topics), abs=1e-9)
            assert [theirs[run, topic, measure] for topic in [*topics, "all"]] == [*expected, board[run]]


def test_reading_golden_files_by_hand(tmp_path):
    (tmp_path / "a.tot").write_text("run measure topic value\nx m t1 0.5\nx m all 0.9\n"
                                    "y m t1 1\ny m t2 0\ny other t1 text\n")
    board, table = read_eval_results(tmp_path / "a.tot", "tot", measure="m")
    assert board == {"x": 0.9, "y": 0.5}  # x: its all row, y: the mean over its topics
    assert table.to_dict(orient="index") == {"x": {"t1": 0.5, "t2": 0.0}, "y": {"t1": 1.0, "t2": 0.0}}
    with gzip.open(tmp_path / "b.jsonl.gz", "wt") as fh:
        fh.write('{"run_id": "x", "topic_id": 7, "measure": "m", "value": "0.25"}\n'
                 '{"run_id": "x", "topic_id": "all", "measure": "m", "value": 0.25}\n')
    assert read_eval_results(tmp_path / "b.jsonl.gz", "jsonl")[0] == {"x": 0.25}
    (tmp_path / "te").mkdir()
    (tmp_path / "te" / "run1").write_text("m t1 0.5\nm all 0.5\n")
    (tmp_path / "te" / "run2").write_text("m t1 0.75\n")
    (tmp_path / "te" / ".hidden").write_text("junk\n")
    assert read_eval_results(tmp_path / "te", "trec_eval")[0] == {"run1": 0.5, "run2": 0.75}
    assert read_eval_results(tmp_path / "te" / "run2", "trec_eval")[0] == {"run2": 0.75}
    (tmp_path / "only-all.tot").write_text("x m all 0.5\ny m all 0.25\n")
    assert read_eval_results(tmp_path / "only-all.tot", "tot") == ({"x": 0.5, "y": 0.25}, None)


@pytest.mark.parametrize("text, format, measure, message", [
    ("x m t1\n", "tot", None, "a.txt:1: expected 4 columns 'run measure topic value' (tot), found 3"),
    ("x m t1 0.5\nx m t2 high\n", "tot", None, "a.txt:2: m: value 'high' is not a number"),
    ("x t1 m 0.5\nx t1 m 0.6\n", "ir_measures", None, "a.txt:2: run 'x', topic 't1': m again (first on a.txt:1)"),
    ("x m t1 0.5\n", "tot", "AP", "a.txt: no measure 'AP'; measures are m"),
    ("x m t1 0.5\nx n t1 0.5\n", "tot", None, "a.txt: several measures (m, n); pick one by name"),
    ('{"run_id": "x", "topic_id": "t"}\n', "jsonl", None, "a.txt:1: expected an object with run_id, topic_id"),
    ('{"run_id": "x", "topic_id": "t", "measure": "m", "value": null}\n', "jsonl", None,
     "a.txt:1: m: value null is not a number"),
    ('{"run_id": "x y", "topic_id": "t", "measure": "m", "value": 1}\n', "jsonl", None, "a.txt:1: run id 'x y'"),
    ("x m t1 inf\n", "tot", None, "a.txt:1: m: value 'inf' is not a finite number"),
    ("", "tot", None, "a.txt: no evaluation results"),
])
def test_malformed_files_are_told_by_file_line_and_what(tmp_path, text, format, measure, message):
    (tmp_path / "a.txt").write_text(text)
    with pytest.raises(InputError) as caught:
        read_eval_results(tmp_path / "a.txt", format, measure=measure)
    assert str(caught.value).startswith(str(tmp_path / "a.txt")) and message.split("a.txt")[-1] in str(caught.value)


def test_a_folder_is_only_trec_eval(tmp_path):
    with pytest.raises(InputError, match="only trec_eval results are a folder"):
        read_eval_results(tmp_path, "tot")


# -- against the TREC AutoJudge packages ---------------------------------------------------------------

@pytest.mark.parametrize("format", EVAL_FORMATS)
def test_autojudge_evaluate_reads_what_exampp_writes(tmp_path, format):
    from autojudge_evaluate.eval_results import io

    path = tmp_path / ("folder" if format == "trec_eval" else "results")
    write_eval_results(VALUES, path, format)
    # verify=True: the same topics per run, the same measures in every row, an all row per run and measure
    loaded = io.load(path, format, recompute_aggregates=False, verify=True, on_missing="error")
    read = {(e.run_id, e.topic_id, e.measure): e.value for e in loaded.entries}
    written = {(r, t, m): v for r, m, t, v in (line.split("\t") for line in GOLDEN_TOT.splitlines())}
    assert read == {key: float(value) for key, value in written.items()}
    recomputed = io.load(path, format, drop_aggregates=True, recompute_aggregates=True, verify=True,
                         on_missing="error")
    assert {(e.run_id, e.measure): e.value for e in recomputed.entries if e.topic_id == "all"} == pytest.approx(
        {(e.run_id, e.measure): e.value for e in loaded.entries if e.topic_id == "all"})


@pytest.mark.parametrize("format", EVAL_FORMATS)
def test_exampp_reads_what_autojudge_base_writes(tmp_path, format):
    from autojudge_base.leaderboard.leaderboard import LeaderboardBuilder, LeaderboardSpec, MeasureSpec

    rows = {("r1", "t1"): (0.5, 1), ("r1", "t2"): (0.25, 0), ("r2", "t1"): (0.75, 1), ("r2", "t2"): (1.0, 1)}
    boards = {}
    for run in (["r1", "r2"] if format == "trec_eval" else [None]):  # trec_eval: one file per run, named by it
        builder = LeaderboardBuilder(LeaderboardSpec(measures=(MeasureSpec("SCORE"), MeasureSpec("HIT", int))))
        for (r, topic), (score, hit) in rows.items():
            if run in (None, r):
                builder.add(run_id=r, topic_id=topic, SCORE=score, HIT=hit)
        boards[run] = builder.build()
    (tmp_path / "out").mkdir()
    for run, board in boards.items():
        board.write(tmp_path / "out" / (run or "board"), format)
    path = tmp_path / "out" if format == "trec_eval" else tmp_path / "out" / "board"
    score, table = read_eval_results(path, format, measure="SCORE")
    assert score == {"r1": 0.375, "r2": 0.875}
    assert table.to_dict(orient="index") == {"r1": {"t1": 0.5, "t2": 0.25}, "r2": {"t1": 0.75, "t2": 1.0}}
    assert read_eval_results(path, format, measure="HIT")[0] == {"r1": 0.5, "r2": 1.0}


# -- the commands -------------------------------------------------------------------------------------

def run(*args):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def ws(tmp_path):
    return tiny_workspace(tmp_path, RATED, GRADES)


def test_cover_writes_tot_with_the_per_query_table_s_values_and_the_leaderboard_s_means(ws):
    result = run("cover", "-w", str(ws), "--tau", "4", "--format", "tot")
    assert result.exit_code == 0, result.output
    # test_cli_scores' per-query table at tau 4: A 0.5, 1.0; B 0.0, 0.0; means 0.75 and 0.0
    assert result.stdout == ("A\tcover\tq1\t0.5\nA\tcover\tq2\t1.0\nA\tcover\tall\t0.75\n"
                             "B\tcover\tq1\t0.0\nB\tcover\tq2\t0.0\nB\tcover\tall\t0.0\n")
    bad = run("cover", "-w", str(ws), "--format", "tot", "--bootstrap", "10")
    assert bad.exit_code == 2 and "drop --format tot" in bad.output


def test_leaderboard_tot_means_are_the_leaderboard_s(ws):
    args = ["leaderboard", str(ws / "runs"), "--qrels", str(ws / "qrels" / "official.qrels"), "-m", "P@1", "-m", "AP"]
    means = {r["run"]: r for r in json.loads(run(*args, "--format", "json").stdout)}
    out = ws / "board.jsonl"
    assert run(*args, "--format", "jsonl", "-o", str(out)).exit_code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    for measure in ("P@1", "AP"):
        assert {r["run_id"]: r["value"] for r in rows if r["measure"] == measure and r["topic_id"] == "all"} == {
            run_id: means[run_id][measure] for run_id in means}
    assert {r["topic_id"] for r in rows} == {"q1", "q2", "all"}


def test_correlate_reads_the_results_as_it_reads_the_per_query_tables(ws):
    """The same leaderboards as exampp's per-query TSV tables and as tot / trec_eval results: the same figures,
    per query and bootstrapped too."""
    runs, qrels = str(ws / "runs"), str(ws / "qrels" / "official.qrels")
    # three runs, so that a correlation has something to rank
    (ws / "runs" / "c.run").write_text("q1 Q0 p2 1 2 C\nq1 Q0 p1 2 1 C\nq2 Q0 p3 1 1 C\n")
    files = {}
    for measure in ("P@1", "AP"):
        for fmt, name in (("tsv", f"{measure}.tsv"), ("tot", f"{measure}.tot")):
            extra = ["--per-query"] if fmt == "tsv" else []
            assert run("leaderboard", runs, "--qrels", qrels, "-m", measure, "--format", fmt, *extra,
                       "-o", str(ws / name)).exit_code == 0
            files[measure, fmt] = str(ws / name)
    common = ["--per-query", "--bootstrap", "20", "--format", "json"]
    by_tables = json.loads(run("correlate", "--a", files["P@1", "tsv"], "--b", files["AP", "tsv"], *common).stdout)
    by_tot = run("correlate", "--a", files["P@1", "tot"], "--a-format", "tot", "--b", files["AP", "tot"],
                 "--b-format", "tot", "--b-column", "AP", *common)
    assert by_tot.exit_code == 0, by_tot.output
    by_tot_json = json.loads(by_tot.stdout)
    for key in ("spearman", "kendall", "tau_ap", "per_query", "intervals"):
        assert by_tot_json[key] == by_tables[key]


def test_meta_evaluate_takes_an_official_file_in_a_results_format(ws):
    """Its cover row at tau 4 is what correlate gives for the same official file and cover's tot file. (The
    official all rows are the topics' means here: meta-evaluate resamples the official queries, and so ranks
    by their means, as it does a per-query table's.)"""
    (ws / "runs" / "c.run").write_text("q1 Q0 p2 1 2 C\nq1 Q0 p1 2 1 C\nq2 Q0 p3 1 1 C\n")
    official = ws / "official.tot"
    official.write_text("A m q1 1\nA m q2 0.5\nA m all 0.75\nB m q1 0\nB m q2 0.25\nB m all 0.125\n"
                        "C m q1 0\nC m q2 1\nC m all 0.5\n")
    assert run("cover", "-w", str(ws), "--tau", "4", "--format", "tot", "-o", str(ws / "cover.tot")).exit_code == 0
    result = run("meta-evaluate", "-w", str(ws), "--official", str(official), "--official-format", "tot",
                 "--family", "cover", "--tau", "4", "--bootstrap", "0", "--no-progress", "--format", "json")
    assert result.exit_code == 0, result.output
    meta = json.loads(result.stdout)
    assert meta["official"] == f"{official} (tot)" and meta["n_systems"] == 3
    correlated = json.loads(run("correlate", "--a", str(official), "--a-format", "tot", "--b", str(ws / "cover.tot"),
                                "--b-format", "tot", "--format", "json").stdout)
    row = meta["evaluations"][0]
    assert (row["spearman"], row["kendall"], row["tau_ap"]) == (
        correlated["spearman"], correlated["kendall"], correlated["tau_ap"])
    bad = run("meta-evaluate", "-w", str(ws), "--official-format", "tot")
    assert bad.exit_code == 2 and "--official-format go with --official FILE" in bad.output


def test_correlate_s_format_options_go_with_a_file(ws):
    (ws / "b.tot").write_text("A m q1 1\n")
    result = run("correlate", "--a-qrels", "x", "--a-measure", "P@1", "--a-format", "tot", "--b", str(ws / "b.tot"))
    assert result.exit_code == 2 and "--a-format go with a leaderboard file" in result.output
    ranks = run("correlate", "--a", str(ws / "b.tot"), "--a-format", "tot", "--a-ranks", "--b", str(ws / "b.tot"))
    assert ranks.exit_code == 2 and "hold scores, not ranks" in ranks.output
    folder = run("correlate", "--a", str(ws / "runs"), "--b", str(ws / "b.tot"), "--b-format", "tot")
    assert folder.exit_code == 1 and "a folder: give a leaderboard file" in folder.output


def test_nuggets_score_writes_every_run_on_every_topic_and_the_complete_means(write):
    from test_nugget_scores import HAND, MEASURES

    path = write("a.jsonl", HAND)
    result = run("nuggets", "score", str(path), "--format", "ir_measures")
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    # r2 answered t1 only: t2 and t3 are written as 0, so its means are --complete's (1/3)
    assert [(t, m, v) for r, t, m, v in rows if r == "r2" and m == "V_strict"] == [
        ("t1", "V_strict", "1.0"), ("t2", "V_strict", "0.0"), ("t3", "V_strict", "0.0"),
        ("all", "V_strict", "0.333333333333")]
    complete = json.loads(run("nuggets", "score", str(path), "--complete", "--format", "json").stdout)
    assert {(r, m): float(v) for r, t, m, v in rows if t == "all"} == {
        (r, m): pytest.approx(complete[r][m], abs=1e-12) for r in ("r1", "r2") for m in MEASURES}
