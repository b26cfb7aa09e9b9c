"""The jobs of exampp.api called from Python: cover, export_qrels, measure_leaderboard,
correlate_leaderboards, label_agreement, on the small collections worked by hand in
test_cli_scores, test_correlation and test_agreement."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from exampp.api.agreement import NoCommonJudgments, label_agreement
from exampp.api.leaderboards import CorrelateJob, CorrelationError, LeaderboardFile, QrelsMeasure, UnknownExcluded
from exampp.api.scores import CoverJob, LeaderboardJob, NoRunLeft, export_qrels
from exampp.collection.grades import Method
from exampp.collection.runs import from_scores
from exampp.errors import ExamppError, InputError
from exampp.formats.trec_qrels import read_qrels
from exampp.scoring import MeasureError
from test_agreement import EXAM, OFFICIAL
from test_cli_scores import GRADES, QA, QA_GRADES, RATED, tiny_workspace
from test_correlation import _collection


@pytest.fixture
def ws(tmp_path):
    return tiny_workspace(tmp_path, RATED, GRADES)


def _means(table: pd.DataFrame) -> dict[str, float]:
    return dict(zip(table["run"], table["mean"]))


# --- cover -------------------------------------------------------------------------------------


def test_cover_of_self_ratings_defaults_to_tau_4(ws):
    warnings: list[str] = []
    result = CoverJob(ws).run(warn=warnings.append)
    assert (result.tau, result.depth, result.method_id) == (4.0, 20, RATED)
    # A: q1 u1 (p1 rates it 5), not u2 (p2 rates it 3) -> 1/2; q2 v1 (p3: 4) -> 1; B: nothing at 4
    assert list(result.per_query.itertuples(index=False, name=None)) == [
        ("A", "q1", 1, 2, 0.5), ("A", "q2", 1, 1, 1.0), ("B", "q1", 0, 2, 0.0), ("B", "q2", 0, 1, 0.0)]
    assert _means(result.leaderboard) == {"A": 0.75, "B": 0.0}
    assert warnings == [f"{ws}/runs/b.run:2: warning: query 'q3' not in the exam (question bank), left out"]


def test_cover_of_correctness_grades_defaults_to_tau_1(tmp_path):
    ws = tiny_workspace(tmp_path, QA, QA_GRADES)
    result = CoverJob(ws).run(warn=lambda line: None)
    # A: q1 u1 (p1) and u2 (p2) -> 1, q2 -> 0; B: q1 u2 (p2) -> 1/2, q2 -> 0
    assert result.tau == 1.0 and result.method_id == "qa|m|qa@v1+string@v1"
    assert _means(result.leaderboard) == {"A": 0.5, "B": 0.25}


def test_cover_takes_runs_read_tau_depth_and_warns_in_python(ws):
    runs = {"C": from_scores("C", {"q1": {"p2": 2.0, "p1": 1.0}, "q2": {"p3": 1.0}})}
    # tau 3, depth 1: C's top passage for q1 is p2 (answers u2 at 3), for q2 p3 (v1 at 4)
    result = CoverJob(ws, runs, tau=3, depth=1).run()
    assert _means(result.leaderboard) == {"C": 0.75} and result.tau == 3
    with pytest.warns(UserWarning, match=r"b.run:2: warning: query 'q3' not in the exam"):
        CoverJob(ws).run()
    with pytest.raises(InputError, match=r"b.run:2: query 'q3' is not in the exam \(question bank\)"):
        CoverJob(ws, strict=True).run()


# --- export_qrels ------------------------------------------------------------------------------


def test_export_qrels_returns_the_labels_and_writes_only_when_asked(ws, tmp_path):
    assert export_qrels(ws) == {"q1": {"p1": 5, "p2": 3}, "q2": {"p3": 4}}
    assert not (ws / "qrels" / "exam.qrels").exists()
    binary = export_qrels(ws, min_grade=4, output=tmp_path / "exam-4.qrels")
    assert binary == {"q1": {"p1": 1, "p2": 0}, "q2": {"p3": 1}}
    assert (tmp_path / "exam-4.qrels").read_text() == "q1 0 p1 1\nq1 0 p2 0\nq2 0 p3 1\n"


def test_export_qrels_of_fractional_grades_round_trips(tmp_path):
    method = Method("self-rating", "expected", "v1").method_id  # e.g. expected grades from probabilities
    ws = tiny_workspace(tmp_path, method, [("q1", "p1", "u1", 2.5), ("q1", "p1", "u2", 1.0),
                                           ("q1", "p2", "u2", 3.0), ("q2", "p3", "v1", 0.5)])
    labels = export_qrels(ws, output=tmp_path / "exam.qrels")
    assert labels == {"q1": {"p1": 2.5, "p2": 3}, "q2": {"p3": 0.5}} and isinstance(labels["q1"]["p2"], int)
    assert (tmp_path / "exam.qrels").read_text() == "q1 0 p1 2.5\nq1 0 p2 3\nq2 0 p3 0.5\n"
    assert read_qrels(tmp_path / "exam.qrels") == labels


# --- measure_leaderboard -----------------------------------------------------------------------


def test_measure_leaderboard_of_files_and_of_runs_read(ws):
    warnings: list[str] = []
    qrels = ws / "qrels" / "official.qrels"
    table = LeaderboardJob(ws / "runs", qrels, ["P@1", "P@2"]).run(warn=warnings.append)
    # A: q1 p1 relevant, q2 p3 relevant; P@2 q1 1/2, q2 1/2. B: q1 p2 not relevant, q2 missing.
    assert table.to_dict(orient="records") == [{"run": "A", "P@1": 1.0, "P@2": 0.5},
                                               {"run": "B", "P@1": 0.0, "P@2": 0.0}]
    assert warnings == [f"{ws}/runs/b.run:2: warning: query 'q3' not in {qrels}, left out"]
    runs = {"C": from_scores("C", {"q1": {"p2": 2.0, "p1": 1.0}})}
    per_query = LeaderboardJob(runs, {"q1": {"p1": 1, "p2": 0}}, ["P@1"], per_query=True).run()
    assert per_query.to_dict(orient="records") == [{"run": "C", "query_id": "q1", "measure": "P@1", "value": 0.0}]


def test_measure_leaderboard_errors(ws):
    with pytest.raises(NoRunLeft) as err:
        LeaderboardJob(ws / "runs", ws / "qrels" / "official.qrels", exclude=["A", "B"]).run()
    assert err.value.runs == ["A", "B"] and isinstance(err.value, ExamppError)
    with pytest.raises(InputError, match=r"b.run:2: query 'q3' is not in the qrels"):
        LeaderboardJob(ws / "runs", read_qrels(ws / "qrels" / "official.qrels"), strict=True).run()


# --- correlate_leaderboards --------------------------------------------------------------------


def test_correlate_leaderboards_computed_from_qrels(write):
    runs, official, exam = _collection(write)
    result = CorrelateJob(QrelsMeasure(official, "P@2"), QrelsMeasure(exam, "P@2"), runs=runs,
                          per_query=True).run()
    # P@2 official: r1 .75, r2 0, r3 .5; EXAM: r1 .75, r2 .5, r3 .5 (see test_correlation)
    assert result.board_a == {"r1": 0.75, "r2": 0.0, "r3": 0.5} and result.board_b == {"r1": 0.75, "r2": 0.5, "r3": 0.5}
    table = result.table().set_index("measure")
    assert table.loc["kendall", "value"] == pytest.approx(2 / math.sqrt(6))
    assert table.loc["tau_ap", "value"] == pytest.approx(1.0) and math.isnan(table.loc["tau_ap", "p_value"])
    assert result.side_by_side().reset_index().values.tolist() == [
        ["r1", 1, 0.75, 1, 0.75], ["r3", 2, 0.5, 2, 0.5], ["r2", 3, 0.0, 2, 0.5]]
    assert result.per_query.per_query.loc["q2", "kendall"] == pytest.approx(0.5)
    assert result.a.label == f"P@2 on {official}" and result.decimals == 10


def test_correlate_a_file_with_a_computed_leaderboard_warns_and_excludes(write):
    runs, official, _ = _collection(write)
    q1_only = write("q1.qrels", "q1 0 d1 1\nq1 0 d2 1\nq1 0 d3 0\nq1 0 d4 0\n")
    board = write("board.tsv", "r1 3\nr2 1\nr3 2\nr9 0\n")
    warnings: list[str] = []
    result = CorrelateJob(QrelsMeasure(q1_only, "P@2"), LeaderboardFile(board), runs=runs,
                          exclude=["r9"]).run(warn=warnings.append)
    # P@2 on q1: r1 1, r2 0, r3 .5 -- the order of the file's scores
    assert result.correlation.kendall == pytest.approx(1.0) and result.correlation.excluded == ["r9"]
    assert result.b.label == str(board)
    assert warnings == [f"{runs}/{name}.run:{line}: warning: query 'q2' not in {q1_only}, left out"
                        for name, line in (("r1", 3), ("r2", 3), ("r3", 3))]


def test_two_measures_on_the_same_qrels_read_and_warn_once(write):
    runs, _, _ = _collection(write)
    q1_only = write("q1.qrels", "q1 0 d1 1\nq1 0 d2 1\nq1 0 d3 0\nq1 0 d4 0\n")
    warnings: list[str] = []
    result = CorrelateJob(QrelsMeasure(q1_only, "P@1"), QrelsMeasure(q1_only, "P@2"),
                          runs=runs).run(warn=warnings.append)
    # q1: r1 ranks d1 d2 (both relevant), r2 d3 d4 (neither), r3 d1 d3
    assert result.board_a == {"r1": 1.0, "r2": 0.0, "r3": 1.0} and result.board_b == {"r1": 1.0, "r2": 0.0, "r3": 0.5}
    assert warnings == [f"{runs}/{name}.run:{line}: warning: query 'q2' not in {q1_only}, left out"
                        for name, line in (("r1", 3), ("r2", 3), ("r3", 3))]


def test_correlate_leaderboards_errors(write):
    runs, official, _ = _collection(write)
    two = LeaderboardFile(write("two.tsv", "r1 1\nr2 2\n"))
    other = LeaderboardFile(write("other.tsv", "x 1\ny 2\n"))
    with pytest.raises(CorrelationError, match=r"^0 run\(s\) in common, need at least 2; only in A: r1, r2; "
                                               r"only in B: x, y$"):
        CorrelateJob(two, other).run()
    with pytest.raises(UnknownExcluded, match="excluded system"):
        CorrelateJob(two, two, exclude=["typo"]).run()
    with pytest.raises(CorrelationError, match=r"leaderboard B \(P@2 on .*\) is computed over runs: give runs"):
        CorrelateJob(two, QrelsMeasure(official, "P@2")).run()
    with pytest.raises(CorrelationError, match=r"per-query correlation needs per-query scores, and "
                                               r"leaderboard A \(.*two.tsv\) holds one score per run"):
        CorrelateJob(two, QrelsMeasure(official, "P@2"), runs=runs, per_query=True).run()
    with pytest.raises(CorrelationError, match=r"^leaderboard A: 'P.5,10' names 2 measures \(P@5, P@10\); give one$"):
        CorrelateJob(QrelsMeasure(official, "P.5,10"), two, runs=runs).run()
    with pytest.raises(MeasureError, match="unknown measure 'ndcg@10'; did you mean nDCG@10?"):
        CorrelateJob(two, QrelsMeasure("missing.qrels", "ndcg@10"), runs=runs).run()  # before reading


# --- label_agreement ---------------------------------------------------------------------------


def test_label_agreement(write):
    def qrels(name, labels):
        return write(name, "".join(f"{q} 0 {d} {g}\n" for q, docs in labels.items() for d, g in docs.items()))

    exam, official = qrels("exam.qrels", EXAM), qrels("official.qrels", OFFICIAL)
    result = label_agreement(exam, official)
    assert tuple(result.pairs) == (6, 1, 2) and result.rel_level == 1
    # tau 4: tp d1 d4, fn d3 d6, tn d2 d5 -> kappa 0.4 (test_agreement works it out)
    assert tuple(result.kappas.loc[4, ["tp", "fp", "fn", "tn"]]) == (2, 0, 2, 2)
    assert result.kappas.loc[4, "kappa"] == pytest.approx(0.4)
    assert result.graded.at[5, 2] == 1 and int(result.graded.to_numpy().sum()) == 6
    with pytest.raises(NoCommonJudgments, match=r"no \(query, docid\) pair is judged in both"):
        label_agreement(qrels("a.qrels", {"q1": {"a": 1}}), qrels("b.qrels", {"q1": {"b": 1}}))
