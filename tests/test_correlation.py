"""Leaderboard correlation: hand-worked values, ties, τ_AP asymmetry, leaderboard files, the CLI."""
from __future__ import annotations

import gzip
import json
import math
import warnings

import pandas as pd
import pytest
from click.testing import CliRunner

from exampp.analysis.correlation import correlate, per_query_correlation, round_scores, side_by_side, tau_ap
from exampp.cli import main
from exampp.errors import InputError
from exampp.formats.leaderboard import read_leaderboard, write_leaderboard

# Reference A ranks a > b > c > d; B ranks b > c > a > d.
A = {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}
B = {"b": 4.0, "c": 3.0, "a": 2.0, "d": 1.0}


def test_hand_worked_no_ties():
    r = correlate(A, B)
    # Spearman: ranks A (a,b,c,d) = 1,2,3,4; B = 3,1,2,4; d = -2,1,1,0; Σd² = 6
    #   ρ = 1 - 6·6 / (4·(16-1)) = 1 - 36/60 = 0.4
    assert r.spearman == pytest.approx(0.4)
    # Kendall: discordant (a,b), (a,c); concordant (a,d), (b,c), (b,d), (c,d): τ = (4-2)/6
    assert r.kendall == pytest.approx(1 / 3)
    # Pearson: the scores are the ranks mirrored, so r = ρ
    assert r.pearson == pytest.approx(0.4)
    # τ_AP(A, B) walks B's order b, c, a, d and checks against A:
    #   c: above {b}, b>c in A -> 1/1;  a: above {b,c}, neither above a in A -> 0/2;
    #   d: above {b,c,a}, all above d in A -> 3/3;  τ_AP = 2/3 · (1 + 0 + 1) - 1 = 1/3
    assert r.tau_ap == pytest.approx(1 / 3)
    assert r.n_systems == 4 and r.only_in_first == [] and r.only_in_second == []
    assert 0 < r.kendall_p < 1 and 0 < r.spearman_p < 1 and 0 < r.pearson_p < 1


def test_tau_ap_is_asymmetric():
    # τ_AP(B, A) walks A's order a, b, c, d and checks against B:
    #   b: above {a}, a below b in B -> 0/1;  c: above {a,b}, only b above c in B -> 1/2;
    #   d: 3/3;  τ_AP = 2/3 · (0 + 1/2 + 1) - 1 = 0
    assert correlate(B, A).tau_ap == pytest.approx(0.0)
    assert correlate(A, B).tau_ap == pytest.approx(1 / 3)
    assert correlate(B, A).kendall == pytest.approx(correlate(A, B).kendall)


def test_tau_ap_weights_the_top():
    ref = [4, 3, 2, 1]
    # swap at the top: walk (2,1,3,4): 0/1, 2/2, 3/3 -> 2/3 · 2 - 1 = 1/3
    assert tau_ap(ref, [3, 4, 2, 1]) == pytest.approx(1 / 3)
    # swap at the bottom: walk (1,2,4,3): 1/1, 2/2, 2/3 -> 2/3 · 8/3 - 1 = 7/9
    assert tau_ap(ref, [4, 3, 1, 2]) == pytest.approx(7 / 9)
    assert tau_ap(ref, ref) == 1.0 and tau_ap(ref, ref[::-1]) == -1.0


# Published test vectors of Urbano's R package ircor (tests/testthat/helper_data.R, test_tauAP.R):
# tauAP(x, y) (no ties) and the symmetric tauAP_b = mean of both directions (ties in both).
IRCOR = [
    ([0.897, 0.372, 0.908, 0.898, 0.661, 0.062, 0.177, 0.384, 0.498, 0.992],
     [0.82, 0.406, 0.817, 0.953, 0.673, 0.073, 0.364, 0.547, 0.589, 0.988],
     [0.9, 0.4, 0.9, 0.9, 0.7, 0.1, 0.2, 0.4, 0.5, 1],
     [0.8, 0.4, 0.8, 1, 0.7, 0.1, 0.4, 0.5, 0.6, 1], 0.8519, 0.8333, 0.7321),
    ([0.266, 0.573, 0.202, 0.945, 0.629, 0.206, 0.687, 0.77, 0.718, 0.38],
     [0.263, 0.843, 0.728, 0.928, 0.08, 0.114, 0.467, 0.641, 0.973, 0.644],
     [0.3, 0.6, 0.2, 0.9, 0.6, 0.2, 0.7, 0.8, 0.7, 0.4],
     [0.3, 0.8, 0.7, 0.9, 0.1, 0.1, 0.5, 0.6, 1, 0.6], 0.2504, 0.2880, 0.297),
    ([0.185, 0.573, 0.944, 0.129, 0.468, 0.553, 0.761, 0.405, 0.976, 0.445],
     [0.845, 0.272, 0.275, 0.924, 0.605, 0.334, 0.162, 0.872, 0.018, 0.25],
     [0.2, 0.6, 0.9, 0.1, 0.5, 0.6, 0.8, 0.4, 1, 0.4],
     [0.8, 0.3, 0.3, 0.9, 0.6, 0.3, 0.2, 0.9, 0, 0.2], -0.6971, -0.668, -0.7047),
]


@pytest.mark.parametrize("x, y, x_ties, y_ties, tau_ap_xy, symmetric, symmetric_ties", IRCOR)
def test_tau_ap_matches_ircor(x, y, x_ties, y_ties, tau_ap_xy, symmetric, symmetric_ties):
    assert tau_ap(x, y) == pytest.approx(tau_ap_xy, abs=5e-5)
    assert (tau_ap(x, y) + tau_ap(y, x)) / 2 == pytest.approx(symmetric, abs=5e-5)
    assert (tau_ap(x_ties, y_ties) + tau_ap(y_ties, x_ties)) / 2 == pytest.approx(symmetric_ties, abs=5e-5)


def test_ties_handled_as_ties():
    tied = {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}  # b and c tie
    strict = {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.0}
    r = correlate(tied, strict)
    # τ-b: 5 concordant pairs, 0 discordant, (b,c) tied in the first: 5 / sqrt((6-1)(6-0))
    assert r.kendall == pytest.approx(5 / math.sqrt(30))
    # Spearman on average ranks (1, 2.5, 2.5, 4) vs (1, 2, 3, 4): deviations (-1.5,0,0,1.5), (-1.5,-.5,.5,1.5)
    #   ρ = 4.5 / sqrt(4.5 · 5)
    assert r.spearman == pytest.approx(4.5 / math.sqrt(22.5))
    # τ_AP(tied, strict) walks a, b, c, d: b: 1/1; c: a>c yes, b>c no (a tie is not concordant) -> 1/2; d: 3/3
    #   = 2/3 · 2.5 - 1 = 2/3
    assert r.tau_ap == pytest.approx(2 / 3)
    # τ_AP(strict, tied) walks the tie groups a | b c | d: b and c each have only a above -> 1/1, d: 3/3 -> 1
    assert correlate(strict, tied).tau_ap == pytest.approx(1.0)
    assert correlate(tied, tied).tau_ap == 1.0 and correlate(tied, tied).kendall == pytest.approx(1.0)


def test_rounding_restores_ties_broken_by_float_summation():
    first = {"x": 0.1 + 0.2, "y": 0.3, "z": 0.0}  # 0.30000000000000004 > 0.3: a spurious order
    second = {"x": 1.0, "y": 2.0, "z": 0.0}
    # exact: (x,y) discordant, (x,z) and (y,z) concordant: τ = (2-1)/3
    assert correlate(first, second, decimals=None).kendall == pytest.approx(1 / 3)
    # rounded: x and y tie in the first: τ-b = 2 / sqrt((3-1)(3-0))
    assert correlate(first, second).kendall == pytest.approx(2 / math.sqrt(6))
    assert round_scores(first) == {"x": 0.3, "y": 0.3, "z": 0.0}
    assert round_scores({"x": 0.123456}, 2) == {"x": 0.12}


def test_missing_and_excluded_systems_are_listed():
    first = {**A, "only1": 9.0, "gone": 1.5}
    second = {**B, "only2": 0.0, "gone": 2.5}
    r = correlate(first, second, exclude=["gone"])
    assert (r.only_in_first, r.only_in_second, r.excluded, r.n_systems) == (["only1"], ["only2"], ["gone"], 4)
    assert r.tau_ap == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="typo"):
        correlate(first, second, exclude=["typo"])


def test_undefined_correlations_are_nan_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        flat = correlate(A, {s: 1.0 for s in A})
        single = correlate({"a": 1.0}, {"a": 2.0})
    assert math.isnan(flat.kendall) and math.isnan(flat.spearman) and math.isnan(flat.tau_ap)
    assert single.n_systems == 1 and math.isnan(single.pearson) and math.isnan(single.tau_ap)


def test_side_by_side_ranks_ties_share_the_best_rank():
    table = side_by_side({"a": 1.0, "b": 2.0, "c": 2.0}, {"a": 3.0, "b": 1.0, "c": 2.0, "x": 0.0})
    # b and c share A's rank 1 and are ordered by B's rank
    assert list(table.index) == ["c", "b", "a"]
    assert list(table["a rank"]) == [1, 1, 3] and list(table["b rank"]) == [2, 3, 1]


def test_per_query_correlation():
    first = pd.DataFrame({"q1": [3.0, 2.0, 1.0], "q2": [3.0, 2.0, 1.0], "q3": [1.0, 2.0, 3.0]},
                         index=["r1", "r2", "r3"])
    second = pd.DataFrame({"q1": [3.0, 2.0, 1.0], "q2": [1.0, 2.0, 3.0], "q4": [0.0, 0.0, 0.0]},
                          index=["r1", "r2", "r3"])
    second.loc["r4"] = [5.0, math.nan, 1.0]  # r4 has no score for q2; it is not in the first table at all
    result = per_query_correlation(first, second)
    assert list(result.per_query.index) == ["q1", "q2"]
    assert list(result.per_query["kendall"]) == pytest.approx([1.0, -1.0])
    assert list(result.per_query["tau_ap"]) == pytest.approx([1.0, -1.0])
    assert list(result.per_query["n_systems"]) == [3, 3]
    assert result.summary.loc["mean", "kendall"] == pytest.approx(0.0)
    assert result.summary.loc["median", "spearman"] == pytest.approx(0.0)
    assert (result.only_in_first, result.only_in_second) == (["q3"], ["q4"])
    excluded = per_query_correlation(first, second, exclude=["r3"])
    assert list(excluded.per_query["n_systems"]) == [2, 2]


# --- leaderboard files ---------------------------------------------------------------------


def test_read_text_leaderboard_with_comments_header_and_whitespace(write):
    path = write("board.tsv", "# official\nrun\tscore\n\nr1\t0.5\n  r2   0.25  \n# done\nr3 1e-1\n")
    assert read_leaderboard(path) == {"r1": 0.5, "r2": 0.25, "r3": 0.1}


def test_read_ranks(write):
    board = read_leaderboard(write("ranks.txt", "r1 2\nr2 1\nr3 3\n"), ranks=True)
    assert board == {"r1": -2.0, "r2": -1.0, "r3": -3.0}
    assert correlate(board, {"r1": 0.5, "r2": 0.9, "r3": 0.1}).kendall == pytest.approx(1.0)


def test_read_multi_column_table(write):
    path = write("table.tsv", "run\tnDCG@10\tP@20\nr1\t0.5\t0.1\nr2\t0.4\t0.2\n")
    assert read_leaderboard(path, column="P@20") == {"r1": 0.1, "r2": 0.2}
    assert read_leaderboard(path, column="nDCG@10") == {"r1": 0.5, "r2": 0.4}
    with pytest.raises(InputError, match=r"table.tsv:1: several score columns \(nDCG@10, P@20\)"):
        read_leaderboard(path)
    with pytest.raises(InputError, match=r"table.tsv:1: no column 'MAP'; columns are nDCG@10, P@20"):
        read_leaderboard(path, column="MAP")
    with pytest.raises(InputError, match="board.tsv:1: no header line"):
        read_leaderboard(write("board.tsv", "r1 0.5\n"), column="P@20")


def test_read_json_leaderboards(write):
    assert read_leaderboard(write("a.json", '{"r1": 0.5, "r2": 1}')) == {"r1": 0.5, "r2": 1.0}
    records = '[{"run": "r1", "score": 0.5}, {"run": "r2", "score": 0.25}]'
    assert read_leaderboard(write("b.json", records)) == {"r1": 0.5, "r2": 0.25}
    measures = '{"r1": {"nDCG@10": 0.5, "P@20": 0.1}, "r2": {"nDCG@10": 0.4, "P@20": 0.2}}'
    assert read_leaderboard(write("c.json", measures), column="P@20") == {"r1": 0.1, "r2": 0.2}
    table = '[{"run": "r1", "P@20": 3}, {"run": "r2", "P@20": 1}]'
    assert read_leaderboard(write("d.json", table), column="P@20", ranks=True) == {"r1": -3.0, "r2": -1.0}


def test_read_gzipped(tmp_path):
    path = tmp_path / "board.tsv.gz"
    path.write_bytes(gzip.compress(b"r1\t0.5\nr2\t0.7\n"))
    assert read_leaderboard(path) == {"r1": 0.5, "r2": 0.7}


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("dup.tsv", "run score\nr1 0.5\n# c\nr1 0.7\n", r"dup.tsv:4: duplicate run 'r1'"),
        ("nan.tsv", "r1 0.5\nr2 high\n", r"nan.tsv:2: score 'high' is not a number"),
        ("inf.tsv", "r1 0.5\nr2 inf\n", r"inf.tsv:2: score 'inf' is not a finite number"),
        ("width.tsv", "r1 0.5\nr2 0.7 0.1\n", r"width.tsv:2: expected 2 fields, found 3"),
        ("one.tsv", "# x\nr1\n", r"one.tsv:2: expected 'run score', found 1 field"),
        ("empty.tsv", "", r"empty.tsv: empty leaderboard"),
        ("header.tsv", "# only\nrun score\n", r"header.tsv: empty leaderboard"),
        ("dup.json", '{\n "r1": 0.5,\n "r1": 0.7\n}', r"dup.json:3: duplicate key 'r1'"),
        ("bad.json", '{\n "r1": 0.5,\n "r2": "x"\n}', r"bad.json:3: run 'r2': score 'x' is not a number"),
        ("rec.json", '[\n {"run": "r1", "score": 1},\n {"run": "r1", "score": 2}\n]',
         r"rec.json:3: duplicate run 'r1'"),
        ("key.json", '[\n {"run": "r1", "score": 1},\n {"run": "r2", "value": 2}\n]',
         r"key.json:3: record 2: expected"),
        ("broken.json", '{"r1": 0.5,\n"r2" 1}', r"broken.json:2: invalid JSON"),
        ("empty.json", "[]", r"empty.json: empty leaderboard"),
    ],
)
def test_bad_leaderboard_files(write, name, text, message):
    with pytest.raises(InputError, match=message):
        read_leaderboard(write(name, text), ranks=False)


def test_bad_rank_is_named_rank(write):
    with pytest.raises(InputError, match=r"r.txt:2: rank 'first' is not a number"):
        read_leaderboard(write("r.txt", "r0 1\nr1 first\n"), ranks=True)


@pytest.mark.parametrize("name", ["board.tsv", "board.json", "board.json.gz"])
def test_write_read_round_trip(tmp_path, name):
    board = {"r1": 0.1 + 0.2, "r2": 1 / 3, "r3": 0.9}
    write_leaderboard(board, tmp_path / name)
    assert read_leaderboard(tmp_path / name) == board  # floats kept exactly
    if name == "board.tsv":
        lines = (tmp_path / name).read_text().splitlines()
        assert lines[0] == "run\tscore" and [ln.split("\t")[0] for ln in lines[1:]] == ["r3", "r2", "r1"]


@pytest.mark.parametrize("name", ["table.tsv", "table.json"])
def test_write_read_table_round_trip(tmp_path, name):
    table = pd.DataFrame({"nDCG@10": [0.5, 0.7], "P@20": [0.25, 0.125]}, index=pd.Index(["r1", "r2"], name="run"))
    write_leaderboard(table, tmp_path / name)
    assert read_leaderboard(tmp_path / name, column="P@20") == {"r1": 0.25, "r2": 0.125}
    assert read_leaderboard(tmp_path / name, column="nDCG@10") == {"r1": 0.5, "r2": 0.7}


# --- CLI -------------------------------------------------------------------------------------


def _invoke(*args: str):
    return CliRunner().invoke(main, ["correlate", *args])


def test_cli_files_json(write):
    a = write("a.tsv", "run\tscore\n" + "".join(f"{s}\t{v}\n" for s, v in {**A, "extra": 0.5}.items()))
    b = write("b.json", json.dumps({**B, "new": 0.1}))
    result = _invoke("--a", str(a), "--b", str(b), "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["spearman"] == pytest.approx(0.4) and report["kendall"] == pytest.approx(1 / 3)
    assert report["pearson"] == pytest.approx(0.4) and report["tau_ap"] == pytest.approx(1 / 3)
    assert report["n_systems"] == 4 and report["only_in_a"] == ["extra"] and report["only_in_b"] == ["new"]
    assert report["tau_ap_reference"] == "a"
    swapped = json.loads(_invoke("--a", str(b), "--b", str(a), "--format", "json").output)
    assert swapped["tau_ap"] == pytest.approx(0.0) and swapped["only_in_a"] == ["new"]


def test_cli_ranks_column_exclude_and_show(write):
    a = write("a.txt", "a 1\nb 2\nc 3\nd 4\n")  # ranks: a best
    b = write("b.tsv", "run nDCG@10 P@20\na 0.1 2\nb 0.4 4\nc 0.3 3\nd 0.2 1\n")
    result = _invoke("--a", str(a), "--a-ranks", "--b", str(b), "--b-column", "P@20", "--exclude", "a", "--show")
    assert result.exit_code == 0, result.output
    assert "3 runs in both; tau_ap takes A as the reference" in result.output
    assert "excluded:  a" in result.output
    # side by side: ranks by A (b, c, d); P@20 ranks b 1, c 2, d 3
    rows = [line.split() for line in result.output.splitlines() if line.split()[:1] in (["b"], ["c"], ["d"])]
    assert [(r[0], r[1], r[3]) for r in rows] == [("b", "1", "1"), ("c", "2", "2"), ("d", "3", "3")]
    tsv = _invoke("--a", str(a), "--a-ranks", "--b", str(b), "--b-column", "P@20", "--exclude", "a", "--format", "tsv")
    assert tsv.output.splitlines()[1].split("\t")[:2] == ["spearman", "1.0"]


def test_cli_errors(write):
    a = write("a.tsv", "r1 0.5\nr1 0.7\n")
    b = write("b.tsv", "r1 0.5\nr2 0.7\n")
    bad = _invoke("--a", str(a), "--b", str(b))
    assert bad.exit_code == 1 and "a.tsv:2: duplicate run 'r1'" in bad.output
    assert _invoke("--b", str(b)).exit_code == 2  # no A
    both = _invoke("--a", str(b), "--a-qrels", str(b), "--b", str(b))
    assert both.exit_code == 2 and "exactly one of --a" in both.output
    assert "needs --runs" in _invoke("--a-qrels", str(b), "--a-measure", "P@2", "--b", str(b)).output
    assert "needs per-query scores" in _invoke("--a", str(b), "--b", str(b), "--per-query").output
    typo = _invoke("--a", str(b), "--b", str(b), "--exclude", "nope")
    assert typo.exit_code == 2 and "nope" in typo.output
    few = _invoke("--a", str(b), "--b", str(write("c.tsv", "x 1\ny 2\n")))
    assert few.exit_code == 1 and "0 run(s) in common" in few.output


def _collection(write):
    """Three runs over two queries, official and EXAM qrels (P@2 worked out in the test)."""
    write("runs/r1.run", "q1 Q0 d1 1 2 r1\nq1 Q0 d2 2 1 r1\nq2 Q0 d5 1 2 r1\nq2 Q0 d6 2 1 r1\n")
    write("runs/r2.run", "q1 Q0 d3 1 2 r2\nq1 Q0 d4 2 1 r2\nq2 Q0 d6 1 1 r2\n")
    write("runs/r3.run", "q1 Q0 d1 1 2 r3\nq1 Q0 d3 2 1 r3\nq2 Q0 d5 1 1 r3\n")
    official = write("official.qrels", "q1 0 d1 1\nq1 0 d2 1\nq1 0 d3 0\nq1 0 d4 0\nq2 0 d5 1\nq2 0 d6 0\n")
    exam = write("exam.qrels", "q1 0 d1 0\nq1 0 d2 1\nq1 0 d3 1\nq1 0 d4 0\nq2 0 d5 1\nq2 0 d6 1\n")
    return official.parent / "runs", official, exam


def test_cli_leaderboards_from_qrels(write):
    runs, official, exam = _collection(write)
    result = _invoke("--runs", str(runs), "--a-qrels", str(official), "--a-measure", "P@2",
                     "--b-qrels", str(exam), "--b-measure", "P@2", "--per-query", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    # P@2 official: r1 (1 + 1/2)/2 = .75, r2 0, r3 (1/2 + 1/2)/2 = .5; EXAM: r1 .75, r2 .5, r3 .5
    # τ-b: (r1,r2), (r1,r3) concordant, (r2,r3) tied in EXAM: 2 / sqrt(3 · 2)
    assert report["kendall"] == pytest.approx(2 / math.sqrt(6))
    # Spearman: ranks (r1, r2, r3) official (1, 3, 2), EXAM (1, 2.5, 2.5): 1.5 / sqrt(2 · 1.5)
    assert report["spearman"] == pytest.approx(1.5 / math.sqrt(3))
    # Pearson: deviations ×12 official (4, -5, 1), EXAM (2, -1, -1): 12 / sqrt(42 · 6)
    assert report["pearson"] == pytest.approx(12 / math.sqrt(252))
    # τ_AP walks EXAM's groups r1 | r2 r3: both have r1 above them, as in the official: 1
    assert report["tau_ap"] == pytest.approx(1.0)
    per_query = {row["query"]: row for row in report["per_query"]}
    assert per_query["q1"]["kendall"] is None  # EXAM P@2 is .5 for every run on q1
    # q2: official (.5, 0, .5), EXAM (1, .5, .5): one concordant pair, one tie on each side: 1 / sqrt(2 · 2)
    assert per_query["q2"]["kendall"] == pytest.approx(0.5)
    assert report["per_query_summary"]["mean"]["kendall"] == pytest.approx(0.5)


def test_cli_mixed_sources_text(write):
    runs, official, _ = _collection(write)
    board = write("exam.tsv", "r1 3\nr2 1\nr3 2\nr9 0\n")
    result = _invoke("--runs", str(runs), "--a-qrels", str(official), "--a-measure", "P@2", "--b", str(board))
    assert result.exit_code == 0, result.output
    assert "A: P@2 on" in result.output and "only in B: r9" in result.output
    tau_row = next(line.split() for line in result.output.splitlines() if line.strip().startswith("kendall"))
    assert tau_row[1] == "1.0000"


def test_cli_trec_eval_measure_names_and_mistakes(write):
    runs, official, exam = _collection(write)
    same = _invoke("--runs", str(runs), "--a-qrels", str(official), "--a-measure", "P_2",
                   "--b-qrels", str(official), "--b-measure", "P@2", "--per-query", "--format", "json")
    assert same.exit_code == 0, same.output
    assert json.loads(same.output)["kendall"] == pytest.approx(1.0)  # P_2 is trec_eval's name of P@2
    # checked before any file is read: the qrels named here do not exist
    for option, value, message in [
        ("--a-measure", "ndcg@10", "unknown measure 'ndcg@10'; did you mean nDCG@10?"),
        ("--a-measure", "P.5,10", "'P.5,10' names 2 measures (P@5, P@10); give one"),
    ]:
        bad = _invoke("--runs", str(runs), "--a-qrels", "missing.qrels", option, value,
                      "--b-qrels", str(exam), "--b-measure", "P@2")
        assert bad.exit_code == 2 and "Traceback" not in bad.output
        assert bad.output.splitlines()[-1] == f"Error: Invalid value for '{option}': {message}"
