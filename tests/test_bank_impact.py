"""`exampp bank impact`: labels, covers, measures and leaderboards before and after a bank change,
worked out by hand on a small collection with a keyword grader, and checked against `exampp
grade` + `exampp cover` + `exampp leaderboard` run on each bank in its own workspace."""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

import fake_grader
from conftest import EXAMPLES
from exampp.api.bank_impact import NoImpact, bank_impact
from exampp.api.grade import GradeJob
from exampp.cli import main
from exampp.formats.trec_qrels import read_qrels
from exampp.grading.base import Judgment, Pair
from exampp.stores.grade_store import GradeStore
from test_grade_cli import use_method

SEEN: list[tuple[str, str]] = []  # (passage text, question text) of every pair the keyword grader grades


@dataclass(frozen=True)
class KeywordMethod(fake_grader.FakeMethod):
    """Grade 5 when the question's last word is a word of the passage, else 1."""

    name = "keyword"
    judge = "keyword"

    def grade(self, backend, pairs: Sequence[Pair]) -> list[Judgment]:
        SEEN.extend((p.passage, p.question.text) for p in pairs)
        return [Judgment(5.0 if p.question.text.split()[-1] in p.passage.split() else 1.0) for p in pairs]


@pytest.fixture(autouse=True)
def methods(monkeypatch):
    use_method(monkeypatch, KeywordMethod)
    use_method(monkeypatch, fake_grader.FakeMethod)
    SEEN.clear()


PASSAGES = {"a1": "alpha", "a2": "beta", "a3": "zeta", "b1": "gamma", "b2": "delta gamma", "b3": "zeta"}
# Depth 2. Q1 questions: alpha, beta; Q2: gamma, delta.
RUNS = {"A": {"Q1": ["a1", "a3"], "Q2": ["b2", "b3"]},
        "B": {"Q1": ["a2", "a1"], "Q2": ["b3"]},
        "C": {"Q1": ["a3"], "Q2": ["b1"]}}
QUESTIONS = {"Q1": ["q alpha", "q beta"], "Q2": ["q gamma", "q delta"]}


def write_bank(path: Path, questions: dict[str, list[str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"query_id": q, "text": t}) + "\n" for q, texts in questions.items()
                            for t in texts))
    return path


@pytest.fixture
def ws(tmp_path) -> Path:
    """A workspace graded with the keyword grader against QUESTIONS (exampp.toml: depth 2, tau 4)."""
    root = tmp_path / "ws"
    (root / "corpus").mkdir(parents=True)
    (root / "corpus/passages.jsonl").write_text(
        "".join(json.dumps({"docid": d, "text": t}) + "\n" for d, t in PASSAGES.items()))
    (root / "runs").mkdir()
    for name, queries in RUNS.items():
        (root / "runs" / f"{name}.run").write_text("".join(
            f"{q} Q0 {d} {i + 1} {10 - i} {name}\n" for q, docs in queries.items() for i, d in enumerate(docs)))
    write_bank(root / "question_banks/questions.jsonl", QUESTIONS)
    (root / "exampp.toml").write_text('grader = "keyword"\ndepth = 2\ntau = 4\n')
    GradeJob.configure(workspace=root, progress=False).run()
    SEEN.clear()
    return root


def rows(table: pd.DataFrame) -> list[tuple]:
    """A table's rows, NaN as None."""
    return [tuple(None if isinstance(v, float) and math.isnan(v) else v for v in row)
            for row in table.itertuples(index=False)]


def board(impact, score: str) -> dict[str, tuple]:
    table = impact.leaderboards[impact.leaderboards["score"] == score]
    return {r.run: (r.before, r.after, r.rank_before, r.rank_after, r.rank_change) for r in table.itertuples()}


def correlation(impact, score: str) -> dict:
    return impact.correlations.set_index("score").loc[score].to_dict()


def test_removing_one_querys_questions_changes_exactly_that_query(ws, tmp_path):
    new = write_bank(tmp_path / "new.jsonl", {"Q2": QUESTIONS["Q2"]})
    impact = bank_impact(new, workspace=ws)

    assert impact.questions.to_dict("records") == [
        {"query_id": "Q1", "before": 2, "after": 0, "added": 0, "removed": 2, "changed": 0, "unchanged": 0},
        {"query_id": "Q2", "before": 2, "after": 2, "added": 0, "removed": 0, "changed": 0, "unchanged": 2}]
    assert impact.graded == 0 and SEEN == []
    # Labels: the best grade over the query's questions; Q1's go, Q2's stay.
    assert rows(impact.labels) == [("Q1", "a1", 5.0, None), ("Q1", "a2", 5.0, None), ("Q1", "a3", 1.0, None)]
    assert impact.label_counts.to_dict("records") == [{"query_id": "Q1", "passages": 3, "changed": 3},
                                                      {"query_id": "Q2", "passages": 3, "changed": 0}]
    # EXAM-Cover@2 at tau 4. Before: A (1/2 + 2/2)/2, B (2/2 + 0)/2, C (0 + 1/2)/2; after: Q2 only,
    # the query without questions left out of the mean as `exampp cover` does.
    assert board(impact, "EXAM-Cover@2") == {"A": (0.75, 1.0, 1, 1, 0), "B": (0.5, 0.0, 2, 3, -1),
                                             "C": (0.25, 0.5, 3, 2, 1)}
    changed = impact.changed_scores()
    assert set(changed["query_id"]) == {"Q1"}
    assert changed["after"].isna().all()
    # P(rel=4)@2 on the EXAM-Qrels (labels >= 4 relevant). Before: A (1/2 + 1/2)/2, B (2/2 + 0/2)/2,
    # C (0 + 1/2)/2; after: Q2 only.
    assert board(impact, "P(rel=4)@2") == {"A": (0.5, 0.5, 1, 1, 0), "B": (0.5, 0.0, 1, 3, -2),
                                           "C": (0.25, 0.5, 3, 1, 2)}
    # Kendall's tau-b of (0.75, 0.5, 0.25) and (1, 0, 0.5): 2 concordant, 1 discordant pair.
    cover = correlation(impact, "EXAM-Cover@2")
    assert cover["kendall"] == pytest.approx(1 / 3) and cover["spearman"] == pytest.approx(0.5)
    assert cover["n_systems"] == 3
    assert any("query 'Q1' not in the exam" in w for w in impact.warnings)


@pytest.mark.slow
def test_adding_questions_grades_only_the_new_pairs(ws, tmp_path):
    with GradeStore(ws / "grades.sqlite") as store:
        count = store.counts()["grades"]
    new = write_bank(tmp_path / "new.jsonl", {"Q1": QUESTIONS["Q1"], "Q2": QUESTIONS["Q2"] + ["q zeta"]})
    impact = bank_impact(new, workspace=ws)

    # Q2's pool (b1, b2, b3) against the one new question; nothing of the old bank again.
    assert sorted(SEEN) == [("delta gamma", "q zeta"), ("gamma", "q zeta"), ("zeta", "q zeta")]
    assert impact.graded == 3 and impact.after.summary.graded == 3 and impact.before.summary.graded == 0
    with GradeStore(ws / "grades.sqlite") as store:
        assert store.counts()["grades"] == count + 3
    assert impact.questions["added"].tolist() == [0, 1]
    assert rows(impact.labels) == [("Q2", "b3", 1.0, 5.0)]
    # Q2 now has 3 questions: A answers all three, B zeta, C gamma.
    assert board(impact, "EXAM-Cover@2") == {"A": (0.75, 0.75, 1, 1, 0), "B": (0.5, pytest.approx(2 / 3), 2, 2, 0),
                                             "C": (0.25, pytest.approx(1 / 6), 3, 3, 0)}
    assert correlation(impact, "EXAM-Cover@2")["kendall"] == 1.0
    assert "grading: 3 new pairs graded" in impact.summary()[1]

    again = bank_impact(new, workspace=ws)  # graded once: nothing left to grade
    assert again.graded == 0 and len(SEEN) == 3


def test_the_workspace_outputs_are_left_as_they_are(ws, tmp_path):
    # Q1's "q beta" has an id of its own, which the new bank keeps for another text ("q zeta").
    bank = ws / "question_banks/questions.jsonl"
    bank.write_text(bank.read_text().replace('"text": "q beta"', '"question_id": "Q1/b", "text": "q beta"'))
    GradeJob.configure(workspace=ws, progress=False).run()
    qrels = ws / "qrels/exam.qrels"
    kept = (qrels.read_bytes(), qrels.stat().st_mtime_ns)
    files = sorted(p.relative_to(ws) for p in ws.rglob("*") if not p.name.startswith("grades.sqlite"))
    cover = ["cover", "-w", str(ws), "--depth", "2", "--tau", "4", "--format", "json"]
    covered = CliRunner().invoke(main, cover).stdout
    edited = tmp_path / "edited.jsonl"
    edited.write_text(bank.read_text().replace('"text": "q beta"', '"text": "q zeta"'))
    impact = bank_impact(edited, workspace=ws)

    assert impact.questions["changed"].tolist() == [1, 0] and impact.graded == 3  # a1, a2, a3 x "q zeta"
    assert rows(impact.labels) == [("Q1", "a2", 5.0, 1.0), ("Q1", "a3", 1.0, 5.0)]
    assert (qrels.read_bytes(), qrels.stat().st_mtime_ns) == kept
    assert sorted(p.relative_to(ws) for p in ws.rglob("*") if not p.name.startswith("grades.sqlite")) == files
    # The store reads the edited id through the workspace's text again, as before the impact.
    assert CliRunner().invoke(main, cover).stdout == covered


@pytest.mark.slow
def test_correlation_is_scipys_on_the_score_columns(tmp_path):
    """On the example collection with the md5 grader (ties in P(rel=4)@20: Kendall's tau-b)."""
    ws = tmp_path / "ws"
    GradeJob.configure(EXAMPLES / "exampp.toml", ws, runs=(str(EXAMPLES / "runs"),), grader="fake",
                       progress=False).run()
    impact = bank_impact(without_q3(tmp_path), config=EXAMPLES / "exampp.toml", workspace=ws, runs=EXAMPLES / "runs",
                         grader="fake")
    for score, table in impact.leaderboards.groupby("score"):
        kendall = stats.kendalltau(table["before"], table["after"]).statistic
        spearman = stats.spearmanr(table["before"], table["after"]).statistic
        expected = correlation(impact, score)
        if table["before"].nunique() == 1 or table["after"].nunique() == 1:
            assert math.isnan(expected["kendall"])
        else:
            assert expected["kendall"] == pytest.approx(kendall, abs=1e-12)
            assert expected["spearman"] == pytest.approx(spearman, abs=1e-12)
    ties = impact.leaderboards[impact.leaderboards["score"] == "P(rel=4)@20"]
    assert ties["before"].nunique() < len(ties)  # the case tau-b is for


def without_q3(tmp_path: Path) -> Path:
    """The example collection's bank without Q3's questions."""
    new = tmp_path / "no-q3.jsonl"
    new.write_text("".join(line for line in (EXAMPLES / "question_banks/questions.jsonl").read_text().splitlines(True)
                           if json.loads(line)["query_id"] != "Q3"))
    return new


@pytest.mark.slow
def test_agrees_with_grade_cover_and_leaderboard_on_each_bank(tmp_path):
    """Before and after are what `exampp grade`, `exampp cover` and `exampp leaderboard` give in two
    workspaces, one graded with each bank."""
    new = without_q3(tmp_path)
    sides = {}
    for side, bank in (("before", EXAMPLES / "question_banks/questions.jsonl"), ("after", new)):
        ws = tmp_path / side
        common = ["--config", str(EXAMPLES / "exampp.toml"), "-w", str(ws), "--grader", "fake", "--no-progress"]
        assert CliRunner().invoke(main, ["grade", str(EXAMPLES / "runs"), "--bank", str(bank), *common]).exit_code == 0
        cover = CliRunner().invoke(main, ["cover", str(EXAMPLES / "runs"), "-w", str(ws), "--bank", str(bank),
                                          "--format", "json"])
        measures = CliRunner().invoke(main, ["leaderboard", str(EXAMPLES / "runs"), "--qrels",
                                             str(ws / "qrels/exam.qrels"), "-m", "nDCG@20", "-m", "P(rel=4)@20",
                                             "--format", "json"])
        sides[side] = (read_qrels(ws / "qrels/exam.qrels"),
                       {r["run"]: r["mean"] for r in json.loads(cover.stdout)},
                       {r["run"]: (r["nDCG@20"], r["P(rel=4)@20"]) for r in json.loads(measures.stdout)})
    impact = bank_impact(new, config=EXAMPLES / "exampp.toml", workspace=tmp_path / "before", runs=EXAMPLES / "runs",
                         grader="fake")
    assert impact.before.labels == sides["before"][0] and impact.after.labels == sides["after"][0]
    changed = {(q, d) for q in sides["before"][0] for d in sides["before"][0][q]
               if sides["after"][0].get(q, {}).get(d) != sides["before"][0][q][d]}
    assert set(zip(impact.labels["query_id"], impact.labels["passage_id"])) == changed
    assert {q for q, _ in changed} == {"Q3"}
    for i, side in enumerate(("before", "after")):
        _, covers, measures = sides[side]
        assert {r: v[i] for r, v in board(impact, "EXAM-Cover@20").items()} == covers
        assert {r: v[i] for r, v in board(impact, "nDCG@20").items()} == {r: v[0] for r, v in measures.items()}
        assert {r: v[i] for r, v in board(impact, "P(rel=4)@20").items()} == {r: v[1] for r, v in measures.items()}


@pytest.mark.slow
def test_cli_prints_the_summary_and_leaderboards_and_writes_the_tables(ws, tmp_path, monkeypatch):
    new = write_bank(tmp_path / "new.jsonl", {"Q2": QUESTIONS["Q2"]})
    out = tmp_path / "impact"
    monkeypatch.chdir(tmp_path)  # no exampp.toml here: the workspace's own is read
    result = CliRunner().invoke(main, ["bank", "impact", str(new), "-w", str(ws), "--out", str(out), "-m", "P@2"])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.startswith("questions: 4 before, 2 after: 0 added, 2 removed, 0 changed, 2 unchanged "
                           "(Q1: 2 removed)\ngrading: 0 new pairs graded")
    assert "labels: 3 of 6 pooled passages change label (Q1: 3)\n" in text
    assert "scores: EXAM-Cover@2 counting grades >= 4; P@2 on the EXAM-Qrels (graded labels)" in text
    assert ("EXAM-Cover@2: Kendall's tau-b 0.3333, Spearman 0.5000 over 3 runs\n"
            "run  before  after   delta  rank_before  rank_after  rank_change\n"
            "  A  0.7500 1.0000  0.2500            1           1            0\n"
            "  B  0.5000 0.0000 -0.5000            2           3           -1\n"
            "  C  0.2500 0.5000  0.2500            3           2            1\n") in text
    assert sorted(p.name for p in out.iterdir()) == ["correlation.tsv", "labels.tsv", "leaderboard.tsv", "systems.tsv"]
    assert (out / "labels.tsv").read_text() == ("query_id\tpassage_id\tbefore\tafter\n"
                                                "Q1\ta1\t5.0\t\nQ1\ta2\t5.0\t\nQ1\ta3\t1.0\t\n")
    systems = pd.read_csv(out / "systems.tsv", sep="\t")
    assert set(systems["query_id"]) == {"Q1"} and len(systems) == 6  # 3 runs x (cover, P@2)
    leaderboard = pd.read_csv(out / "leaderboard.tsv", sep="\t")
    assert leaderboard.groupby("score").size().to_dict() == {"EXAM-Cover@2": 3, "P@2": 3}

    as_json = CliRunner().invoke(main, ["bank", "impact", str(new), "-w", str(ws), "--format", "json"])
    report = json.loads(as_json.stdout)
    assert report["graded"] == 0 and report["tau"] == 4
    assert report["labels"][0] == {"query_id": "Q1", "passage_id": "a1", "before": 5.0, "after": None}
    assert [c["score"] for c in report["correlations"]] == ["EXAM-Cover@2", "nDCG@2", "P(rel=4)@2"]
    tsv = CliRunner().invoke(main, ["bank", "impact", str(new), "-w", str(ws), "--format", "tsv", "--min-grade", "4"])
    assert tsv.stdout.splitlines()[0] == "score\trun\tbefore\tafter\tdelta\trank_before\trank_after\trank_change"
    assert {line.split("\t")[0] for line in tsv.stdout.splitlines()[1:]} == {"EXAM-Cover@2", "nDCG@2", "P@2"}


def test_errors(ws, tmp_path, monkeypatch):
    new = write_bank(tmp_path / "new.jsonl", QUESTIONS)
    bad = CliRunner().invoke(main, ["bank", "impact", str(new), "-w", str(ws), "-m", "ndcg@2"])
    assert bad.exit_code == 2 and "did you mean nDCG@2" in bad.output

    class Direct(fake_grader.FakeMethod):
        name, direct = "fake-direct", True

    use_method(monkeypatch, Direct)
    with pytest.raises(NoImpact, match="grades query titles"):
        bank_impact(new, workspace=ws, grader="fake-direct")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"query_id": "Q1"}\n')
    result = CliRunner().invoke(main, ["bank", "impact", str(broken), "-w", str(ws)])
    assert result.exit_code == 1 and f"{broken}:1" in result.output and "Traceback" not in result.output


@pytest.mark.slow
def test_through_an_openai_server_only_the_new_pairs_are_requested(ws, tmp_path):
    """Self-ratings from a real OpenAI-compatible server on loopback: 5 when the question's keyword is
    in the passage, else 1; the impact of one added question sends one request per pooled passage
    of its query."""
    from exampp.testing.openai_server import OpenAIServer

    def asked(prompt: str) -> tuple[str, str]:
        """(question, passage) of a self-rating prompt ("...Question: {question}\\nContext: {context}")."""
        question, passage = prompt.split("Question: ")[1].split("\nContext: ")
        return question, passage

    def rate(seen) -> str:
        question, passage = asked(seen.prompt)
        return "5" if question.split()[-1] in passage.split() else "1"

    new = write_bank(tmp_path / "new.jsonl", {"Q1": QUESTIONS["Q1"], "Q2": QUESTIONS["Q2"] + ["q zeta"]})
    with OpenAIServer(reply=rate) as server:
        common = ["-w", str(ws), "--grader", "self-rating", "--backend", "openai", "--base-url", server.url,
                  "--model", "tiny", "--no-progress"]
        assert CliRunner().invoke(main, ["grade", *common]).exit_code == 0
        assert len(server.completions()) == 12  # 6 pooled passages x their query's 2 questions
        result = CliRunner().invoke(main, ["bank", "impact", str(new), *common, "--format", "json"])
        assert result.exit_code == 0, result.output
        assert sorted(asked(seen.prompt) for seen in server.completions()[12:]) == [
            ("q zeta", "delta gamma"), ("q zeta", "gamma"), ("q zeta", "zeta")]
    report = json.loads(result.stdout)
    assert report["graded"] == 3 and "judge: 3 requests" in result.stderr
    assert report["labels"] == [{"query_id": "Q2", "passage_id": "b3", "before": 1.0, "after": 5.0}]
