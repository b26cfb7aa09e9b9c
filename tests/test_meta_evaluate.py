"""`exampp meta-evaluate`: every evaluation against the official leaderboard, with intervals.

Each figure is checked by another route: the README's DL19 correlations (pinned there and
recomputed from the raw file in test_dl19_reproduction.py), scipy on leaderboards built here, a
plain loop over the bootstrap draws, and the IRT model fitted here.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from exampp.analysis.correlation import correlate, tau_ap
from exampp.analysis.meta_evaluation import MetaEvaluationError, grade_levels
from exampp.api.leaderboards import LeaderboardFile
from exampp.api.meta_evaluate import MetaEvaluateJob
from exampp.cli import main
from irt_workspace import COVER, graded_workspace

LATE_RUN = "UNH_exDL_bm25"
SELF_RATING = "self-rating|google/flan-t5-large|test"


def cli(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == code, result.output
    return result.stdout if code == 0 else result.output


@pytest.fixture
def small(tmp_path) -> Path:
    """6 runs r0..r5 on 2 queries x 3 questions (irt_workspace), self-rated 5 where a passage answers
    its question; official qrels that find r5 best, then r4..."""
    ws = graded_workspace(tmp_path / "ws", SELF_RATING, 5.0)
    # run r<n> retrieves a growing mix of the answering passages; the official judges p0, p3 relevant
    (ws / "qrels").mkdir()
    (ws / "qrels" / "official.qrels").write_text("".join(f"{q} 0 {p} 1\n"
                                                         for q, p in (("q1", "p0"), ("q1", "p1"), ("q2", "p3"))))
    return ws


def test_cover_and_max_label_rows_equal_scipy_on_leaderboards_made_here(small):
    result = MetaEvaluateJob(small, official=LeaderboardFile(small / "official.tsv"), bootstrap=0,
                             families=("cover", "qrels"), labels=("max", "sum")).run()
    row = result.table.set_index("evaluation").loc["EXAM-Cover@20, tau 5"]
    official = {f"r{k}": k / 10 for k in range(6)}
    expected = correlate(official, COVER)
    assert row["spearman"] == pytest.approx(expected.spearman) and row["kendall"] == pytest.approx(expected.kendall)
    assert row["tau_ap"] == pytest.approx(expected.tau_ap) and row["n_systems"] == 6
    assert math.isnan(row["kendall_low"])  # --bootstrap 0: no intervals
    assert result.scores["EXAM-Cover@20, tau 5"].to_dict() == pytest.approx(COVER)
    # the 0-5 self-ratings here take the values 0 and 5 only: the grid reads them at 5
    assert set(result.table["tau"].dropna()) == {5.0}
    assert "P@20, max label >= 5" in set(result.table["evaluation"])


def test_grade_levels_are_the_positive_grades_seen():
    assert grade_levels(pd.Series([0, 1, 2, 3, 4, 5, 5])) == [1, 2, 3, 4, 5]
    assert grade_levels(pd.Series([0.0, 1.0])) == [1.0]
    assert grade_levels(pd.Series([0.25 * k for k in range(41)])) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]


def test_bootstrap_is_reproducible_under_a_seed_and_moves_with_it(small):
    def run(seed: int):
        return MetaEvaluateJob(small, bootstrap=200, irt_bootstrap=5, seed=seed, families=("cover", "irt")).run()

    first, again, other = run(1), run(1), run(2)
    pd.testing.assert_frame_equal(first.table, again.table)
    pd.testing.assert_frame_equal(first.low, again.low)
    assert not first.low.equals(other.low)


def test_refused_inputs(small):
    with pytest.raises(MetaEvaluationError, match="names no run read: nope"):
        MetaEvaluateJob(small, exclude=["nope"], bootstrap=0).run()
    with pytest.raises(MetaEvaluationError, match="run\\(s\\) left"):
        MetaEvaluateJob(small, exclude=["r0", "r1", "r2", "r3"], bootstrap=0).run()
    with pytest.raises(MetaEvaluationError, match="unknown evaluation families bogus"):
        MetaEvaluateJob(small, families=("bogus",), bootstrap=0).run()
    (small / "qrels" / "official.qrels").unlink()
    with pytest.raises(MetaEvaluationError, match="no official qrels"):
        MetaEvaluateJob(small, bootstrap=0).run()


@pytest.mark.slow
def test_cli_formats_agree(small):
    args = ["meta-evaluate", "-w", str(small), "--bootstrap", "50", "--irt-bootstrap", "3", "--seed", "3"]
    tsv = pd.read_csv(__import__("io").StringIO(cli(*args, "--format", "tsv")), sep="\t")
    data = json.loads(cli(*args, "--format", "json"))
    assert [e["evaluation"] for e in data["evaluations"]] == list(tsv["evaluation"])
    assert data["bootstrap"] == 50 and data["seed"] == 3
    text = cli(*args)
    assert text.splitlines()[0].startswith("official: nDCG@10 on ") and "50 bootstrap resamples" in text
    assert "*" in text  # the best of each statistic is marked
    assert "give --official FILE or --official-qrels" in cli(*args, "--official", str(small / "official.tsv"),
                                                               "--official-qrels", "x", code=2)


# --- TREC DL 2019 ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dl19(dl19_workspace) -> Path:
    return dl19_workspace


@pytest.fixture(scope="module")
def dl19_meta(dl19):
    return MetaEvaluateJob(dl19, exclude=[LATE_RUN], bootstrap=300, irt_bootstrap=0, seed=7).run()


# The README's DL19 correlations with the official nDCG@10 (P@20 on EXAM-Qrels at tau, EXAM-Cover@20).
README = {
    "P@20, max label >= 4": (0.9139, 0.7602, 0.6381),
    "P@20, max label >= 1": (0.8829, 0.7229, 0.6727),
    "nDCG@20, max label": None,  # not in the README: checked against correlate below
    "EXAM-Cover@20, tau 4": (0.7171, 0.5159, 0.3472),
    "EXAM-Cover@20, tau 5": (0.8739, 0.6796, 0.4775),
}


@pytest.mark.slow
@pytest.mark.shared
def test_dl19_rows_reproduce_the_readme(dl19_meta):
    table = dl19_meta.table.set_index("evaluation")
    for name, figures in README.items():
        if figures is not None:
            row = table.loc[name]
            assert (round(row["spearman"], 4), round(row["kendall"], 4), round(row["tau_ap"], 4)) == figures, name
    assert set(table["n_systems"]) == {36}
    assert table.index.is_unique and len(table) >= 40


@pytest.mark.slow
@pytest.mark.shared
def test_dl19_intervals_equal_a_plain_loop_over_the_same_draws(dl19_meta):
    from exampp.analysis.statistics import bootstrap_samples

    name = "nDCG@20, max label"
    exam, official = dl19_meta.per_query[name], dl19_meta.official_per_query
    queries = sorted(exam.columns)
    exam, official = exam.loc[official.index, queries], official.loc[:, queries]
    spearman, kendall, ap = [], [], []
    for draw in bootstrap_samples(len(queries), 300, 7):
        a = official.iloc[:, draw].mean(axis=1).round(10)
        b = exam.iloc[:, draw].mean(axis=1).round(10)
        spearman.append(stats.spearmanr(a, b).statistic)
        kendall.append(stats.kendalltau(a, b).statistic)
        ap.append(tau_ap(a.to_numpy(), b.to_numpy()))
    row = dl19_meta.table.set_index("evaluation").loc[name]
    level = 1 - 2 * stats.norm.sf(stats.t.ppf(0.975, 42) * math.sqrt(43 / 42))  # 95% expanded for 43 queries
    assert len(queries) == 43
    for statistic, values in (("spearman", spearman), ("kendall", kendall), ("tau_ap", ap)):
        value = row[statistic]
        reach = np.quantile(np.abs(np.array(values) - value), level)
        expected = (max(value - reach, -1), min(value + reach, 1))
        assert (row[f"{statistic}_low"], row[f"{statistic}_high"]) == pytest.approx(expected, abs=1e-12), statistic
    point = correlate(official.mean(axis=1).to_dict(), exam.mean(axis=1).to_dict())
    assert row["kendall"] == pytest.approx(point.kendall) and row["spearman"] == pytest.approx(point.spearman)


@pytest.mark.slow
@pytest.mark.shared
def test_dl19_irt_row_equals_a_model_fitted_here(dl19, dl19_meta):
    from exampp.analysis.irt.models import IRTModel
    from exampp.api.irt import responses_from_workspace

    responses = responses_from_workspace(dl19, tau=4).responses.without([LATE_RUN])
    theta = dict(zip(responses.respondents, IRTModel().fit(responses.values).theta_))
    expected = correlate(dl19_meta.official.to_dict(), theta)
    row = dl19_meta.table.set_index("evaluation").loc["IRT theta (2PL), tau 4"]
    assert row["kendall"] == pytest.approx(expected.kendall) and row["spearman"] == pytest.approx(expected.spearman)
    assert dl19_meta.scores["IRT theta (2PL), tau 4"].to_dict() == pytest.approx(theta)


@pytest.mark.slow
@pytest.mark.shared
def test_dl19_official_leaderboard_is_ndcg10_on_the_official_qrels(dl19, dl19_meta):
    from exampp.api.scores import LeaderboardJob

    board = LeaderboardJob(dl19 / "runs", dl19 / "qrels" / "official.qrels", ["nDCG@10"], exclude=[LATE_RUN]).run()
    assert dl19_meta.official.to_dict() == pytest.approx(dict(zip(board["run"], board["nDCG@10"])))
    assert dl19_meta.official.name == f"nDCG@10 on {dl19 / 'qrels' / 'official.qrels'}"


def test_deeper_runs_take_intent_measures_at_ndeval_s_cutoff(small):
    seen = []
    result = MetaEvaluateJob(small, bootstrap=0, depth=30, families=("intent",)).run(warn=seen.append)
    assert set(result.table["measure"]) == {"alpha_nDCG@20", "ERR_IA@20"}
    assert any("intent-aware measures at a cutoff of 20, not 30" in line for line in seen)


def test_every_score_is_taken_on_the_queries_all_evaluations_hold(small):
    # the official qrels judge q1 only: cover, official and intervals are all on q1
    (small / "qrels" / "official.qrels").write_text("q1 0 p0 1\nq1 0 p1 1\n")
    seen = []
    result = MetaEvaluateJob(small, bootstrap=100, seed=2, families=("cover",)).run(warn=seen.append)
    assert any("every score and correlation is taken on the 1 in common" in line for line in seen)
    cover_q1 = {"r0": 0.0, "r1": 1 / 3, "r2": 1 / 3, "r3": 2 / 3, "r4": 2 / 3, "r5": 1.0}  # of q1's 3 questions
    assert result.scores["EXAM-Cover@20, tau 5"].to_dict() == pytest.approx(cover_q1)
    assert (list(result.official_per_query.columns) == ["q1"]
            and list(result.per_query["EXAM-Cover@20, tau 5"].columns) == ["q1"])
    # one query: every resample is that query, so every interval is a point at the score
    assert result.low["EXAM-Cover@20, tau 5"].to_dict() == pytest.approx(cover_q1)


def test_an_official_per_query_file_is_resampled_like_the_official_qrels(small, tmp_path):
    from exampp.api.scores import LeaderboardJob

    per_query = LeaderboardJob(small / "runs", small / "qrels" / "official.qrels", ["nDCG@10"], per_query=True).run()
    per_query.to_csv(tmp_path / "official.tsv", sep="\t", index=False)
    from_qrels = MetaEvaluateJob(small, bootstrap=200, seed=5, families=("cover",)).run()
    from_file = MetaEvaluateJob(small, official=LeaderboardFile(tmp_path / "official.tsv"), bootstrap=200, seed=5,
                                families=("cover",)).run()
    pd.testing.assert_frame_equal(from_qrels.table, from_file.table)
    assert from_file.official_per_query is not None


class _Terminal:
    """A stand-in for a terminal's stderr: what tqdm writes, kept."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


def test_progress_counts_each_evaluation_and_each_irt_fit_on_a_terminal_only(small, monkeypatch):
    import sys

    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    args = dict(official=LeaderboardFile(small / "official.tsv"), families=("cover", "irt"), bootstrap=4,
                irt_bootstrap=2)
    shown = MetaEvaluateJob(small, **args).run()
    # one cover row (tau 5, the only grade level) and, at tau 5, the IRT fit and its 2 refits
    assert "meta-evaluating" in terminal.text and " 4/4 " in terminal.text and "5/4" not in terminal.text
    terminal.text = ""
    quiet = MetaEvaluateJob(small, progress=False, **args).run()
    assert terminal.text == ""
    pd.testing.assert_frame_equal(shown.table, quiet.table)


def test_progress_in_a_log_is_a_line_per_interval_not_silence(small, monkeypatch):
    import io
    import sys

    from exampp import progress

    log = io.StringIO()  # stderr under nohup or CI: not a terminal
    monkeypatch.setattr(sys, "stderr", log)
    monkeypatch.setattr(progress, "LOG_EVERY", 0.0)
    MetaEvaluateJob(small, official=LeaderboardFile(small / "official.tsv"), families=("cover", "irt"), bootstrap=4,
                    irt_bootstrap=2).run()
    assert "meta-evaluating: 4/4 steps (100%)" in log.getvalue() and "ETA" in log.getvalue()
