"""`exampp report`, what a reader takes from it first: the conclusion in words (the best evaluation,
its Kendall τ-b interval, the evaluations that interval does not tell apart from it), the one mark on
the best row, the excluded runs and the workspace's real name in the header, the comparison plot as
one panel per evaluation, and empty tables left out with a sentence. The meta-evaluations are built
by hand, their overlaps worked out from the intervals written here."""
from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from exampp.analysis.meta_evaluation import MetaEvaluation
from exampp.api.report import ReportJob
from exampp.report.content import KAPPA, META, TOO_BROAD, VS_BEST, Conclusion
from exampp.report.figures import NAMED_RUNS, comparison_figure
from exampp.report.html import conclusion_html
from exampp.report.tables import comparison_table, conclusion, marked_meta, official_order, scores_table
from test_bank_review import BANK as QUESTIONS, RATED, RATING, make_workspace
from test_report import DATE, OFFICIAL, OFFICIAL_NAME, hand_meta, parse

# evaluation, kendall, low, high; unsorted (the report sorts by τ). Against the best A [0.70, 0.90]:
# B [0.60, 0.85] and C [0.50, 0.70] (touches 0.70) overlap; D [0.20, 0.60] lies below, apart;
# E has no τ-b (a constant leaderboard), F no interval (IRT without refits): neither is compared.
NAN = float("nan")
INTERVALS = [("D", 0.40, 0.20, 0.60), ("B", 0.75, 0.60, 0.85), ("E", NAN, NAN, NAN), ("A", 0.80, 0.70, 0.90),
             ("F", 0.50, NAN, NAN), ("C", 0.60, 0.50, 0.70)]


def interval_table(rows=INTERVALS, best_top: str = "D") -> pd.DataFrame:
    """A meta-evaluation table of ``rows``; ``best_top``: the row meta_evaluate marks best at
    Kendall's τ-b on the top systems (not the first row)."""
    records = []
    for name, kendall, low, high in rows:
        row = {"evaluation": name, "family": "qrels", "n_systems": 4, "kendall": kendall, "kendall_low": low,
               "kendall_high": high, "kendall_top": 0.9 if name == best_top else 0.1,
               "kendall_top_low": -0.42, "kendall_top_high": 0.87}
        row["best"] = "kendall_top" if name == best_top else ("kendall" if name == "A" else "")
        records.append(row)
    return pd.DataFrame(records)


def test_each_row_is_marked_by_how_its_interval_stands_to_the_best():
    table = marked_meta(interval_table())
    assert table["evaluation"].tolist() == ["A", "B", "C", "F", "D", "E"]
    assert table[VS_BEST].tolist() == ["best", "overlaps", "overlaps", "", "apart", ""]
    assert conclusion(table, 0.95, 4) == Conclusion("A", 0.80, 0.70, 0.90, 0.95, 4, ["B", "C"], 1, 2)


def test_the_conclusion_in_words_names_the_rule():
    found = conclusion(marked_meta(interval_table()), 0.95, 4)
    assert conclusion_html(found) == (
        "The best evaluation is <b>A</b>: Kendall τ-b 0.800 [0.700, 0.900] with the official leaderboard over 4 "
        "systems. 2 others cannot be told apart from it (their 95% bootstrap intervals of τ-b overlap its "
        "interval): B; C. Below it, told apart by the same rule: 1. Not compared (no τ-b or no interval): 2.")
    # many alike: five named, the rest counted and found by their mark in the table
    many = replace(found, overlapping=[f"e{i}" for i in range(8)], apart=0, unknown=0)
    assert conclusion_html(many).endswith(
        "overlap its interval): e0; e1; e2; e3; e4 and 3 more (≈ in the meta-evaluation table).")
    alone = replace(found, overlapping=[], apart=5, unknown=0)
    assert conclusion_html(alone).endswith(
        "systems. No other's 95% bootstrap interval of τ-b overlaps its interval: 5 others are below it.")
    # without bootstrap no claim is made about the others
    flat = conclusion(marked_meta(interval_table([(n, k, NAN, NAN) for n, k, _, _ in INTERVALS])), 0.95, 4)
    assert flat.overlapping == [] and flat.apart == 0 and flat.unknown == 5
    assert conclusion_html(flat) == ("The best evaluation is <b>A</b>: Kendall τ-b 0.800 with the official "
                                     "leaderboard over 4 systems. Without bootstrap intervals no other evaluation "
                                     "is told apart from it.")
    # every leaderboard constant: no τ-b anywhere, no best
    constant = marked_meta(interval_table([("E", NAN, NAN, NAN), ("G", NAN, NAN, NAN)]))
    assert conclusion(constant, 0.95, 4) is None
    assert conclusion_html(None).startswith("No evaluation has a Kendall τ-b")


def interval_meta(bootstrap: int = 200) -> MetaEvaluation:
    """hand_meta's runs and per-query scores under the evaluations of :data:`INTERVALS`."""
    meta = hand_meta(bootstrap=bootstrap)
    names = [name for name, *_ in INTERVALS]
    scores = pd.DataFrame({name: meta.scores.iloc[:, i % 3] for i, name in enumerate(names)})
    return replace(meta, table=interval_table(), scores=scores, low=scores - 0.1, high=scores + 0.1,
                   per_query={name: meta.per_query[meta.scores.columns[i % 3]] for i, name in enumerate(names)})


@pytest.fixture
def workspace(tmp_path):
    return make_workspace(tmp_path / "ws", RATING, QUESTIONS, RATED, OFFICIAL)


@pytest.mark.slow
def test_the_page_opens_with_the_conclusion_and_marks_one_best_row(workspace, tmp_path):
    report = ReportJob(workspace, tmp_path / "out", meta=interval_meta(), date=DATE).run()
    html = report.html.read_text(encoding="utf-8")
    summary = html[html.index('<section id="summary">'):html.index("</section>")]
    assert '<p class="conclusion">The best evaluation is <b>A</b>: Kendall τ-b 0.800 [0.700, 0.900]' in summary
    meta = html[html.index(f'data-tsv="{META}"'):]
    meta = meta[:meta.index("</table>")]
    rows = re.findall(r"<tr( class=best)?><td class=\"n\">(\d)</td><td>([^<]*)(<span class=\"(\w+)\")?", meta)
    assert [(marked, name.strip(), mark) for marked, _, name, _, mark in rows] == [
        (" class=best", "A", "star"), ("", "B", "near"), ("", "C", "near"), ("", "F", ""), ("", "D", ""),
        ("", "E", "")]
    assert meta.count("★") == 1
    # the per-statistic best stays bold (D's τ-b on the top systems, interval [-0.42, 0.87]), as the legend says
    d_row = next(row for row in meta.split("<tr")[1:] if "<td>D</td>" in row)
    assert d_row.count('class="n top"') == 1 and "[-0.420, 0.870]" in d_row
    assert "★: the best evaluation (the first row)" in html and "Bold: the best value of each statistic" in html
    assert pd.read_csv(report.folder / META, sep="\t", keep_default_na=False)[VS_BEST].tolist() == [
        "best", "overlaps", "overlaps", "", "apart", ""]


@pytest.mark.slow
def test_the_header_names_the_excluded_runs_and_the_real_workspace(workspace, tmp_path, monkeypatch):
    monkeypatch.chdir(workspace)
    report = ReportJob(".", tmp_path / "out", meta=hand_meta(), exclude=["zeta", "alpha"], date=DATE).run()
    html = report.html.read_text(encoding="utf-8")
    assert "<dt>systems</dt><dd>4 (alpha, zeta left out)</dd>" in html
    assert f"<dt>workspace</dt><dd>{workspace.resolve()}</dd>" in html
    assert "<title>EXAM++ evaluation report: ws</title>" in html
    plain = ReportJob(".", tmp_path / "plain", meta=hand_meta(), date=DATE).run().html.read_text(encoding="utf-8")
    assert "<dt>systems</dt><dd>4</dd>" in plain


@pytest.mark.slow
def test_an_empty_table_is_left_out_with_the_reason(tmp_path):
    # every graded passage officially relevant: no question is answered by more non-relevant passages
    relevant = {query: {doc: 2 for (q, _), docs in RATED.items() if q == query for doc in docs} for query in "AB"}
    ws = make_workspace(tmp_path / "ws", RATING, QUESTIONS, RATED, relevant)
    report = ReportJob(ws, tmp_path / "out", meta=hand_meta(), rel_level=2, date=DATE).run()
    assert TOO_BROAD not in report.tables and not (report.folder / TOO_BROAD).exists()
    assert KAPPA in report.tables and all(len(table) for table in report.tables.values())
    page = parse(report.html)
    assert TOO_BROAD not in page.rows and all(page.rows.values())  # no table on the page without rows
    assert ("No question is answered by more officially non-relevant passages than relevant ones: "
            "no too-broad table.") in " ".join(page.text)


def comparison(runs: list[str], evaluations: list[str]) -> pd.DataFrame:
    """Scores with intervals: the official descending, each other evaluation a shuffle of it."""
    rng = np.random.default_rng(0)
    rows = [{"evaluation": OFFICIAL_NAME, "run": run, "score": 1 - i / len(runs), "low": np.nan, "high": np.nan}
            for i, run in enumerate(runs)]
    for evaluation in evaluations:
        values = rng.permutation(len(runs)) / len(runs)
        rows += [{"evaluation": evaluation, "run": run, "score": v, "low": v - 0.1, "high": v + 0.1}
                 for run, v in zip(runs, values)]
    return comparison_table(pd.DataFrame(rows), runs, [OFFICIAL_NAME, *evaluations])


@pytest.mark.slow
@pytest.mark.parametrize("n_runs", [4, 6, 36])
def test_the_comparison_plot_has_one_panel_per_evaluation(n_runs):
    runs = [f"run-{i:02d}" for i in range(n_runs)]
    evaluations = ["nDCG@20, sum label", "EXAM-Cover@20, tau 4", "AP, max label >= 5"]
    data = comparison(runs, evaluations)
    fig = comparison_figure(data, OFFICIAL_NAME)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == evaluations and len(fig.axes) == 4  # 2 x 2, the fourth hidden
    official = data[data["evaluation"] == OFFICIAL_NAME]["normalised"].tolist()
    for ax, evaluation in zip(panels, evaluations):
        reference, points = ax.get_lines()
        assert reference.get_ydata().tolist() == pytest.approx(official)  # the official line in every panel
        assert points.get_xdata().tolist() == list(range(1, n_runs + 1))
        assert points.get_ydata().tolist() == pytest.approx(
            data[data["evaluation"] == evaluation]["normalised"].tolist())
        (bars,) = ax.collections
        assert len(bars.get_segments()) == n_runs
    fig.canvas.draw()
    bottom = panels[-1]  # the lowest of its column: its axis is labelled
    labels = [label.get_text() for label in bottom.get_xticklabels() if label.get_visible() and label.get_text()]
    if n_runs <= NAMED_RUNS:
        assert labels == runs
    else:  # numbered by official rank: 36 names would not be read
        assert all(label.isdigit() for label in labels) and len(labels) < 12
        assert "official rank" in fig.get_supxlabel()
    assert all(fig.bbox.contains(*ax.title.get_window_extent().corners()[k]) for ax in panels for k in (0, 3))


def test_only_the_official_leaderboard_gives_one_panel():
    meta = hand_meta()
    data = comparison_table(scores_table(meta), official_order(meta.official), [OFFICIAL_NAME])
    fig = comparison_figure(data, OFFICIAL_NAME)
    assert len(fig.axes) == 1 and [line.get_ydata().tolist() for line in fig.axes[0].get_lines()] == [
        pytest.approx([1.0, 2 / 3, 1 / 3, 0.0])]
