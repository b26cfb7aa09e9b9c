"""`exampp report`'s judge-integrity section: the audit's per-run table and flagged texts on the page
and as TSV (equal to `exampp audit`'s), one sentence where nothing is flagged, long tables cut
short with a sentence saying so, the answers audited with --responses, and no section where there
is nothing to audit."""
from __future__ import annotations

import functools
import json

import pandas as pd
import pytest

import exampp.api.report as report_job
from exampp.api.audit import audit
from exampp.api.report import ReportJob
from exampp.report.content import AUDIT, AUDIT_FLAGS
from exampp.report.tables import audit_tables
from test_audit_cli import RATED, graded_ws, plant  # noqa: F401 (a fixture)
from test_audit_responses import graded, ws  # noqa: F401 (fixtures: the example workspace with its responses)
from test_report import DATE, hand_meta, parse, read_tsv


def section(page) -> str:
    """The page's text from the judge-integrity section on (it is the last)."""
    text = " ".join(page.text)
    return text[text.index("Judge integrity", text.index("Judge integrity") + 1):]


@pytest.mark.slow
def test_flagged_texts_and_the_per_run_table(graded_ws, tmp_path):  # noqa: F811
    plant(graded_ws)  # an injection in bm25's ranking of Q1, a passage three times in weak's of Q2
    report = ReportJob(graded_ws, tmp_path / "out", meta=hand_meta(), date=DATE).run()
    page = parse(report.html)
    assert page.sections[-1] == "audit"
    assert '<a href="#audit">Judge integrity</a>' in report.html.read_text(encoding="utf-8")
    # the tables are the audit's (an independent call of the job), written beside the page
    expected = audit(graded_ws, method=RATED)
    pd.testing.assert_frame_equal(read_tsv(report.folder / AUDIT), expected.table, check_dtype=False)
    flagged = read_tsv(report.folder / AUDIT_FLAGS)
    assert flagged[["query_id", "text_id", "kind", "runs"]].to_numpy().tolist() == [
        ["Q1", "planted-Q1", "injection", "bm25"],
        ["Q2", "copy-a", "duplicate", "weak"], ["Q2", "copy-b", "duplicate", "weak"],
        # honest passages that hold a bank question nearly word for word (the example bank's questions
        # were written from its passages)
        ["Q2", "d-Q2-016", "leakage", "bm25,dense-like,oracle-ish"],
        ["Q4", "d-Q4-036", "leakage", "bm25,dense-like,keyword-stuffed,oracle-ish"]]
    assert page.rows[AUDIT] == 6 and page.rows[AUDIT_FLAGS] == 5
    text = section(page)
    assert f"Every pooled passage (the top 20 of every run: {expected.pooled})" in text
    assert f"5 of the {expected.pooled} texts are flagged" in text and "All 5 flags" in text
    assert "with the default thresholds" in text and "graded 0" in text


@pytest.mark.slow
def test_nothing_flagged_is_one_sentence(graded_ws, tmp_path):  # noqa: F811
    bank = graded_ws / "question_banks" / "questions.jsonl"  # Q1's questions only: no leakage elsewhere
    lines = bank.read_text().splitlines()
    bank.write_text("".join(line + "\n" for line in lines if json.loads(line)["query_id"] == "Q1"))
    warned = []  # the runs' other queries are not in the exam
    report = ReportJob(graded_ws, tmp_path / "out", meta=hand_meta(), date=DATE).run(warn=warned.append)
    assert len(warned) == 6
    page = parse(report.html)
    assert page.sections[-1] == "audit"
    assert section(page).strip().endswith("No text is flagged.")
    assert not {AUDIT, AUDIT_FLAGS} & set(page.rows) and not {AUDIT, AUDIT_FLAGS} & set(report.tables)
    assert not (report.folder / AUDIT).exists()


@pytest.mark.slow
def test_long_tables_are_cut_short_and_say_so(graded_ws, tmp_path, monkeypatch):  # noqa: F811
    plant(graded_ws)
    monkeypatch.setattr(report_job, "audit_tables", functools.partial(audit_tables, runs_shown=5, flags_shown=2))
    report = ReportJob(graded_ws, tmp_path / "out", meta=hand_meta(), date=DATE).run()
    page = parse(report.html)
    # 6 runs, more than 5: the one without a flagged text (random) is named instead of listed
    full = audit(graded_ws, method=RATED).table
    assert sorted(full["run"]) == ["bm25", "dense-like", "keyword-stuffed", "oracle-ish", "random", "weak"]
    assert read_tsv(report.folder / AUDIT)["run"].tolist() == [name for name in full["run"] if name != "random"]
    assert page.rows[AUDIT] == 5 and page.rows[AUDIT_FLAGS] == 2 == len(read_tsv(report.folder / AUDIT_FLAGS))
    section(page)
    html = report.html.read_text(encoding="utf-8")
    assert 'Not listed, the runs without a flagged text (1): <span class="k">random</span>.' in html
    assert "The first 2 of 5 flags (<code>exampp audit --flags FILE</code> lists them all)" in html
    assert "All 5 flags" not in html


def test_the_summary_by_hand():
    from exampp.api.audit import AuditResult
    from exampp.audit import Flag

    table = pd.DataFrame({"run": ["a", "b", "c"], "flagged": [2, 0, 0]})
    flags = [Flag("stuffing", "q", "t1", "e", 2.0), Flag("injection", "q", "t1", "e", 1.0),
             Flag("leakage", "q", "t2", "e", 0.9)]
    flagged = pd.DataFrame({"query_id": ["q"] * 3, "text_id": ["t1", "t1", "t2"], "runs": [("a", "b"), ("a", "b"),
                                                                                          ("a",)]})
    result = AuditResult(table, flagged, flags, 10, 20, None, None, "answers", "nuggets")
    summary, tables = audit_tables(result, runs_shown=2, flags_shown=2)
    assert (summary.texts, summary.thresholds, summary.pooled, summary.flagged_texts, summary.flags, summary.runs,
            summary.unflagged, summary.scored) == ("answers", "nuggets", 10, 2, 3, 3, ["b", "c"], False)
    assert tables[AUDIT]["run"].tolist() == ["a"]
    assert tables[AUDIT_FLAGS]["runs"].tolist() == ["a,b", "a,b"]
    summary, tables = audit_tables(result, runs_shown=3)
    assert summary.unflagged == [] and tables[AUDIT]["run"].tolist() == ["a", "b", "c"]
    summary, tables = audit_tables(AuditResult(table.assign(flagged=0), flagged.head(0), [], 10, 20, None, None))
    assert (summary.flags, summary.unflagged, tables) == (0, [], {})


@pytest.mark.slow
def test_with_responses_the_answers_are_audited(ws, graded, tmp_path):  # noqa: F811
    report = ReportJob(ws, tmp_path / "out", meta=hand_meta(), date=DATE, responses=graded).run()
    page = parse(report.html)
    text = section(page)
    assert "Every answer (18), each whole as submitted," in text and "2 of the 18 texts are flagged" in text
    flagged = read_tsv(report.folder / AUDIT_FLAGS)
    assert flagged[["query_id", "text_id", "kind", "runs"]].to_numpy().tolist() == [
        ["Q1", "rag-gamed", "injection", "rag-gamed"], ["Q2", "rag-thorough", "leakage", "rag-thorough"]]
    board = read_tsv(report.folder / AUDIT).set_index("run")
    assert board.loc["rag-gamed", ["cover", "cover_corrected"]].tolist() == pytest.approx([2 / 60, 0.0])


@pytest.mark.slow
def test_no_runs_no_section(tmp_path):
    from test_bank_review import BANK as QUESTIONS, OFFICIAL, RATED as RATINGS, RATING, make_workspace

    root = make_workspace(tmp_path / "ws", RATING, QUESTIONS, RATINGS, OFFICIAL)  # a corpus, no runs/
    report = ReportJob(root, tmp_path / "out", meta=hand_meta(), date=DATE).run()
    assert "audit" not in parse(report.html).sections and not {AUDIT, AUDIT_FLAGS} & set(report.tables)
