"""`exampp report`'s RAG section: the nugget leaderboard, the agreement of an assignment with the
official one and the citation support, each table equal to its API's result (and the hand-worked
V_strict and support values), the section only where its inputs are given; and a report of a RAG
track without qrels (the nugget leaderboard as the official one, the segmented responses as the runs)."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from chromium import WIDTH
from conftest import shared_path
from exampp.api.nugget_agreement import assignment_agreement
from exampp.api.nuggets import score_nuggets
from exampp.api.report import ReportJob, rag_tables
from exampp.api.support import support_scores
from exampp.cli import main
from exampp.errors import ExamppError
from exampp.formats.nugget_assignments import Answer, AssignedNugget, read_assignments, write_assignments
from exampp.report.content import KAPPA, LEADERBOARD, NUGGET_AGREEMENT, NUGGETS, SUPPORT
from exampp.segment import load_responses
from test_bank_review import RATING, make_workspace
from test_report import DATE, hand_meta, parse, read_tsv, workspace  # noqa: F401 (a fixture)

NUGGETS_COLUMNS = ["run", "V_strict", "low", "high", "A_strict", "V", "A", "W_strict", "W", "n_topics"]
AGREEMENT_COLUMNS = ["assignment", "n_nuggets", "n_topics", "n_runs",
                     *(f"{s}{end}" for s in ("kappa", "kappa_binary", "alpha_ordinal", "kendall", "spearman", "tau_ap")
                       for end in ("", "_low", "_high"))]
SUPPORT_COLUMNS = ["run", "weighted_precision", "weighted_recall", "uncited", "n_topics"]

# Topic q1: nuggets n1, n2 vital, n3 okay; q2: m1 vital, m2 okay. Official assignments per (run, topic).
TOPIC_NUGGETS = {"q1": [("n1", "vital"), ("n2", "vital"), ("n3", "okay")], "q2": [("m1", "vital"), ("m2", "okay")]}
S, P, N = "support", "partial_support", "not_support"
OFFICIAL = {("ra", "q1"): (S, S, S), ("ra", "q2"): (S, N),  # V_strict 1, 1: mean 1
            ("rb", "q1"): (S, P, N), ("rb", "q2"): (P, S),  # 0.5, 0: mean 0.25
            ("rc", "q1"): (N, N, S), ("rc", "q2"): (S, N)}  # 0, 1: mean 0.5
OURS = {**OFFICIAL, ("rb", "q1"): (S, S, N), ("rc", "q2"): (N, N)}
V_STRICT = {"ra": 1.0, "rc": 0.5, "rb": 0.25}  # worked by hand, best first


def answers(assigned: dict[tuple[str, str], tuple[str, ...]]) -> list[Answer]:
    return [Answer(topic, run, f"The answer of {run} to {topic}. It says a little more about it.",
                   tuple(AssignedNugget(text, importance, a)
                         for (text, importance), a in zip(TOPIC_NUGGETS[topic], labels)), query=f"query {topic}")
            for (run, topic), labels in assigned.items()]


def cited(run: str, topic: str, *sentences: list[int]) -> dict:
    """An answer of the citation file: one sentence per list of its citations' support."""
    return {"topic_id": topic, "run_id": run, "sentences": [
        {"sentenceID": i, "text": f"sentence {i}", "citations": [
            {"citationID": j, "reference": f"seg{j}", "support": str(s)} for j, s in enumerate(support)]}
        for i, support in enumerate(sentences)]}


# Weighted precision (mean weight of the judged citations), recall (mean best weight per sentence, 0
# without citations), uncited share; per run the mean over its topics.
CITED = [cited("ra", "q1", [2], [1, 2]), cited("ra", "q2", [0], []),  # ra: P (1+.5+1)/3, 0 -> .4167; R 1, 0 -> .5
         cited("rb", "q1", [1], [0]), cited("rb", "q2", [2])]  # rb: P .25, 1 -> .625; R .25, 1 -> .625; uncited 0
SUPPORT_BY_HAND = {"ra": (5 / 12, 0.5, 0.25), "rb": (0.625, 0.625, 0.0)}


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    paths = {"official": tmp_path / "official.jsonl", "ours": tmp_path / "ours.jsonl.gz",
             "support": tmp_path / "citations.jsonl"}
    write_assignments(answers(OFFICIAL), paths["official"])
    write_assignments(answers(OURS), paths["ours"])
    paths["support"].write_text("".join(json.dumps(a) + "\n" for a in CITED), encoding="utf-8")
    return paths


def test_rag_tables_are_the_apis_results_and_the_hand_worked_values(files):
    tables = rag_tables(files["official"], [files["ours"]], files["support"], bootstrap=50, seed=3)
    assert set(tables) == {NUGGETS, NUGGET_AGREEMENT, SUPPORT}
    board = tables[NUGGETS]
    assert list(board.columns) == NUGGETS_COLUMNS
    assert dict(zip(board["run"], board["V_strict"])) == pytest.approx(V_STRICT)
    assert list(board["run"]) == list(V_STRICT)
    pd.testing.assert_frame_equal(board, score_nuggets(files["official"], bootstrap=50, seed=3).leaderboard)

    agreement = tables[NUGGET_AGREEMENT]
    assert list(agreement.columns) == AGREEMENT_COLUMNS
    expected = assignment_agreement(files["ours"], files["official"], bootstrap=50, seed=3)
    row = agreement.iloc[0]
    assert row["assignment"] == str(files["ours"])
    assert (row["n_nuggets"], row["n_topics"], row["n_runs"]) == (15, 2, 3)
    for statistic, values in expected.nuggets.iterrows():
        assert [row[statistic], row[f"{statistic}_low"], row[f"{statistic}_high"]] == pytest.approx(
            values.tolist(), nan_ok=True)
    for _, values in expected.runs.iterrows():
        s = values["statistic"]
        assert [row[s], row[f"{s}_low"], row[f"{s}_high"]] == pytest.approx(
            [values["value"], values["low"], values["high"]], nan_ok=True)

    support = tables[SUPPORT]
    assert list(support.columns) == SUPPORT_COLUMNS
    pd.testing.assert_frame_equal(support, support_scores(files["support"]))
    assert {r.run: (r.weighted_precision, r.weighted_recall, r.uncited) for r in support.itertuples()} == {
        run: pytest.approx(values) for run, values in SUPPORT_BY_HAND.items()}


def test_only_the_tables_given_and_an_assignment_needs_the_official_one(files):
    assert rag_tables() == {}
    assert set(rag_tables(support=files["support"])) == {SUPPORT}
    assert set(rag_tables(files["official"], bootstrap=0)) == {NUGGETS}
    assert list(rag_tables(files["official"], bootstrap=0)[NUGGETS].columns) == [
        c for c in NUGGETS_COLUMNS if c not in ("low", "high")]
    with pytest.raises(ExamppError, match="need the official one"):
        rag_tables(assigned=[files["ours"]])


@pytest.mark.slow
def test_the_section_is_on_the_page_with_its_tables_and_only_when_given(workspace, files, tmp_path):  # noqa: F811
    report = ReportJob(workspace, tmp_path / "out", meta=hand_meta(), date=DATE, bootstrap=40, seed=1,
                       nuggets=files["official"], nuggets_assigned=[files["ours"], files["official"]],
                       support=files["support"]).run()
    for name in (NUGGETS, NUGGET_AGREEMENT, SUPPORT):
        pd.testing.assert_frame_equal(read_tsv(report.folder / name), report.tables[name], check_dtype=False)
    own = report.tables[NUGGET_AGREEMENT].iloc[1]  # the official assignment against itself agrees fully
    assert [own[s] for s in ("kappa", "kappa_binary", "alpha_ordinal", "kendall", "spearman")] == [1.0] * 5
    page = parse(report.html)
    assert page.sections[:2] == ["summary", "leaderboards"] and page.sections[2] == "rag"
    assert page.rows[NUGGETS] == 3 and page.rows[NUGGET_AGREEMENT] == 2 and page.rows[SUPPORT] == 2
    html = report.html.read_text(encoding="utf-8")
    assert '<a href="#rag">RAG answers</a>' in html
    assert "arXiv:2411.09607" in html and "arXiv:2504.15205" in html and "trec-rag.github.io" in html
    assert f"<dt>nugget assignments</dt><dd>{files['official']}</dd>" in html

    plain = ReportJob(workspace, tmp_path / "plain", meta=hand_meta(), date=DATE).run()
    assert "rag" not in parse(plain.html).sections and "#rag" not in plain.html.read_text(encoding="utf-8")
    assert not {NUGGETS, NUGGET_AGREEMENT, SUPPORT} & set(plain.tables)
    assert not (tmp_path / "plain" / NUGGETS).exists()


def rag_workspace(root: Path, responses: Path) -> Path:
    """A workspace without qrels whose grades are on the segmented ``responses``' passages: the
    first passage of each answer answers its topic's question at 5, the others at 0."""
    runs = load_responses(responses).runs
    grades: dict[tuple[str, str], dict[str, float]] = {}
    for name, run in runs.items():
        for topic, ranked in run.rankings.items():
            for rank, doc in enumerate(ranked):
                grades.setdefault((topic, f"{topic}-x"), {})[doc.docid] = 5 if rank == 0 and name != "rb" else 0
    return make_workspace(root, RATING, {t: {f"{t}-x": f"what about {t}?"} for t in TOPIC_NUGGETS}, grades)


@pytest.mark.slow
def test_a_rag_track_without_qrels_reports_against_the_nugget_leaderboard(files, tmp_path):
    per_query = tmp_path / "nuggets-pq.tsv"
    per_query.write_text(score_nuggets(files["official"]).per_answer.to_csv(sep="\t", index=False), encoding="utf-8")
    ws = rag_workspace(tmp_path / "ws", files["official"])
    out = tmp_path / "out"
    args = ["report", "-w", str(ws), "-o", str(out), "--bootstrap", "20", "--irt-bootstrap", "0",
            "--nuggets", str(files["official"]), "--support", str(files["support"])]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert "no official qrels" in result.output and "--official FILE" in result.output

    result = CliRunner().invoke(main, [*args, "--official", str(per_query), "--official-column", "V_strict",
                                       "--responses", str(files["official"])])
    assert result.exit_code == 0, result.output
    board = read_tsv(out / LEADERBOARD)
    official = f"{per_query} [V_strict]"
    assert list(board["run"]) == list(V_STRICT)
    assert board[official].tolist() == pytest.approx(list(V_STRICT.values()))
    assert not (out / KAPPA).exists()  # no qrels: no agreement of labels
    assert set(read_tsv(out / NUGGETS)["run"]) == set(V_STRICT)
    page = parse(out / "report.html")
    assert "rag" in page.sections and "No official judgments" in " ".join(page.text)


def test_assigned_without_official_nuggets_is_a_usage_error(files, tmp_path):
    result = CliRunner().invoke(main, ["report", "-w", str(tmp_path), "-o", str(tmp_path / "out"),
                                       "--nuggets-assigned", str(files["ours"])])
    assert result.exit_code == 2 and "give --nuggets" in result.output


@pytest.mark.slow
def test_track_file_against_itself_with_partial_support_dropped(tmp_path):
    """The TREC 2024 RAG dev assignments against a copy where partial support became no support:
    three-level κ falls below 1, but support against the rest is unchanged (κ binary 1) and so is
    every V_strict (partial support counts 0 there), so the run leaderboards agree exactly."""
    track = shared_path("data", "rag24", "nugget-assignments.dev.jsonl.gz")
    strict = tmp_path / "strict.jsonl.gz"
    write_assignments([Answer(a.query_id, a.run_id, a.text, tuple(
        AssignedNugget(n.text, n.importance, N if n.assignment == P else n.assignment) for n in a.nuggets), a.query)
        for a in read_assignments(track)], strict)
    tables = rag_tables(track, [strict], bootstrap=20, seed=0)
    board = tables[NUGGETS]
    assert len(board) == board["run"].nunique() and set(board["n_topics"]) <= set(range(1, 12))
    pd.testing.assert_frame_equal(board, score_nuggets(track, bootstrap=20, seed=0).leaderboard)
    row = tables[NUGGET_AGREEMENT].iloc[0]
    assert row["kappa"] < 1 and row["kappa_binary"] == 1.0
    assert (row["kendall"], row["spearman"], row["kendall_low"]) == (1.0, 1.0, 1.0)


@pytest.mark.slow
def test_the_rag_section_fits_the_screen_and_the_printed_page(browser, workspace, tmp_path):  # noqa: F811
    """The track's files (45 runs, long run names and paths) in Chromium: every RAG table has its TSV's
    rows, and nothing is wider than a 1280 px screen or, printed, the A4 text column."""
    rag24 = shared_path("data", "rag24")
    report = ReportJob(workspace, tmp_path / "out", meta=hand_meta(), date=DATE, bootstrap=20,
                       nuggets=rag24 / "nugget-assignments.dev.jsonl.gz",
                       nuggets_assigned=[rag24 / "nugget-assignments.dev.jsonl.gz"],
                       support=rag24 / "final.citation_judgments_Webassess.20241031.jsonl.gz").run()
    browser.get(report.html.resolve().as_uri())
    tables = dict(browser.execute_script(
        "return [...document.querySelectorAll('#rag table')].map(t => [t.dataset.tsv, t.tBodies[0].rows.length])"))
    assert tables == {name: len(read_tsv(report.folder / name)) for name in (NUGGETS, NUGGET_AGREEMENT, SUPPORT)}
    assert browser.execute_script("return document.documentElement.scrollWidth") <= WIDTH
    column = round((210 - 24) / 25.4 * 96)
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": column, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
    assert browser.execute_script("return document.documentElement.scrollWidth") <= column
