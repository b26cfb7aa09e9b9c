"""The README's TREC DL 2019 sequence, end to end through the CLI, on the reference data.

Every figure is checked against an independent route: run scores, cover and kappa are
recomputed here straight from the reference JSONL (no exampp code), the official nDCG@10
leaderboard with exampp's own trec_eval port instead of ir_measures/pytrec_eval, and the
correlations with scipy. The pinned figures are the ones the README reports.
"""
from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner
from scipy import stats

from conftest import shared_path
from exampp.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.shared]
LATE_RUN = "UNH_exDL_bm25"  # added after the track: kept out of the correlations


def cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def raw() -> dict:
    """Straight from the reference file: max self-rating, official grade, run rankings."""
    path = shared_path("data", "dl19", "DL19-graded-t5-rating-genq-exam-qrels-runs-with-text.jsonl.gz")
    label, official, ratings = {}, {}, {}
    ranked: dict[str, dict[str, list[tuple[int, str]]]] = defaultdict(lambda: defaultdict(list))
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            qid, paragraphs = json.loads(line)
            for p in paragraphs:
                pid = p["paragraph_id"]
                rated = {r["question_id"]: r["self_rating"] for r in p["exam_grades"][0]["self_ratings"]}
                ratings[qid, pid] = rated
                label[qid, pid] = max(rated.values())
                official[qid, pid] = p["paragraph_data"]["judgments"][0]["relevance"]
                for r in p["paragraph_data"]["rankings"]:
                    ranked[r["method"]][qid].append((r["rank"], pid))
    tops = {run: {q: [pid for _, pid in sorted(entries)][:20] for q, entries in per_q.items()}
            for run, per_q in ranked.items()}
    queries = sorted({q for q, _ in label})
    questions = {q: {question for (qq, _), rated in ratings.items() if qq == q for question in rated} for q in queries}
    return {"label": label, "official": official, "ratings": ratings, "tops": tops, "queries": queries,
            "questions": questions}


@pytest.fixture(scope="module")
def workspace(dl19_workspace) -> Path:
    ws = dl19_workspace
    cli("qrels", "-w", str(ws))
    for tau in range(1, 6):
        cli("qrels", "-w", str(ws), "--min-grade", str(tau), "-o", str(ws / "qrels" / f"exam-{tau}.qrels"))
    return ws


def _board(text: str, column: str) -> dict[str, float]:
    return {row["run"]: row[column] for row in json.loads(text)}


def test_graded_exam_qrels_equal_the_reference_tools(workspace):
    ours = sorted((workspace / "qrels" / "exam.qrels").read_text().splitlines())
    theirs = sorted(shared_path("data", "dl19", "dl19-exam-3.qrels").read_text().splitlines())
    assert len(ours) == 9260 and ours == theirs


def test_p20_leaderboard_matches_a_recount_from_the_raw_file(workspace, raw):
    board = _board(cli("leaderboard", str(workspace / "runs"), "--qrels", str(workspace / "qrels" / "exam-4.qrels"),
                       "-m", "P@20", "--format", "json"), "P@20")
    assert len(board) == 37
    for run in ("p_bert", "TUW19-p1-f", "ms_duet_passage"):  # TUW19-* have 0-based ranks in the file
        hits = [sum(raw["label"][q, pid] >= 4 for pid in raw["tops"][run].get(q, [])) for q in raw["queries"]]
        assert board[run] == pytest.approx(sum(hits) / 20 / 43, abs=1e-12)


def test_cover_matches_a_recount_from_the_raw_file(workspace, raw):
    board = _board(cli("cover", "-w", str(workspace), "--tau", "4", "--format", "json"), "mean")
    for run in ("p_bert", "bm25base_p"):
        per_query = []
        for q in raw["queries"]:
            covered = {question for pid in raw["tops"][run].get(q, [])
                       for question, grade in raw["ratings"][q, pid].items() if grade >= 4}
            per_query.append(len(covered) / len(raw["questions"][q]))
        assert board[run] == pytest.approx(sum(per_query) / 43, abs=1e-12)


def test_correlations_against_official_ndcg10(workspace, raw):
    from exampp.formats.trec_qrels import read_qrels
    from exampp.formats.trec_run import read_runs
    from exampp.trec_eval import evaluate

    runs = {n: r for n, r in read_runs(workspace / "runs").items() if n != LATE_RUN}
    assert len(runs) == 36
    qrels = read_qrels(workspace / "qrels" / "official.qrels")
    official = {n: next(s.value for s in evaluate(qrels, r, ["ndcg_cut.10"], complete=True)
                        if s.measure == "ndcg_cut_10") for n, r in runs.items()}
    exam = {n: sum(raw["label"][q, pid] >= 4 for q in raw["queries"] for pid in raw["tops"][n].get(q, [])) / 20 / 43
            for n in runs}
    names = sorted(runs)
    a, b = [round(official[n], 10) for n in names], [round(exam[n], 10) for n in names]

    report = json.loads(cli(
        "correlate", "--runs", str(workspace / "runs"), "--exclude", LATE_RUN,
        "--a-qrels", str(workspace / "qrels" / "official.qrels"), "--a-measure", "nDCG@10",
        "--b-qrels", str(workspace / "qrels" / "exam-4.qrels"), "--b-measure", "P@20", "--format", "json"))
    assert report["n_systems"] == 36
    assert report["spearman"] == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-9)
    assert report["kendall"] == pytest.approx(stats.kendalltau(a, b).statistic, abs=1e-9)
    assert report["pearson"] == pytest.approx(stats.pearsonr(a, b).statistic, abs=1e-9)
    # the figures the README reports
    assert (round(report["spearman"], 4), round(report["kendall"], 4), round(report["tau_ap"], 4)) == (
        0.9139, 0.7602, 0.6381)


def test_kappa_matches_a_recount_from_the_raw_file(workspace, raw):
    report = json.loads(cli("agree", "--exam", str(workspace / "qrels" / "exam.qrels"),
                            "--official", str(workspace / "qrels" / "official.qrels"), "--format", "json"))
    row = next(r for r in report["thresholds"] if r["tau"] == 4)
    pairs = [(raw["label"][k] >= 4, raw["official"][k] >= 1) for k in raw["label"]]
    n = len(pairs)
    tp = sum(e and o for e, o in pairs)
    tn = sum(not e and not o for e, o in pairs)
    observed = (tp + tn) / n
    p_exam, p_official = sum(e for e, _ in pairs) / n, sum(o for _, o in pairs) / n
    chance = p_exam * p_official + (1 - p_exam) * (1 - p_official)
    assert (row["tp"], row["tn"], row["n"]) == (tp, tn, 9260)
    assert row["kappa"] == pytest.approx((observed - chance) / (1 - chance), abs=1e-12)
    assert round(row["kappa"], 4) == 0.3675
