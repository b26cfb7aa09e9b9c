"""Differential tests against autojudge-evaluate, the TREC AutoJudge meta-evaluation: on the same
leaderboards, exampp's correlate and meta-evaluate computations give the values of its
``meta-evaluate`` (Kendall, Spearman, Pearson, τ_AP-b, τ_GAP, kendall@k, the diagnostics); on the
same qrels, ``exampp agree --per-topic`` gives those of its ``qrel-evaluate``. Where the definitions
differ on purpose (NaN for an all-tied τ_AP direction, ties at the top cut, fewer than three runs,
exampp's pooled default agreement), the difference is tested as documented in
docs/explanation/statistics.md.

Their inputs are written by hand here as plain files (tot leaderboards, TREC qrels); their evaluator
runs in process (``LeaderboardEvaluator``, ``grade_agreement``, the ``qrel-evaluate`` command).
"""
from __future__ import annotations

import gzip
import json
import math
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from conftest import shared_path
from exampp.analysis.correlation import correlate, tau_ap, tau_ap_b
from exampp.analysis.label_agreement import adjusted_rand, weighted_kappa
from exampp.analysis.statistics import correlation_intervals
from exampp.api.agreement import label_agreement, topic_label_agreement
from exampp.api.leaderboards import CorrelateJob, LeaderboardFile
from exampp.cli import main

evaluation = pytest.importorskip("autojudge_evaluate.evaluation",
                                 reason="autojudge-evaluate is not installed (pip install -e '.[autojudge]')")
from autojudge_base.qrels.qrels import read_qrel_file  # noqa: E402  (only with autojudge-evaluate)
from autojudge_evaluate._commands._qrel_evaluate import qrel_evaluate  # noqa: E402
from autojudge_evaluate.nugget_doc_eval import grade_agreement, set_overlap  # noqa: E402

PROPERTY = settings(derandomize=True, database=None, max_examples=150, deadline=None)
BASE = ("kendall", "pearson", "spearman", "tauap_b", "tau_gap")
OURS = {"kendall": "kendall", "pearson": "pearson", "spearman": "spearman", "tauap_b": "tau_ap_b",
        "tau_gap": "tau_gap"}


# --- their leaderboards, written by hand ----------------------------------------------------------

def write_tot(path: Path, board: Mapping[str, float]) -> Path:
    """A tot leaderboard (run measure topic value) of one measure M, its ``all`` rows in the board's order."""
    path.write_text("".join(f"{run}\tM\tall\t{value!r}\n" for run, value in board.items()), encoding="utf-8")
    return path


def write_tsv(path: Path, board: Mapping[str, float]) -> Path:
    """exampp's plain leaderboard file: run<TAB>score, in the board's order."""
    path.write_text("".join(f"{run}\t{value!r}\n" for run, value in board.items()), encoding="utf-8")
    return path


def theirs(folder: Path, truth: Mapping[str, float], judged: Mapping[str, float], k: int,
           on_missing: str = "skip") -> tuple[dict[str, float], dict[str, str | None]]:
    """autojudge-evaluate's meta-evaluate values for M vs M (methods BASE and kendall@k) and its
    diagnostic of each method (read back from its --diagnostics-dir dump)."""
    truth_path, judged_path = write_tot(folder / "truth.tot", truth), write_tot(folder / "judge.tot", judged)
    methods = [*BASE, f"kendall@{k}"]
    evaluator = evaluation.LeaderboardEvaluator(truth_path, truth_measures=["M"], eval_measures=["M"],
                                                on_missing=on_missing, truth_format="tot", eval_format="tot",
                                                correlation_methods=methods, diagnostics_dir=folder / "diagnostics")
    with warnings.catch_warnings():  # their end-of-run summary of the diagnostics, read from the dump instead
        warnings.simplefilter("ignore", RuntimeWarning)
        values = evaluator.evaluate(judged_path)[("M", "M")]
    issues = {}
    for method in methods:
        rows = (folder / "diagnostics" / "judge" / "M__M" / f"{method}.jsonl").read_text().splitlines()
        issues[method] = json.loads(rows[0])["issue"]
    return {m: float(v) for m, v in values.items()}, issues


def same(ours: float, expected: float) -> bool:
    return (math.isnan(ours) and math.isnan(expected)) or ours == pytest.approx(expected, abs=1e-9)


def zero_if_nan(value: float) -> float:
    return 0.0 if math.isnan(value) else value


@st.composite
def leaderboard_pairs(draw):
    """A truth leaderboard of 3-12 runs in a random file order, a judged one missing some of its runs
    and holding some of its own; scores on a few levels, so that ties (and constant sides) come up."""
    n = draw(st.integers(3, 12))
    runs = [f"r{i:02d}" for i in range(n)]
    levels = draw(st.sampled_from([1, 2, 4, 20]))
    scores = st.lists(st.integers(0, levels), min_size=n, max_size=n)
    truth_scores, judged_scores = draw(scores), draw(scores)
    order = draw(st.permutations(range(n)))
    truth = {runs[i]: truth_scores[i] / levels for i in order}
    missing = draw(st.sets(st.sampled_from(runs), max_size=n - 3))
    judged = {run: judged_scores[i] / levels for i, run in enumerate(runs) if run not in missing}
    for extra in range(draw(st.integers(0, 2))):
        judged[f"x{extra}"] = draw(st.integers(0, levels)) / levels
    k = draw(st.integers(3, n))
    return truth, judged, k


def assert_tau_ap_b(ours: float, theirs_value: float, x: list[float], y: list[float]) -> None:
    """τ_AP,b equal to theirs; or NaN in exampp where the documented difference says so: a side that ties
    throughout leaves a τ_AP direction undefined (NaN in exampp), which they count as 0.0."""
    if math.isnan(ours):
        assert len(set(x)) == 1 or len(set(y)) == 1
        assert theirs_value == pytest.approx((zero_if_nan(tau_ap(x, y)) + zero_if_nan(tau_ap(y, x))) / 2)
    else:
        assert same(ours, theirs_value), (ours, theirs_value)


@PROPERTY
@given(leaderboard_pairs())
def test_correlate_equals_their_meta_evaluate(pair):
    truth, judged, k = pair
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        expected, issues = theirs(folder, truth, judged, k)
        result = CorrelateJob(LeaderboardFile(write_tsv(folder / "a.tsv", truth)),
                              LeaderboardFile(write_tsv(folder / "b.tsv", judged)), decimals=None, top=k,
                              top_ties="truncate").run().correlation
    common = [run for run in sorted(truth) if run in judged]
    x, y = [truth[r] for r in common], [judged[r] for r in common]
    for method, name in OURS.items():
        ours = getattr(result, name)
        if method == "tauap_b":
            assert_tau_ap_b(ours, expected[method], x, y)
        else:
            assert same(ours, expected[method]), (method, ours, expected[method])
    assert same(result.kendall_top, expected[f"kendall@{k}"])
    assert result.issue == issues["kendall"] and result.top_issue == issues[f"kendall@{k}"]


@PROPERTY
@given(leaderboard_pairs())
def test_meta_evaluate_s_correlations_equal_their_meta_evaluate(pair):
    """meta-evaluate's computation (correlation_intervals: an official leaderboard held fixed against
    a per-query table, here of one query) on the runs both hold."""
    truth, judged, k = pair
    with tempfile.TemporaryDirectory() as tmp:
        expected, _ = theirs(Path(tmp), truth, judged, k)
    common = [run for run in truth if run in judged]  # in the official file's order
    official = pd.Series({run: truth[run] for run in common})
    table = pd.DataFrame({"q1": [judged[run] for run in common]}, index=common)
    values = correlation_intervals(official, table, n=0, top=k, decimals=None, ties="truncate")["value"]
    assert same(values["kendall"], expected["kendall"]) and same(values["spearman"], expected["spearman"])
    assert same(values["tau_gap"], expected["tau_gap"]) and same(values["kendall_top"], expected[f"kendall@{k}"])
    assert_tau_ap_b(values["tau_ap_b"], expected["tauap_b"], list(official), [judged[run] for run in common])


def test_meta_evaluate_rows_equal_their_meta_evaluate_of_each_evaluation_s_leaderboard(tmp_path):
    """The command's job end to end on a small graded workspace: an official file with a tie at the
    top-3 cut, written in an order of its own; each row's figures against theirs on the row's
    leaderboard (``MetaEvaluation.scores``)."""
    from exampp.api.meta_evaluate import MetaEvaluateJob
    from irt_workspace import graded_workspace

    workspace = graded_workspace(tmp_path / "ws", "self-rating|google/flan-t5-large|test", 5.0)
    official = {"r3": 0.5, "r5": 0.9, "r0": 0.1, "r2": 0.5, "r4": 0.7, "r1": 0.2}  # r3 before r2: r3 is kept
    result = MetaEvaluateJob(workspace, official=LeaderboardFile(write_tsv(tmp_path / "official.tsv", official)),
                             families=("cover", "qrels"), labels=("max",), bootstrap=0, decimals=None, top=3,
                             top_ties="truncate", progress=False).run()
    assert len(result.table) >= 3
    for row in result.table.to_dict("records"):
        judged = result.scores[row["evaluation"]].to_dict()
        folder = tmp_path / f"row{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        expected, issues = theirs(folder, official, judged, 3)
        runs = [run for run in official if run in judged]
        x, y = [official[run] for run in runs], [judged[run] for run in runs]
        for method, name in OURS.items():
            if method == "pearson":
                continue  # meta-evaluate has no Pearson column
            if method == "tauap_b":
                assert_tau_ap_b(row[name], expected[method], x, y)
            else:
                assert same(row[name], expected[method]), method
        assert same(row["kendall_top"], expected["kendall@3"]), row["evaluation"]
        assert (row["issue"] or None, row["top_issue"] or None) == (issues["kendall"], issues["kendall@3"])


# --- the documented differences, by hand ----------------------------------------------------------

TRUTH = {"a": 0.9, "b": 0.7, "c": 0.5, "d": 0.5, "e": 0.1}


def test_a_constant_judge_is_nan_in_exampp_and_minus_a_half_in_theirs(tmp_path):
    constant = dict.fromkeys(TRUTH, 0.3)
    expected, issues = theirs(tmp_path, TRUTH, constant, 3)
    result = correlate(TRUTH, constant, decimals=None)
    # τ_AP(truth, judge) has no system below another in the judge: NaN, theirs 0.0; τ_AP(judge, truth)
    # finds no concordant pair: −1. Their mean is −0.5.
    assert expected["tauap_b"] == -0.5 and tau_ap(list(constant.values()), list(TRUTH.values())) == -1.0
    assert math.isnan(result.tau_ap_b) and math.isnan(tau_ap_b(list(TRUTH.values()), list(constant.values())))
    assert math.isnan(expected["kendall"]) and math.isnan(result.kendall)  # both: Kendall is undefined
    assert issues["kendall"] is None and result.issue is None  # all_tied needs both sides constant


def test_top_ties_include_keeps_the_tie_at_the_cut_truncate_is_their_kendall_at_k(tmp_path):
    judged = {"a": 0.2, "b": 0.4, "c": 0.3, "d": 0.9, "e": 0.0}
    expected, _ = theirs(tmp_path, TRUTH, judged, 3)
    truncate = correlate(TRUTH, judged, decimals=None, top=3, top_ties="truncate")
    include = correlate(TRUTH, judged, decimals=None, top=3, top_ties="include")
    from scipy import stats

    # c and d tie at the cut: theirs keeps c, first in the truth file; include keeps both
    assert truncate.kendall_top == pytest.approx(expected["kendall@3"])
    assert truncate.kendall_top == pytest.approx(stats.kendalltau([0.9, 0.7, 0.5], [0.2, 0.4, 0.3]).statistic)
    assert include.kendall_top == pytest.approx(stats.kendalltau([0.9, 0.7, 0.5, 0.5], [0.2, 0.4, 0.3, 0.9]).statistic)
    reordered = {"a": 0.9, "b": 0.7, "d": 0.5, "c": 0.5, "e": 0.1}  # d first in the file: d is kept
    again, _ = theirs(tmp_path, reordered, judged, 3)
    assert correlate(reordered, judged, decimals=None, top=3, top_ties="truncate").kendall_top == \
        pytest.approx(again["kendall@3"]) == pytest.approx(stats.kendalltau([0.9, 0.7, 0.5], [0.2, 0.4, 0.9]).statistic)


def test_two_runs_in_common_raise_in_theirs_and_are_too_few_in_exampp(tmp_path):
    judged = {"a": 0.1, "b": 0.2}
    with pytest.raises(ValueError, match="only 2 elements"):
        theirs(tmp_path, TRUTH, judged, 3)
    result = correlate(TRUTH, judged, decimals=None)
    assert result.kendall == -1.0 and result.issue == "too_few" and result.top_issue == "too_few"


def test_a_missing_run_is_left_out_by_both_and_zero_filled_by_their_default(tmp_path):
    judged = {"a": 0.5, "b": 0.6, "c": 0.1, "d": 0.2}  # e missing
    skipped, _ = theirs(tmp_path, TRUTH, judged, 3, on_missing="skip")
    assert correlate(TRUTH, judged, decimals=None).kendall == pytest.approx(skipped["kendall"])
    evaluator = evaluation.LeaderboardEvaluator(write_tot(tmp_path / "t.tot", TRUTH), truth_measures=["M"],
                                                eval_measures=["M"], on_missing="default", truth_format="tot",
                                                eval_format="tot", correlation_methods=["kendall"])
    filled = evaluator.evaluate(write_tot(tmp_path / "j.tot", judged))[("M", "M")]["kendall"]
    assert filled == pytest.approx(correlate(TRUTH, {**judged, "e": 0.0}, decimals=None).kendall)


# --- qrels agreement ------------------------------------------------------------------------------

def write_qrels(path: Path, qrels: Mapping[str, Mapping[str, int]]) -> Path:
    path.write_text("".join(f"{topic} 0 {doc} {grade}\n" for topic, docs in qrels.items()
                            for doc, grade in docs.items()), encoding="utf-8")
    return path


@st.composite
def qrels_pairs(draw):
    """Truth and predicted qrels on 1-4 topics (a topic may be on one side only), graded -1..4, each
    side judging its own subset of a topic's documents; max grades and thresholds per side."""
    topics = [f"t{i}" for i in range(draw(st.integers(1, 4)))]
    docs = [f"d{i}" for i in range(7)]

    def side():
        qrels = {}
        for topic in draw(st.sets(st.sampled_from(topics), min_size=1)):
            judged = draw(st.sets(st.sampled_from(docs), min_size=1))
            qrels[topic] = {doc: draw(st.integers(-1, 4)) for doc in sorted(judged)}
        return qrels

    truth, predicted = side(), side()
    t_max, p_max = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    return truth, predicted, t_max, p_max, draw(st.integers(1, 3)), draw(st.integers(1, 3))


def their_columns(t_max: int, p_max: int) -> dict[str, tuple[int, int]]:
    if t_max == p_max == 1:
        return {"kappa@1": (1, 1)}
    return {f"kappa@{t}v{p}": (t, p) for t in range(1, t_max + 1) for p in range(1, p_max + 1)}


@PROPERTY
@given(qrels_pairs())
def test_agree_per_topic_equals_their_qrel_evaluate(pair):
    truth, predicted, t_max, p_max, t_level, p_level = pair
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        truth_path, predicted_path = write_qrels(folder / "truth.qrels", truth), write_qrels(folder / "pred.qrels",
                                                                                             predicted)
        ours = topic_label_agreement(predicted_path, truth_path, rel_level=t_level, exam_level=p_level,
                                     official_max=t_max, exam_max=p_max)
        their_truth, their_predicted = read_qrel_file(truth_path), read_qrel_file(predicted_path)
        agreement = grade_agreement(their_truth, their_predicted, truth_max_grade=t_max, predict_max_grade=p_max,
                                    truth_relevance_threshold=t_level, predict_relevance_threshold=p_level)
        overlap = {r.topic_id: r for r in set_overlap(their_truth, their_predicted, truth_relevance_threshold=t_level,
                                                      predict_relevance_threshold=p_level)}
        command = CliRunner().invoke(qrel_evaluate, [
            "--truth-qrels", str(truth_path), "--predict-qrels", str(predicted_path), "--output",
            str(folder / "out.jsonl"), "--truth-max-grade", t_max, "--predict-max-grade", p_max,
            "--truth-relevance-threshold", t_level, "--predict-relevance-threshold", p_level])
        assert command.exit_code == 0, command.output
        printed = [json.loads(line) for line in (folder / "out.jsonl").read_text().splitlines()]
    table = ours.per_topic
    assert list(table.index) == [r.topic_id for r in agreement] == sorted(truth.keys() | predicted.keys())
    for result in agreement:
        row = table.loc[result.topic_id]
        assert same(row["jaccard"], result.jaccard) and same(row["kappa_w"], result.kappa_weighted)
        assert same(row["alpha_ordinal"], float(result.kripp_alpha)) and same(row["ari"], result.ari)
        for name, thresholds in their_columns(t_max, p_max).items():
            assert same(row[name], result.kappa_binary[thresholds]), (result.topic_id, name)
        set_row = overlap.get(result.topic_id)
        if set_row is None:  # no relevant document on either side: not in their set overlap, NaN here
            assert math.isnan(row["precision"]) and (row["tp"], row["fp"], row["fn"]) == (0, 0, 0)
        else:
            assert (row["precision"], row["recall"], row["f1"]) == pytest.approx(
                (set_row.precision, set_row.recall, set_row.f1))
            assert (row["tp"], row["fp"], row["fn"]) == (set_row.tp, set_row.fp, set_row.fn)
    # their MEAN: the mean of the per-topic values rounded to 4 decimals, itself rounded: 1e-4 apart at most
    mean = printed[-1]
    assert mean["Topic"] == "MEAN"
    names = {"Precision": "precision", "Recall": "recall", "F1": "f1", "Jaccard": "jaccard", "Kappa_w": "kappa_w",
             "Kripp_a": "alpha_ordinal", "ARI": "ari"}
    names.update({name.capitalize(): name for name in their_columns(t_max, p_max)})
    for column, name in names.items():
        expected = math.nan if mean.get(column) is None else mean[column]  # no column: no topic has the measure
        got = ours.mean.at[name, "mean"]
        assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected, abs=1.01e-4), column


def test_the_pooled_default_and_the_per_topic_mean_are_different_definitions(tmp_path):
    """exampp agree (default) pools the documents judged on both sides into one table; --per-topic
    takes each topic over the union of documents, then the mean: on these qrels κ is 1/2 pooled and
    −0.05 per topic."""
    official = write_qrels(tmp_path / "official.qrels", {"t1": {"d1": 1, "d2": 0, "d3": 1}, "t2": {"d1": 1, "d2": 0}})
    exam = write_qrels(tmp_path / "exam.qrels", {"t1": {"d1": 1, "d2": 1}, "t2": {"d1": 1, "d2": 0, "d3": 1}})
    pooled = label_agreement(exam, official).kappas.loc[1]
    # judged on both: (1,1) (1,0) | (1,1) (0,0): po = 3/4, pe = 3/4·1/2 + 1/4·1/2 = 1/2, κ = 1/2
    assert (pooled["tp"], pooled["fp"], pooled["fn"], pooled["tn"]) == (2, 1, 0, 1)
    assert pooled["kappa"] == pytest.approx(0.5)
    per_topic = topic_label_agreement(exam, official)
    # t1 over d1 d2 d3: official 1 0 1, exam 1 1 0: po 1/3, pe 2/3·2/3 + 1/3·1/3 = 5/9, κ = −1/2;
    # t2 over d1 d2 d3: official 1 0 0, exam 1 0 1: po 2/3, pe 1/3·2/3 + 2/3·1/3 = 4/9, κ = 2/5
    assert per_topic.per_topic["kappa@1"].tolist() == pytest.approx([-0.5, 0.4])
    assert per_topic.mean.at["kappa@1", "mean"] == pytest.approx(-0.05)


def test_per_topic_agreement_refuses_a_grade_scale_it_would_need_millions_of_kappas_for(tmp_path):
    official = write_qrels(tmp_path / "official.qrels", {"t1": {"d1": 1, "d2": 5000}})
    exam = write_qrels(tmp_path / "exam.qrels", {"t1": {"d1": 1}})
    result = CliRunner().invoke(main, ["agree", "--exam", str(exam), "--official", str(official), "--per-topic"])
    assert result.exit_code == 1
    assert "official.qrels: official grades up to 5000; per-topic agreement takes scales up to 20 (clip them: " \
           "--official-max-grade)" in result.output
    clipped = CliRunner().invoke(main, ["agree", "--exam", str(exam), "--official", str(official), "--per-topic",
                                        "--official-max-grade", "1", "--format", "json"])
    # clipped: official relevant throughout (constant), EXAM lacks d2 (grade 0 there): κ 0, as qrel-evaluate's
    assert json.loads(clipped.stdout)["topics"][0]["kappa@1"] == 0.0


def test_adjusted_rand_and_weighted_kappa_equal_scikit_learn():
    sklearn = pytest.importorskip("sklearn.metrics", reason="scikit-learn comes with autojudge-evaluate")
    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(1, 12))
        a, b = rng.integers(0, 3, n), rng.integers(0, 3, n)
        assert adjusted_rand(a, b) == pytest.approx(sklearn.adjusted_rand_score(a, b), abs=1e-12)
        table = np.zeros((3, 3))
        np.add.at(table, (a, b), 1)
        with warnings.catch_warnings():  # sklearn warns where κ is undefined (NaN)
            warnings.simplefilter("ignore")
            expected = sklearn.cohen_kappa_score(a, b, weights="linear", labels=[0, 1, 2])
        assert same(float(weighted_kappa(table)), float(expected))


# --- the TREC RAG 2024 files ----------------------------------------------------------------------

def _records(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


@pytest.mark.shared
def test_rag24_nugget_and_support_leaderboards_correlate_as_in_their_meta_evaluate(tmp_path):
    """The nugget leaderboard (V_strict of `exampp nuggets score`) as the truth, the assessors'
    citation support (weighted precision of `exampp support measures`) as the judge; the citation
    files name runs team.run, the nugget file run: matched on run."""
    nuggets = shared_path("data", "rag24", "nugget-assignments.dev.jsonl.gz")
    citations = shared_path("data", "rag24", "final.citation_judgments_Webassess.20241031.jsonl.gz")
    runner = CliRunner()
    nugget_board = json.loads(runner.invoke(main, ["nuggets", "score", str(nuggets), "--format", "json"]).stdout)
    support_board = json.loads(runner.invoke(main, ["support", "measures", str(citations), "--format", "json"]).stdout)
    truth = {run: scores["V_strict"] for run, scores in nugget_board.items()}
    judged = {run.split(".", 1)[1]: scores["weighted_precision"] for run, scores in support_board.items()}
    assert len(truth.keys() & judged.keys()) == 44
    expected, issues = theirs(tmp_path, truth, judged, 10)
    result = runner.invoke(main, ["correlate", "--a", str(write_tsv(tmp_path / "a.tsv", truth)),
                                  "--b", str(write_tsv(tmp_path / "b.tsv", judged)), "--no-round",
                                  "--top-ties", "truncate", "--format", "json"])
    ours = json.loads(result.stdout)
    assert ours["n_systems"] == 44 and ours["issue"] is None and issues["kendall"] is None
    for method, name in OURS.items():
        assert ours[name] == pytest.approx(expected[method], abs=1e-9), method
    assert ours["kendall_top"] == pytest.approx(expected["kendall@10"], abs=1e-9)


def _support_qrels(path: Path, pick) -> dict[str, dict[str, int]]:
    """(topic, cited segment) -> ``pick`` of the support labels it got (0, 1, 2; -1 unjudgeable)."""
    labels: dict[str, dict[str, list[int]]] = {}
    for answer in _records(path):
        for sentence in answer["sentences"]:
            for citation in sentence["citations"]:
                labels.setdefault(answer["topic_id"], {}).setdefault(citation["reference"], []).append(
                    int(citation["support"]))
    return {topic: {doc: pick(grades) for doc, grades in docs.items()} for topic, docs in labels.items()}


@pytest.mark.shared
@pytest.mark.parametrize("pairing", ["assessors max vs min", "assessors vs predictions"])
def test_rag24_support_labels_agree_as_in_their_qrel_evaluate(tmp_path, pairing):
    """Citation support as qrels of (topic, cited segment), graded 0..2. 'assessors max vs min': the
    highest and the lowest label the assessors gave a segment cited for several sentences (every
    topic on both sides). 'assessors vs predictions': the two files' highest labels; they share no
    topic, so every topic is scored against all-0 grades on the side without it."""
    assessors = shared_path("data", "rag24", "final.citation_judgments_Webassess.20241031.jsonl.gz")
    predictions = shared_path("data", "rag24", "final.citation_judgments_with_prediction.20241025.jsonl.gz")
    if pairing == "assessors max vs min":
        truth, predicted = _support_qrels(assessors, max), _support_qrels(assessors, min)
    else:
        truth, predicted = _support_qrels(assessors, max), _support_qrels(predictions, max)
    truth_path, predicted_path = write_qrels(tmp_path / "t.qrels", truth), write_qrels(tmp_path / "p.qrels", predicted)
    result = CliRunner().invoke(main, ["agree", "--exam", str(predicted_path), "--official", str(truth_path),
                                       "--per-topic", "--official-max-grade", "2", "--exam-max-grade", "2",
                                       "--format", "json"])
    assert result.exit_code == 0, result.output
    ours = json.loads(result.stdout)
    agreement = grade_agreement(read_qrel_file(truth_path), read_qrel_file(predicted_path), truth_max_grade=2,
                                predict_max_grade=2)
    rows = {row["topic"]: row for row in ours["topics"]}
    assert list(rows) == [r.topic_id for r in agreement]
    for theirs_row in agreement:
        row = rows[theirs_row.topic_id]
        pairs = [(row["kappa_w"], theirs_row.kappa_weighted), (row["alpha_ordinal"], float(theirs_row.kripp_alpha)),
                 (row["ari"], theirs_row.ari), (row["jaccard"], theirs_row.jaccard),
                 (row["kappa@1v1"], theirs_row.kappa_binary[1, 1]), (row["kappa@2v2"], theirs_row.kappa_binary[2, 2])]
        for got, expected in pairs:
            assert same(math.nan if got is None else got, expected), theirs_row.topic_id
    if pairing == "assessors vs predictions":
        assert len(rows) == 13 + 14  # every topic on one side only
