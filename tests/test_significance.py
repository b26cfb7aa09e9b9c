"""The statistics on the command line and in the API, end to end on small files whose values are
known: leaderboard --bootstrap, correlate --bootstrap with per-query tables, significance (paired
tests, corrections, disagreements), and Krippendorff's alpha in agree."""
from __future__ import annotations

import io
import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from exampp.analysis.statistics import bootstrap_means, bootstrap_samples, correlation_intervals, paired_tests
from exampp.api.leaderboards import LeaderboardFile, QrelsMeasure
from exampp.api.significance import SignificanceJob
from exampp.cli import main
from exampp.errors import ExamppError, InputError
from exampp.formats.leaderboard import read_leaderboard, read_leaderboard_file

# Four queries, one relevant passage each ("rel"); P@1 of a run is 1 where its top passage is it.
P_AT_1 = {"good": [1, 1, 1, 1], "middle": [1, 1, 0, 0], "poor": [1, 0, 0, 0]}
QUERIES = ["q1", "q2", "q3", "q4"]


@pytest.fixture
def collection(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "qrels").write_text("".join(f"{q} 0 rel-{q} 1\n" for q in QUERIES))
    for run, hits in P_AT_1.items():
        lines = []
        for q, hit in zip(QUERIES, hits):
            first, second = (f"rel-{q}", "junk") if hit else ("junk", f"rel-{q}")
            lines += [f"{q} Q0 {first} 1 2.0 {run}\n", f"{q} Q0 {second} 2 1.0 {run}\n"]
        (tmp_path / "runs" / f"{run}.run").write_text("".join(lines))
    return tmp_path


def invoke(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def per_query_tsv(path, values: dict[str, list[float]], measure="P@1"):
    rows = ["run\tquery_id\tmeasure\tvalue"] + [f"{run}\t{q}\t{measure}\t{v}" for run, vs in values.items()
                                                for q, v in zip(QUERIES, vs)]
    path.write_text("\n".join(rows) + "\n")
    return path


def read_tsv(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), sep="\t")


def test_leaderboard_bootstrap_columns_equal_a_plain_loop(collection):
    out = invoke("leaderboard", collection / "runs", "--qrels", collection / "qrels", "-m", "P@1", "-m", "RR",
                 "--bootstrap", 200, "--seed", 4, "--confidence", 0.8, "--format", "tsv")
    table = read_tsv(out).set_index("run")
    assert list(table.columns) == ["P@1", "P@1_low", "P@1_high", "RR", "RR_low", "RR_high"]
    assert list(table.index) == ["good", "middle", "poor"]  # best first by P@1
    plain = read_tsv(invoke("leaderboard", collection / "runs", "--qrels", collection / "qrels", "-m", "P@1",
                            "-m", "RR", "--format", "tsv")).set_index("run")
    assert table["P@1"].equals(plain["P@1"]) and table["RR"].equals(plain["RR"])  # the same means, exactly
    draws = bootstrap_samples(4, 200, seed=4)
    level = 1 - 2 * stats.norm.sf(stats.t.ppf(0.9, 3) * math.sqrt(4 / 3))  # 80% expanded for 4 queries

    def interval(scores: np.ndarray) -> tuple[float, float]:
        reach = np.quantile([abs(scores[draw].mean() - scores.mean()) for draw in draws], level)
        return max(scores.mean() - reach, scores.min()), min(scores.mean() + reach, scores.max())

    for run, hits in P_AT_1.items():
        assert (table.at[run, "P@1_low"], table.at[run, "P@1_high"]) == pytest.approx(interval(np.array(hits)))
        # RR: 1 where the relevant passage is first, else 1/2
        rr = np.array([1 if h else 0.5 for h in hits])
        assert (table.at[run, "RR_low"], table.at[run, "RR_high"]) == pytest.approx(interval(rr))
    assert table.at["good", "P@1_low"] == table.at["good", "P@1_high"] == 1.0


def test_leaderboard_bootstrap_refuses_per_query(collection):
    result = CliRunner().invoke(main, ["leaderboard", str(collection / "runs"), "--qrels", str(collection / "qrels"),
                                       "--per-query", "--bootstrap", "10"])
    assert result.exit_code == 2 and "drop --per-query" in result.output


def test_per_query_tables_read_as_leaderboards(tmp_path):
    path = per_query_tsv(tmp_path / "pq.tsv", P_AT_1)
    board, table = read_leaderboard_file(path)
    assert board == {"good": 1.0, "middle": 0.5, "poor": 0.25}
    assert table.loc["middle"].tolist() == [1, 1, 0, 0] and list(table.columns) == QUERIES
    assert read_leaderboard(path, column="P@1") == board
    # JSON records (leaderboard --per-query --format json) and cover's table with its score columns
    records = [{"run": run, "query_id": q, "covered": v, "total": 1, "cover": v}
               for run, vs in P_AT_1.items() for q, v in zip(QUERIES, vs) if not (run == "poor" and q == "q4")]
    (tmp_path / "cover.json").write_text(json.dumps(records))
    board, table = read_leaderboard_file(tmp_path / "cover.json")
    assert board == {"good": 1.0, "middle": 0.5, "poor": 0.25} and table.at["poor", "q4"] == 0.0  # missing: 0
    assert read_leaderboard(tmp_path / "cover.json", column="total") == {"good": 1.0, "middle": 1.0, "poor": 0.75}


@pytest.mark.parametrize("text, column, message", [
    ("run\tquery_id\tmeasure\tvalue\na\tq1\tP@1\t1\na\tq1\tAP\t1\n", None, "several measures (P@1, AP)"),
    ("run\tquery_id\tmeasure\tvalue\na\tq1\tP@1\t1\n", "AP", "no measure 'AP'"),
    ("run\tquery_id\tscore\na\tq1\t1\na\tq1\t2\n", None, ":3: duplicate run 'a' and query 'q1'"),
    ("run\tquery_id\tscore\na\tq1\tx\n", None, ":2: score 'x' is not a number"),
    ("run\tquery_id\tscore\na\tq1\n", None, ":2: expected 3 fields, found 2"),
    ("run\tquery_id\tx\ty\na\tq1\t1\t2\n", None, "several score columns (x, y)"),
])
def test_per_query_table_errors(write, text, column, message):
    with pytest.raises(InputError, match=re.escape(message)):
        read_leaderboard_file(write("pq.tsv", text), column=column)


def test_correlate_bootstrap_with_per_query_tables(collection, tmp_path):
    other = {"good": [1, 0, 1, 1], "middle": [0, 1, 0, 0], "poor": [1, 1, 0, 0]}
    b = per_query_tsv(tmp_path / "b.tsv", other)
    out = json.loads(invoke("correlate", "--runs", collection / "runs", "--a-qrels", collection / "qrels",
                            "--a-measure", "P@1", "--b", b, "--bootstrap", 300, "--seed", 2, "--top", 2,
                            "--format", "json"))
    assert out["bootstrap"] == {"n": 300, "seed": 2, "confidence": 0.95, "top": 2, "n_queries": 4}
    expected = correlation_intervals(pd.DataFrame(P_AT_1, index=QUERIES).T, pd.DataFrame(other, index=QUERIES).T,
                                     n=300, seed=2, top=2)
    got = {row["statistic"]: row for row in out["intervals"]}
    for name, row in expected.iterrows():
        for key in ("value", "low", "high"):
            assert (got[name][key] is None and math.isnan(row[key])) or got[name][key] == pytest.approx(row[key])
    assert got["kendall"]["value"] == pytest.approx(out["kendall"])
    text = invoke("correlate", "--runs", collection / "runs", "--a-qrels", collection / "qrels", "--a-measure", "P@1",
                  "--b", b, "--bootstrap", 300, "--seed", 2)
    assert "95% intervals: bootstrap of 300 resamplings of 4 queries (seed 2)" in text
    tsv = read_tsv(invoke("correlate", "--runs", collection / "runs", "--a-qrels", collection / "qrels",
                          "--a-measure", "P@1", "--b", b, "--bootstrap", 300, "--seed", 2, "--format", "tsv"))
    assert list(tsv.columns) == ["measure", "value", "p_value", "low", "high"]
    assert list(tsv["measure"]) == ["spearman", "kendall", "pearson", "tau_ap", "kendall_top", "tau_ap_b", "tau_gap"]


def test_correlate_bootstrap_needs_per_query_scores(collection, write):
    board = write("board.tsv", "good 1\nmiddle 0.5\npoor 0.25\n")
    result = CliRunner().invoke(main, ["correlate", "--runs", str(collection / "runs"), "--a-qrels",
                                       str(collection / "qrels"), "--a-measure", "P@1", "--b", str(board),
                                       "--bootstrap", "10"])
    assert result.exit_code == 1
    assert ("the bootstrap needs per-query scores, and leaderboard B" in result.output
            and "one score per run" in result.output)


def test_significance_t_test_by_hand(collection):
    out = json.loads(invoke("significance", "--runs", collection / "runs", "--qrels", collection / "qrels",
                            "-m", "P@1", "--format", "json"))
    pairs = {(row["a"], row["b"]): row for row in out["a"]["tests"]}
    assert list(pairs) == [("good", "middle"), ("good", "poor"), ("middle", "poor")]
    p = {pair: stats.ttest_rel(P_AT_1[pair[0]], P_AT_1[pair[1]]).pvalue for pair in pairs}
    for pair, row in pairs.items():
        assert row["p_value"] == pytest.approx(p[pair])
    # Holm by hand: good-poor (diffs 0,1,1,1) is the smallest p, times 3; then x2, x1, running max
    ordered = sorted(pairs, key=p.get)
    holm = [min(1, 3 * p[ordered[0]])]
    holm.append(max(holm[0], min(1, 2 * p[ordered[1]])))
    holm.append(max(holm[1], min(1, p[ordered[2]])))
    for pair, adjusted in zip(ordered, holm):
        assert pairs[pair]["p_adjusted"] == pytest.approx(adjusted)
    assert out["a"]["significant"] == sum(a < 0.05 for a in holm)
    assert out["a"]["discriminative_power"] == pytest.approx(out["a"]["significant"] / 3)


def test_significance_versus_finds_the_swapped_pairs(collection, tmp_path):
    # B swaps middle and poor: poor [1,1,1,0] > middle [1,0,0,0]
    versus = per_query_tsv(tmp_path / "b.tsv", {"good": [1, 1, 1, 1], "middle": [1, 0, 0, 0], "poor": [1, 1, 1, 0]})
    result = SignificanceJob(QrelsMeasure(collection / "qrels", "P@1"), LeaderboardFile(versus),
                             runs=collection / "runs", test="randomization", permutations=2000, seed=3,
                             correction="none").run()
    table = result.disagreements
    assert table[["a", "b"]].values.tolist() == [["middle", "poor"]]
    assert tuple(table.iloc[0][["mean_a_in_A", "mean_b_in_A", "mean_a_in_B", "mean_b_in_B"]]) == (0.5, 0.25, 0.25, 0.75)
    # the middle-poor differences in A are (0, 1, 0, 0): every sign vector reaches |sum| 1, so p = 1
    assert table.at[0, "p_adjusted_in_A"] == 1.0
    assert result.disagreement_counts() == {"pairs": 1, "significant_in_A": 0, "significant_in_B": 0,
                                            "significant_in_both": 0}
    expected = paired_tests(result.b.scores, test="randomization", n=2000, seed=3, correction="none")
    pd.testing.assert_frame_equal(result.b.tests, expected)
    text = invoke("significance", "--runs", collection / "runs", "--qrels", collection / "qrels", "-m", "P@1",
                  "--versus", versus, "--correction", "bh")
    assert "A and B order 1 run pairs oppositely; of those, significant in A: 0, in B: 0, in both: 0" in text
    assert "paired t-test, Benjamini-Hochberg correction, alpha 0.05" in text
    tsv = read_tsv(invoke("significance", "--table", versus, "--versus-qrels", collection / "qrels",
                          "--versus-measure", "P@1", "--runs", collection / "runs", "--format", "tsv"))
    assert tsv[["a", "b"]].values.tolist() == [["poor", "middle"]]


def test_significance_errors(collection, write):
    board = write("board.tsv", "good 1\nmiddle 0.5\n")
    result = CliRunner().invoke(main, ["significance", "--table", str(board)])
    assert result.exit_code == 1 and "paired tests needs per-query scores" in result.output
    result = CliRunner().invoke(main, ["significance", "--qrels", str(collection / "qrels"), "-m", "P@1"])
    assert result.exit_code == 2 and "--qrels needs --runs DIR" in result.output
    with pytest.raises(ExamppError, match="unknown test"):
        SignificanceJob(LeaderboardFile(board), test="wilcoxon").run()
    table = per_query_tsv(collection / "p1.tsv", P_AT_1)
    with pytest.raises(ExamppError, match="--exclude names no run read: nosuch"):
        SignificanceJob(LeaderboardFile(table), exclude=["nosuch"]).run()
    one_query = write("one.tsv", "run\tquery_id\tvalue\ngood\tq1\t1\nmiddle\tq1\t1\npoor\tq1\t0\n")
    with pytest.raises(ExamppError, match="1 query, a paired t-test needs 2"):
        SignificanceJob(LeaderboardFile(one_query)).run()
    # the randomisation test takes one query: a single sign flip decides nothing, p = 1 with n flips
    assert SignificanceJob(LeaderboardFile(one_query), test="randomization", permutations=99).run().a.n_significant == 0


def test_agree_alpha_by_hand(write):
    # three passages (EXAM, official): (0,0) (1,1) (0,1)
    exam = write("exam.qrels", "q 0 a 0\nq 0 b 1\nq 0 c 0\n")
    official = write("official.qrels", "q 0 a 0\nq 0 b 1\nq 0 c 1\n")
    report = json.loads(invoke("agree", "--exam", exam, "--official", official, "--format", "json"))
    # coincidences o00 = o11 = 2, o01 = o10 = 1; n0 = n1 = 3, n = 6: alpha = 1 - 5 * 2 / (2 * 3 * 3) = 4/9
    # (two values: the ordinal and nominal metrics coincide); kappa: p_o = 2/3, p_e = 4/9 -> 2/5
    assert report["alpha_ordinal"] == pytest.approx(4 / 9)
    assert report["thresholds"][0]["kappa"] == pytest.approx(0.4)
    assert report["thresholds"][0]["alpha"] == pytest.approx(4 / 9)
    text = invoke("agree", "--exam", exam, "--official", official)
    assert "Krippendorff's alpha (ordinal) of EXAM label and official grade: 0.4444" in text


def test_agree_ordinal_alpha_matches_the_krippendorff_package(write):
    krippendorff = pytest.importorskip("krippendorff")
    exam = {"a": 5, "b": 3, "c": 0, "d": 4, "e": 1, "f": 2, "g": 5}
    official = {"a": 2, "b": 0, "c": 1, "d": 1, "e": 0, "f": 1, "h": 3}
    e = write("exam.qrels", "".join(f"q 0 {d} {g}\n" for d, g in exam.items()))
    o = write("official.qrels", "".join(f"q 0 {d} {g}\n" for d, g in official.items()))
    report = json.loads(invoke("agree", "--exam", e, "--official", o, "--format", "json"))
    common = sorted(exam.keys() & official.keys())
    data = np.array([[exam[d] for d in common], [official[d] for d in common]], dtype=float)
    assert report["alpha_ordinal"] == pytest.approx(krippendorff.alpha(reliability_data=data,
                                                                       level_of_measurement="ordinal"))


def test_bootstrap_means_of_a_cover_table():
    # what `exampp cover --bootstrap` will call: bootstrap_means on the pivoted per-query table
    from exampp.analysis.statistics import scores_table

    long = pd.DataFrame({"run": ["a"] * 4 + ["b"] * 4, "query_id": QUERIES * 2,
                         "cover": [0.5, 1.0, 0.0, 0.5, 0.25, 0.25, 0.25, 0.25]})
    result = bootstrap_means(scores_table(long, "cover"), n=100, seed=0)
    assert result.at["a", "mean"] == 0.5 and tuple(result.loc["b"]) == (0.25, 0.25, 0.25)


def test_per_query_correlation_of_table_files(collection, tmp_path):
    a = per_query_tsv(tmp_path / "a.tsv", P_AT_1)
    b = per_query_tsv(tmp_path / "b.tsv", {"good": [1, 0, 1, 1], "middle": [0, 1, 0, 0], "poor": [1, 1, 0, 0]})
    from_files = json.loads(invoke("correlate", "--a", a, "--b", b, "--per-query", "--format", "json"))
    from_qrels = json.loads(invoke("correlate", "--runs", collection / "runs", "--a-qrels", collection / "qrels",
                                   "--a-measure", "P@1", "--b", b, "--per-query", "--format", "json"))
    assert from_files["per_query"] == from_qrels["per_query"] and len(from_files["per_query"]) == 4
    assert from_files["kendall"] == pytest.approx(from_qrels["kendall"])
