"""`exampp report`: the page's sections, its TSV tables against the values they came from, the
comparison plot's normalisation worked out independently, escaping, determinism, errors, and the
command line. The meta-evaluation is built by hand (a few runs, queries and evaluations)."""
from __future__ import annotations

import base64
import io
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from exampp.analysis.meta_evaluation import MetaEvaluation
from exampp.api.report import ReportJob
from exampp.cli import main
from exampp.errors import ExamppError
from exampp.report.content import (
    ALPHA,
    BANK,
    COMPARISON,
    GRADED,
    GRADES,
    KAPPA,
    KAPPA_QUESTIONS,
    LEADERBOARD,
    META,
    PER_QUERY,
    SCORES,
    TOO_BROAD,
)
from exampp.report.tables import comparison_table, official_order, scores_table
from exampp.stores.layout import Workspace
from test_bank_review import BANK as QUESTIONS, OFFICIAL, RATED, RATING, make_workspace

ODD = "<b>&x"  # a run name that must be escaped
RUNS = ["r1", "r2", ODD, "r4"]
QUERIES = ["A", "B"]
OFFICIAL_NAME = "nDCG@10"
DATE = "2024-05-01"

# Per-query scores (run x query) of the official measure and of three evaluations; IRT has none.
OFFICIAL_PQ = pd.DataFrame([[0.9, 0.7], [0.6, 0.5], [0.2, 0.4], [0.1, 0.0]], index=RUNS, columns=QUERIES)
PER_QUERY_SCORES = {
    "nDCG@20, label sum": pd.DataFrame([[0.8, 0.8], [0.7, 0.3], [0.1, 0.5], [0.2, 0.1]], index=RUNS, columns=QUERIES),
    "EXAM-Cover@20, tau 4": pd.DataFrame([[0.5, 1.0], [0.5, 0.5], [0.0, 0.5], [0.5, 0.0]], index=RUNS,
                                         columns=QUERIES),
    "P@20, label max": pd.DataFrame([[0.3, 0.2], [0.3, 0.2], [0.3, 0.2], [0.3, 0.2]], index=RUNS, columns=QUERIES),
}
IRT = "IRT ability"
STATS = ("spearman", "kendall", "tau_ap", "kendall_top")
# evaluation, family, kendall (the table's order below is NOT sorted: the report sorts it)
ROWS = [("P@20, label max", "qrels", float("nan")), ("EXAM-Cover@20, tau 4", "cover", 0.33),
        ("nDCG@20, label sum", "qrels", 0.67), (IRT, "irt", 1.0)]


def hand_meta(bootstrap: int = 0) -> MetaEvaluation:
    scores = pd.DataFrame({name: table.mean(axis=1) for name, table in PER_QUERY_SCORES.items()})
    scores[IRT] = [2.0, 1.0, -0.5, -1.0]
    low, high = scores - 0.1, scores + 0.1
    low[IRT], high[IRT] = np.nan, np.nan
    records = []
    for name, family, kendall in ROWS:
        row = {"evaluation": name, "family": family, "label": "max", "tau": 4.0, "measure": name.split(",")[0],
               "n_systems": 4}
        for i, s in enumerate(STATS):
            value = kendall if s == "kendall" else kendall - 0.01 * i
            row.update({s: value, f"{s}_low": value - 0.2, f"{s}_high": value + 0.1})
        records.append(row)
    table = pd.DataFrame(records)
    # as meta_evaluate marks them: the statistics each row is best at
    table["best"] = ["", "", "", ", ".join(STATS)]
    official = OFFICIAL_PQ.mean(axis=1).rename(OFFICIAL_NAME)
    return MetaEvaluation(table, scores, low, high, dict(PER_QUERY_SCORES), official, OFFICIAL_PQ,
                          bootstrap=bootstrap, seed=0, top=10, confidence=0.95)


@pytest.fixture
def workspace(tmp_path) -> Path:
    return make_workspace(tmp_path / "ws", RATING, QUESTIONS, RATED, OFFICIAL)


@pytest.fixture
def report(workspace, tmp_path):
    return ReportJob(workspace, tmp_path / "out", meta=hand_meta(), rel_level=2, date=DATE).run()


def read_tsv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", keep_default_na=True)


class Tables(HTMLParser):
    """Body rows per table (by its data-tsv), img sources, section ids, and the page's text."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, int] = {}
        self.images: list[str] = []
        self.sections: list[str] = []
        self.text: list[str] = []
        self._table: str | None = None
        self._body = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self._table = attrs.get("data-tsv")
            self.rows[self._table] = 0
        elif tag == "tbody":
            self._body = True
        elif tag == "tr" and self._body:
            self.rows[self._table] += 1
        elif tag == "img":
            self.images.append(attrs["src"])
        elif tag == "section":
            self.sections.append(attrs["id"])

    def handle_endtag(self, tag):
        if tag == "tbody":
            self._body = False

    def handle_data(self, data):
        self.text.append(data)


def parse(path: Path) -> Tables:
    parser = Tables()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


@pytest.mark.slow
def test_every_section_is_there_and_every_table_has_its_tsvs_rows(report):
    page = parse(report.html)
    assert page.sections == ["summary", "leaderboards", "comparison", "meta", "agreement", "per-query", "grades",
                             "bank"]
    # every table on the page shows a TSV beside it, row for row
    assert set(page.rows) == {LEADERBOARD, META, KAPPA, KAPPA_QUESTIONS, GRADED, GRADES, BANK, TOO_BROAD}
    for name, rows in page.rows.items():
        assert rows == len(read_tsv(report.folder / name)), name
    assert len(page.rows) and page.rows[LEADERBOARD] == 4 and page.rows[META] == 4
    # three figures, embedded, and the same PNG bytes beside the page
    assert len(page.images) == 3
    for src, name in zip(page.images, ["comparison.png", "per-query.png", "grades.png"]):
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]) == (report.folder / "figures" / name).read_bytes()
    text = " ".join(page.text)
    for expected in ["grading method", RATING, OFFICIAL_NAME, "2024-05-01", "bootstrap", "exampp"]:
        assert expected in text


@pytest.mark.slow
def test_tsvs_round_trip_to_the_tables_they_came_from(report):
    assert set(report.tables) == {LEADERBOARD, SCORES, COMPARISON, META, KAPPA, KAPPA_QUESTIONS, ALPHA, GRADED,
                                  PER_QUERY, GRADES, BANK,
                                  TOO_BROAD}
    for name, table in report.tables.items():
        read = read_tsv(report.folder / name)
        expected = table.reset_index(drop=True).replace("", np.nan)  # in TSV an empty text is a missing value
        assert list(read.columns) == [str(c) for c in expected.columns], name
        pd.testing.assert_frame_equal(read, expected, check_dtype=False, check_column_type=False, obj=name)


@pytest.mark.slow
def test_tables_hold_the_values_worked_out_by_hand(report):
    tables = report.tables
    # meta table sorted best first by Kendall (NaN last)
    assert tables[META]["evaluation"].tolist() == [IRT, "nDCG@20, label sum", "EXAM-Cover@20, tau 4",
                                                   "P@20, label max"]
    # leaderboard: official order r1 (.8), r2 (.55), <b>&x (.3), r4 (.05); the three best + EXAM-Cover
    board = tables[LEADERBOARD]
    assert board["run"].tolist() == ["r1", "r2", ODD, "r4"]
    assert board[OFFICIAL_NAME].tolist() == pytest.approx([0.8, 0.55, 0.3, 0.05])
    assert board["nDCG@20, label sum"].tolist() == pytest.approx([0.8, 0.5, 0.3, 0.15])
    assert board["nDCG@20, label sum low"].tolist() == pytest.approx([0.7, 0.4, 0.2, 0.05])
    assert [c for c in board.columns if "low" not in c and "high" not in c] == [
        "rank", "run", OFFICIAL_NAME, IRT, "nDCG@20, label sum", "EXAM-Cover@20, tau 4"]
    # per-query points: 4 runs x 2 queries for each chosen evaluation with per-query scores (not IRT)
    points = tables[PER_QUERY]
    assert points.groupby("evaluation").size().to_dict() == {"nDCG@20, label sum": 8, "EXAM-Cover@20, tau 4": 8}
    row = points[(points["evaluation"] == "EXAM-Cover@20, tau 4") & (points["run"] == ODD)
                 & (points["query_id"] == "B")]
    assert row[["official", "exam"]].to_numpy().tolist() == [[0.4, 0.5]]
    # grades of RATED: levels 0..5 over the exam's questions (the removed question "old" is not in the exam,
    # but its grade is stored: the histogram counts the stored grades, the labels only the exam's)
    grades = tables[GRADES].set_index("grade")
    assert grades["grades"].to_dict() == {0: 7, 1: 2, 2: 1, 3: 2, 4: 5, 5: 4}
    # labels: A: p1 5, p2 5, p3 4, p4 4, p5 3; B: r1 4, r2 5, r3 4, r4 1, r5 0
    assert grades["labels"].to_dict() == {0: 1, 1: 1, 2: 0, 3: 1, 4: 4, 5: 3}
    # agreement at rel_level 2, tau 4: judged pairs A p1 (5,2) p2 (5,0) p3 (4,1) p5 (3,3); B r1 (4,2) r2 (5,0)
    # r3 (4,0) r4 (1,2) r5 (0,1): tp = p1, r1; fp = p2, p3, r2, r3; fn = p5, r4; tn = r5
    kappa = tables[KAPPA].set_index("tau")
    assert kappa.loc[4, ["tp", "fp", "fn", "tn"]].tolist() == [2, 4, 2, 1]
    assert tables[GRADED].columns.tolist() == ["EXAM label", "official 0", "official 1", "official 2", "official 3"]
    # questions answered at grade >= 4 (the exam: a1-a3, b1-b2; "old" is out): A p1 1, p2 2, p3 1, p5 0;
    # B r1-r3 1, r4-r5 0. At least 1 is the max label >= 4 (same counts as above); at least 2: only p2,
    # official-non-relevant: tp 0, fp p2, fn p1 p5 r1 r4, tn p3 r2 r3 r5
    answered = tables[KAPPA_QUESTIONS].set_index("questions")
    assert answered.loc[1, ["tp", "fp", "fn", "tn"]].tolist() == [2, 4, 2, 1]
    assert answered.loc[2, ["tp", "fp", "fn", "tn"]].tolist() == [0, 1, 4, 4] and set(answered["tau"]) == {4}
    # Krippendorff's alpha (ordinal) of the 9 graded pairs, by the independent package
    krippendorff = pytest.importorskip("krippendorff")
    pairs = [(5, 2), (5, 0), (4, 1), (3, 3), (4, 2), (5, 0), (4, 0), (1, 2), (0, 1)]
    expected = krippendorff.alpha(reliability_data=np.array(pairs, dtype=float).T, level_of_measurement="ordinal")
    assert tables[ALPHA]["alpha_ordinal"].iloc[0] == pytest.approx(expected)
    # bank summary from the bank review (5 questions, 2 queries)
    assert dict(zip(tables[BANK]["item"], tables[BANK]["count"]))["questions"] == 5


def normalised_by_hand(values: list[float]) -> list[float]:
    lo, hi = min(values), max(values)
    return [(v - lo) / (hi - lo) for v in values]


def test_comparison_data_is_the_min_max_normalisation():
    meta = hand_meta()
    order = official_order(meta.official)
    data = comparison_table(scores_table(meta), order, [OFFICIAL_NAME, "nDCG@20, label sum", "P@20, label max"])
    ndcg = data[data["evaluation"] == "nDCG@20, label sum"]
    # scores in official order: .8, .5, .3, .15; min .15, span .65; interval ends +-.1 by the same map
    assert ndcg["position"].tolist() == [1, 2, 3, 4]
    assert ndcg["normalised"].tolist() == pytest.approx(normalised_by_hand([0.8, 0.5, 0.3, 0.15]))
    assert ndcg["normalised_low"].tolist() == pytest.approx([(v - 0.1 - 0.15) / 0.65 for v in [0.8, 0.5, 0.3, 0.15]])
    assert ndcg["normalised_high"].tolist() == pytest.approx([(v + 0.1 - 0.15) / 0.65 for v in [0.8, 0.5, 0.3, 0.15]])
    official = data[data["evaluation"] == OFFICIAL_NAME]
    assert official["normalised"].tolist() == pytest.approx(normalised_by_hand([0.8, 0.55, 0.3, 0.05]))
    assert official["normalised_low"].isna().all()  # no bootstrap here: no interval
    # every system scored alike: the middle of the axis, not a division by zero
    assert data[data["evaluation"] == "P@20, label max"]["normalised"].tolist() == [0.5] * 4


@pytest.mark.slow
def test_the_written_comparison_tsv_is_that_normalisation(report):
    data = read_tsv(report.folder / COMPARISON)
    cover = data[data["evaluation"] == "EXAM-Cover@20, tau 4"]
    # EXAM-Cover means in official order: .75, .5, .25, .25
    assert cover["normalised"].tolist() == pytest.approx(normalised_by_hand([0.75, 0.5, 0.25, 0.25]))


@pytest.mark.slow
def test_the_best_row_is_marked(report):
    html = report.html.read_text(encoding="utf-8")
    html = html[html.index(f'data-tsv="{META}"'):]
    html = html[:html.index("</table>")]
    rows = re.findall(r"<tr( class=best)?><td class=\"n\">(\d)</td><td>([^<]*)", html)
    assert [(marked, name) for marked, _, name in rows] == [
        (" class=best", f"{IRT} "), ("", "nDCG@20, label sum"), ("", "EXAM-Cover@20, tau 4"), ("", "P@20, label max")]
    best_row = html[html.index("<tr class=best>"):].split("</tr>")[0]
    assert best_row.count('class="n top"') == 4  # the four statistics in bold


@pytest.mark.slow
def test_text_from_the_data_is_escaped(report):
    html = report.html.read_text(encoding="utf-8")
    assert ODD not in html
    assert "&lt;b&gt;&amp;x" in html
    # the bank's question with a script tag in it (too-broad table) is escaped too
    assert "<script>" not in html


@pytest.mark.slow
def test_same_inputs_give_the_same_bytes(workspace, tmp_path):
    first = ReportJob(workspace, tmp_path / "one", meta=hand_meta(), date=DATE).run()
    second = ReportJob(workspace, tmp_path / "two", meta=hand_meta(), date=DATE).run()
    files = sorted(p.relative_to(first.folder) for p in first.folder.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second.folder) for p in second.folder.rglob("*") if p.is_file())
    assert len(files) == 16  # 12 tables, 3 figures, the page
    for name in files:
        assert (first.folder / name).read_bytes() == (second.folder / name).read_bytes(), name


@pytest.mark.slow
def test_the_date_comes_from_source_date_epoch(workspace, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # 2023-11-14T22:13:20Z
    report = ReportJob(workspace, tmp_path / "out", meta=hand_meta()).run()
    assert "<dd>2023-11-14</dd>" in report.html.read_text(encoding="utf-8")


@pytest.mark.slow
def test_an_unwritable_output_is_one_line_error_and_leaves_no_page(workspace, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ExamppError) as info:
        ReportJob(workspace, blocker / "out", meta=hand_meta(), date=DATE).run()
    message = str(info.value)
    assert "\n" not in message and str(blocker) in message


@pytest.mark.slow
def test_a_failed_write_leaves_the_last_report_whole(workspace, tmp_path, monkeypatch):
    out = tmp_path / "out"
    ReportJob(workspace, out, meta=hand_meta(), date=DATE).run()
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    import exampp.report.html as page

    def broken(*args, **kwargs):
        raise RuntimeError("renderer failed")

    monkeypatch.setattr(page, "report_html", broken)
    with pytest.raises(RuntimeError):
        ReportJob(workspace, out, meta=hand_meta(), date="2030-01-01").run()
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before  # no temporary files either


@pytest.mark.slow
def test_without_judgments_or_bank_the_sections_say_so(tmp_path):
    ws = make_workspace(tmp_path / "ws", RATING, QUESTIONS, RATED)  # no official qrels
    Workspace.at(ws).question_bank.unlink()
    meta = hand_meta()
    meta = MetaEvaluation(meta.table, meta.scores, meta.low, meta.high, meta.per_query, meta.official, None,
                          bootstrap=0, seed=0, top=10, confidence=0.95)
    report = ReportJob(ws, tmp_path / "out", meta=meta, date=DATE).run()
    page = parse(report.html)
    text = " ".join(page.text)
    assert "No official judgments" in text and "No question bank" in text and "no scatter plots" in text
    assert set(page.rows) == {LEADERBOARD, META, GRADES}
    assert len(page.images) == 2


@pytest.mark.slow
def test_official_intervals_use_the_meta_evaluations_bootstrap(workspace, tmp_path):
    statistics = pytest.importorskip("exampp.analysis.statistics")
    report = ReportJob(workspace, tmp_path / "out", meta=hand_meta(bootstrap=200), date=DATE).run()
    expected = statistics.bootstrap_means(OFFICIAL_PQ, n=200, seed=0, confidence=0.95)
    board = report.tables[LEADERBOARD].set_index("run")
    assert board[f"{OFFICIAL_NAME} low"].tolist() == pytest.approx(expected["low"].reindex(board.index).tolist())
    assert board[f"{OFFICIAL_NAME} high"].tolist() == pytest.approx(expected["high"].reindex(board.index).tolist())


def test_the_command_needs_an_output_folder_and_reports_errors_in_one_line(tmp_path):
    result = CliRunner().invoke(main, ["report", "-w", str(tmp_path / "missing"), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1
    assert "no grade store" in result.output
    result = CliRunner().invoke(main, ["report", "-w", str(tmp_path)])
    assert result.exit_code == 2 and "--output" in result.output


@pytest.mark.slow
def test_png_figures_carry_no_metadata(report):
    png = (report.folder / "figures" / "comparison.png").read_bytes()
    chunks, at = [], 8
    while at < len(png):
        length = int.from_bytes(png[at:at + 4], "big")
        chunks.append(png[at + 4:at + 8].decode("ascii"))
        at += 12 + length
    assert not {"tEXt", "iTXt", "zTXt", "tIME"} & set(chunks)
    assert re.search(rb"Software|matplotlib", png) is None
    assert io.BytesIO(png).read(8) == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_dollars_and_backslashes_in_names_are_drawn_as_text(workspace, tmp_path):
    # matplotlib reads $...$ as mathtext, where "\x" is an unknown symbol that fails the figure
    from dataclasses import replace

    meta, odd = hand_meta(), {"r1": "w$\\x$"}
    renamed = replace(meta, scores=meta.scores.rename(index=odd), low=meta.low.rename(index=odd),
                      high=meta.high.rename(index=odd), official=meta.official.rename(index=odd),
                      per_query={k: v.rename(index=odd) for k, v in meta.per_query.items()},
                      official_per_query=meta.official_per_query.rename(index=odd))
    report = ReportJob(workspace, tmp_path / "out", meta=renamed, date=DATE).run()
    assert "w$\\x$" in report.html.read_text(encoding="utf-8")
    assert set(report.figures) == {"comparison.png", "per-query.png", "grades.png"}
