"""`exampp nuggets score`: nugget scores of answers and runs (V_strict, A_strict, V, A, W_strict, W)
worked out by hand, against the ``nuggetizer`` package's scorer on the TREC 2024 RAG track's
assignments, bad input, and the leaderboards it writes read by correlate and significance."""
from __future__ import annotations

import gzip
import json
import random
from fractions import Fraction as F
from statistics import mean

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from nuggetizer.core.metrics import calculate_global_metrics
from scipy import stats

from conftest import jsonl, shared_path
from exampp.analysis.statistics import bootstrap_means
from exampp.api.nuggets import score_nuggets
from exampp.cli import main

OUTPUT = 1e-11  # the outputs hold floats to 12 significant digits
MEASURES = ["V_strict", "A_strict", "V", "A", "W_strict", "W"]
PACKAGE = {"V_strict": "strict_vital_score", "A_strict": "strict_all_score", "V": "vital_score", "A": "all_score"}


def answer(qid: str, run: str, nuggets: list[tuple[str, str, str]]) -> dict:
    return {"query": f"topic {qid}", "qid": qid, "run_id": run, "answer_text": f"{run} on {qid}",
            "nuggets": [{"text": t, "importance": i, "assignment": a} for t, i, a in nuggets]}


def nuggets_cli(*args) -> object:
    return CliRunner().invoke(main, ["nuggets", "score", *map(str, args)])


# t1: vital support, vital partial, okay support, okay not, okay not; t2: no vital nugget; t3: no nugget.
T1 = [("v1", "vital"), ("v2", "vital"), ("o1", "okay"), ("o2", "okay"), ("o3", "okay")]
T2 = [("o4", "okay"), ("o5", "okay")]
HAND = jsonl(
    answer("t1", "r1", [(t, i, a) for (t, i), a in zip(T1, ["support", "partial_support", "support",
                                                            "not_support", "not_support"])]),
    answer("t2", "r1", [(t, i, a) for (t, i), a in zip(T2, ["support", "partial_support"])]),
    answer("t3", "r1", []),
    answer("t1", "r2", [(t, i, "support") for t, i in T1]),
)
# by hand: V over the vitals, A over all, W weighted vital 1 okay 0.5 (total 3.5 on t1, 1 on t2);
# partial support 0.5, 0 in the strict scores; no nugget of a kind: 0
R1 = {"t1": {"V_strict": F(1, 2), "A_strict": F(2, 5), "V": F(3, 4), "A": F(1, 2),
             "W_strict": F(3, 2) / F(7, 2), "W": F(2) / F(7, 2)},
      "t2": {"V_strict": 0, "A_strict": F(1, 2), "V": 0, "A": F(3, 4), "W_strict": F(1, 2), "W": F(3, 4)},
      "t3": dict.fromkeys(MEASURES, 0)}


def test_per_answer_scores_worked_by_hand(write):
    result = nuggets_cli(write("a.jsonl", HAND), "--per-query", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    expected = [{"run": "r1", "query_id": q, **R1[q]} for q in ("t1", "t2", "t3")] + [
        {"run": "r2", "query_id": "t1", **dict.fromkeys(MEASURES, 1)}]
    assert rows == [{k: pytest.approx(float(v), rel=OUTPUT) if k in MEASURES else v for k, v in row.items()}
                    for row in expected]


def test_run_means_over_answered_topics_or_complete(write):
    path = write("a.jsonl", HAND)
    track = json.loads(nuggets_cli(path, "--format", "json").stdout)
    r1 = {m: float(sum(R1[q][m] for q in R1) / 3) for m in MEASURES}
    assert list(track) == ["r2", "r1"]  # best V_strict first
    assert track["r2"] == {**dict.fromkeys(MEASURES, 1.0), "n_topics": 1}
    assert track["r1"] == {**{m: pytest.approx(v, rel=OUTPUT) for m, v in r1.items()}, "n_topics": 3}
    complete = json.loads(nuggets_cli(path, "--format", "json", "--complete").stdout)
    assert complete["r2"] == {**{m: pytest.approx(1 / 3, rel=OUTPUT) for m in MEASURES}, "n_topics": 3}
    assert complete["r1"] == track["r1"]
    # ordered by the measure asked for: r1's A (5/12) beats r2's complete A (1/3)
    assert list(json.loads(nuggets_cli(path, "--format", "json", "--complete", "-m", "A").stdout)) == ["r1", "r2"]


def test_tsv_leaderboard_and_per_query_table(write, tmp_path):
    path = write("a.jsonl", HAND)
    assert nuggets_cli(path, "--format", "tsv", "-o", tmp_path / "board.tsv").exit_code == 0
    lines = (tmp_path / "board.tsv").read_text().splitlines()
    assert lines[0] == "run\tV_strict\tA_strict\tV\tA\tW_strict\tW\tn_topics"
    assert lines[1] == "r2\t1.0\t1.0\t1.0\t1.0\t1.0\t1.0\t1"
    per_query = nuggets_cli(path, "--per-query", "--format", "tsv").stdout.splitlines()
    assert per_query[0] == "run\tquery_id\tV_strict\tA_strict\tV\tA\tW_strict\tW"
    assert [line.split("\t")[:3] for line in per_query[1:]] == [
        ["r1", "t1", "0.5"], ["r1", "t2", "0.0"], ["r1", "t3", "0.0"], ["r2", "t1", "1.0"]]


def test_bootstrap_intervals_over_the_topics_each_run_answered(write):
    rng = random.Random(7)
    assignments = ("support", "partial_support", "not_support")
    nuggets = [("a", "vital"), ("b", "okay"), ("c", "vital")]
    lines = [answer(q, run, [(t, i, rng.choice(assignments)) for t, i in nuggets])
             for run in ("r1", "r2", "r3") for q in ("t1", "t2", "t3", "t4", "t5")
             if not (run == "r3" and q in ("t2", "t5"))]
    path = write("a.jsonl", jsonl(*lines))
    table = score_nuggets(path).per_answer.pivot(index="run", columns="query_id", values="W")
    for complete, expected in (
            (False, pd.concat([bootstrap_means(table.loc[["r1", "r2"]], 200, 3, 0.9),  # the same draws for both
                               bootstrap_means(table.loc[["r3"], ["t1", "t3", "t4"]], 200, 3, 0.9)])),
            (True, bootstrap_means(table.fillna(0.0), 200, 3, 0.9))):
        flags = ["--complete"] if complete else []
        result = nuggets_cli(path, "-m", "W", "--bootstrap", 200, "--seed", 3, "--confidence", 0.9,
                             "--format", "json", *flags)
        board = json.loads(result.stdout)
        assert list(next(iter(board.values()))) == [*MEASURES, "low", "high", "n_topics"]
        for run, row in board.items():
            assert (row["W"], row["low"], row["high"]) == pytest.approx(tuple(expected.loc[run]), rel=OUTPUT)
    result = nuggets_cli(path, "--bootstrap", 10, "--per-query")
    assert result.exit_code == 2 and "--bootstrap gives intervals of the means: drop --per-query" in result.stderr


TOPIC = [("A", "vital", "support"), ("B", "okay", "not_support")]
BAD = [
    ("not JSON", ['{"qid": "t1",'], 1, "invalid JSON: Expecting property name enclosed in double quotes at column 14"),
    ("missing qid", [answer("t1", "r", TOPIC), {k: v for k, v in answer("t2", "r", TOPIC).items() if k != "qid"}],
     2, "'qid' must be a string, found null"),
    ("importance high", [answer("t1", "r", [("A", "high", "support")])], 1,
     "nuggets[0].importance is 'high', not one of vital, okay"),
    ("assignment yes", [answer("t1", "r", [("A", "vital", "yes")])], 1,
     "nuggets[0].assignment is 'yes', not one of not_support, partial_support, support"),
    ("assignment missing", [{**answer("t1", "r", []), "nuggets": [{"text": "A", "importance": "vital"}]}], 1,
     "nuggets[0].assignment is null, not one of not_support, partial_support, support"),
    ("duplicate answer", [answer("t1", "r", TOPIC), answer("t2", "r", TOPIC), answer("t1", "r", TOPIC)], 3,
     "run 'r' already answered topic 't1' (line 1)"),
    ("other nuggets", [answer("t1", "r", TOPIC), answer("t1", "s", TOPIC[:1])], 2,
     "topic 't1' has other nuggets (or importance) than on line 1"),
    ("other importance", [answer("t1", "r", TOPIC), answer("t1", "s", [("A", "okay", "support"), TOPIC[1]])], 2,
     "topic 't1' has other nuggets (or importance) than on line 1"),
    ("no answer text", [{**answer("t1", "r", TOPIC), "answer_text": None}], 1,
     "'answer_text' must be a string, found null"),
    ("empty file", ["", "  "], None, "no answers: the file is empty"),
]


@pytest.mark.parametrize("lines, line, message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_assignments_are_one_line_naming_file_and_line(write, lines, line, message):
    path = write("assignments.jsonl", jsonl(*lines))
    result = nuggets_cli(path)
    assert result.exit_code == 1
    where = f"{path}:{line}" if line else str(path)
    assert result.stderr == f"Error: {where}: {message}\n"


def random_file(write, seed: int = 11) -> tuple:
    """Assignments of 6 runs on 4 topics (one run skips one), and each run's per-topic V_strict by
    the nuggetizer package."""
    rng = random.Random(seed)
    topics = {f"t{q}": [(f"n{q}-{i}", rng.choice(["vital", "okay"])) for i in range(rng.randint(2, 6))]
              for q in range(4)}
    lines = [answer(q, f"run{r}", [(t, i, rng.choice(["support", "partial_support", "not_support"]))
                                   for t, i in nuggets])
             for r in range(6) for q, nuggets in topics.items() if (r, q) != (5, "t2")]
    per_topic = {(line["run_id"], line["qid"]): calculate_global_metrics([line])["strict_vital_score"]
                 for line in lines}
    return write("a.jsonl", jsonl(*lines)), per_topic


def test_correlate_and_significance_take_the_leaderboards(write, tmp_path):
    path, per_topic = random_file(write)
    runs = sorted({run for run, _ in per_topic})
    topics = sorted({q for _, q in per_topic})
    track = [mean(v for (r, _), v in per_topic.items() if r == run) for run in runs]
    complete = np.array([[per_topic.get((run, q), 0.0) for q in topics] for run in runs])
    board, table = tmp_path / "board.json", tmp_path / "per-query.tsv"
    assert nuggets_cli(path, "--format", "json", "-o", board).exit_code == 0
    assert nuggets_cli(path, "--per-query", "--format", "tsv", "-o", table).exit_code == 0
    (tmp_path / "other.tsv").write_text("".join(f"{run}\t{i % 3}\n" for i, run in enumerate(runs)))
    result = CliRunner().invoke(main, ["correlate", "--a", str(board), "--a-column", "V_strict",
                                       "--b", str(tmp_path / "other.tsv"), "--format", "json", "--no-round"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["n_systems"] == 6
    assert out["kendall"] == pytest.approx(stats.kendalltau(track, [i % 3 for i in range(6)]).statistic, abs=1e-12)
    # the per-query table: a topic a run did not answer counts 0
    result = CliRunner().invoke(main, ["correlate", "--a", str(board), "--a-column", "V_strict", "--b", str(table),
                                       "--b-column", "V_strict", "--format", "json", "--no-round"])
    assert json.loads(result.stdout)["spearman"] == pytest.approx(
        stats.spearmanr(track, complete.mean(axis=1)).statistic, abs=1e-12)
    result = CliRunner().invoke(main, ["significance", "--table", str(table), "--column", "V_strict",
                                       "--correction", "none", "--format", "json"])
    assert result.exit_code == 0, result.output
    tests = json.loads(result.stdout)["a"]["tests"]
    assert len(tests) == 15
    for row in tests:
        a, b = complete[runs.index(row["a"])], complete[runs.index(row["b"])]
        assert (row["mean_a"], row["mean_b"]) == pytest.approx((a.mean(), b.mean()), abs=1e-12)
        assert row["p_value"] == pytest.approx(stats.ttest_rel(a, b).pvalue, abs=1e-12)


def raw(path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def weighted(nuggets: list[dict], strict: bool) -> float:
    """W / W_strict written out: Σ weight x support / Σ weight."""
    weight = {"vital": 1.0, "okay": 0.5}
    worth = {"support": 1.0, "partial_support": 0.0 if strict else 0.5, "not_support": 0.0}
    total = sum(weight[n["importance"]] for n in nuggets)
    return sum(weight[n["importance"]] * worth[n["assignment"]] for n in nuggets) / total if total else 0.0


@pytest.mark.shared
def test_the_track_leaderboard_equals_the_nuggetizer_package(tmp_path):
    path = shared_path("data", "rag24", "nugget-assignments.dev.jsonl.gz")
    by_run: dict[str, list[dict]] = {}
    for record in raw(path):
        by_run.setdefault(record["run_id"], []).append(record)
    result = nuggets_cli(path, "--format", "json")
    assert result.exit_code == 0, result.output
    board = json.loads(result.stdout)
    assert len(board) == len(by_run) == 45
    for run, records in by_run.items():
        package = calculate_global_metrics(records)
        expected = {**{m: package[key] for m, key in PACKAGE.items()},
                    "W_strict": mean(weighted(r["nuggets"], True) for r in records),
                    "W": mean(weighted(r["nuggets"], False) for r in records), "n_topics": len(records)}
        assert board[run] == {m: pytest.approx(v, abs=1e-12) for m, v in expected.items()}, run
    strict = sorted(by_run, key=lambda run: (-calculate_global_metrics(by_run[run])["strict_vital_score"], run))
    assert list(board) == strict
