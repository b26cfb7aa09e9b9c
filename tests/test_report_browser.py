"""The report in a real browser (headless Chromium through chromedriver): every figure loads, every
table has its TSV's rows, nothing is wider than a 1280 px laptop screen, and printed it takes a sane
number of A4 pages. A full-page screenshot and the PDF are left in the test's tmp folder (printed).

Skips when Chromium or chromedriver is missing, unless EXAMPP_REQUIRE_BROWSER=1 (CI), where that fails
(tests/chromium.py)."""
from __future__ import annotations

import base64
import re

import numpy as np
import pandas as pd
import pytest

from chromium import WIDTH
from exampp.analysis.meta_evaluation import MetaEvaluation
from exampp.api.report import ReportJob
from test_report import DATE, hand_meta


def large_meta(runs: int = 22, queries: int = 43, evaluations: int = 36) -> MetaEvaluation:
    """A DL19-sized meta-evaluation of made-up numbers (seeded): long run and evaluation names."""
    rng = np.random.default_rng(7)
    names = [f"{stem}_{i}" for i, stem in zip(range(runs), ["bm25tuned_prf_p", "p_exp_rm3_bert", "ICT-BERT2",
                                                             "idst_bert_pr1", "TUA1-1", "srchvrs_ps_run2"] * runs)]
    quality = np.linspace(0.8, 0.2, runs)
    qids = [str(1000 + q) for q in range(queries)]
    official_pq = pd.DataFrame(np.clip(quality[:, None] + rng.normal(0, 0.2, (runs, queries)), 0, 1),
                               index=names, columns=qids)
    per_query, rows = {}, []
    for e in range(evaluations):
        family = ["qrels", "cover", "n-exam", "intent", "irt"][e % 5]
        k = (5, 10, 20, 50, 100, 1000, 30, 15)[e // 5]  # e // 5 + e % 5 tells every evaluation apart
        name = {"qrels": f"nDCG@{k}, label {['max', 'count', 'sum', 'expected'][e // 5 % 4]}",
                "cover": f"EXAM-Cover@{k}, tau 4", "n-exam": f"n-EXAM@{k}, tau 4",
                "intent": f"alpha_nDCG@{k} per question, tau 4", "irt": f"IRT ability, {k} questions"}[family]
        noise = rng.uniform(0.05, 0.5)
        table = pd.DataFrame(np.clip(official_pq.to_numpy() + rng.normal(0, noise, (runs, queries)), 0, 1),
                             index=names, columns=qids)
        if family != "irt":
            per_query[name] = table
        kendall = float(np.clip(1 - noise * 1.6, -1, 1))
        row = {"evaluation": name, "family": family, "label": "max", "tau": 4.0, "measure": name.split(",")[0],
               "n_systems": runs}
        for i, s in enumerate(("spearman", "kendall", "tau_ap", "kendall_top")):
            value = kendall + 0.02 * (i == 0) - 0.03 * i
            row.update({s: value, f"{s}_low": value - 0.15, f"{s}_high": min(value + 0.08, 1)})
        rows.append(row)
    table = pd.DataFrame(rows).sort_values("kendall", ascending=False, kind="stable").reset_index(drop=True)
    table["best"] = table.index == 0
    scores = pd.DataFrame({name: t.mean(axis=1) for name, t in per_query.items()})
    for name in table["evaluation"]:
        if name not in scores:
            scores[name] = quality * 4 - 2 + rng.normal(0, 0.3, runs)
    scores = scores[list(table["evaluation"])]
    official = official_pq.mean(axis=1).rename("nDCG@10")
    return MetaEvaluation(table, scores, scores - 0.06, scores + 0.06, per_query, official, official_pq,
                          bootstrap=0, seed=0, top=10, confidence=0.95)


def pdf_pages(pdf: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page[^s]", pdf))


@pytest.mark.slow
@pytest.mark.parametrize("size", ["small", "dl19-sized"])
def test_the_report_renders_whole_in_chromium(browser, size, tmp_path, request):
    from test_bank_review import BANK, OFFICIAL, RATED, RATING, make_workspace

    workspace = make_workspace(tmp_path / "ws", RATING, BANK, RATED, OFFICIAL)
    meta = hand_meta() if size == "small" else large_meta()
    report = ReportJob(workspace, tmp_path / "report", meta=meta, rel_level=2, date=DATE).run()
    browser.get(report.html.resolve().as_uri())
    assert browser.execute_script("return document.readyState") == "complete"

    images = browser.execute_script(
        "return [...document.images].map(i => [i.alt, i.complete, i.naturalWidth, i.getBoundingClientRect().width])")
    assert [alt for alt, *_ in images] == ["comparison.png", "per-query.png", "grades.png"]
    for alt, complete, natural, shown in images:
        assert complete and natural > 0, f"{alt} did not load"
        assert shown <= WIDTH, f"{alt} is {shown} px wide"

    tables = browser.execute_script(
        "return [...document.querySelectorAll('table')].map(t => [t.dataset.tsv, t.tBodies[0].rows.length])")
    assert len(tables) == 8  # leaderboard, meta, kappa, kappa by questions, graded, grades, bank, too broad
    for name, rows in tables:
        assert rows == len(pd.read_csv(report.folder / name, sep="\t")), name

    width = browser.execute_script("return document.documentElement.scrollWidth")
    assert width <= WIDTH, f"the page is {width} px wide at a {WIDTH} px window"

    height = browser.execute_script("return document.documentElement.scrollHeight")
    shot = browser.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": WIDTH, "height": height, "scale": 1}})
    screenshot = tmp_path / f"report-{size}.png"
    screenshot.write_bytes(base64.b64decode(shot["data"]))

    pdf = base64.b64decode(browser.execute_cdp_cmd("Page.printToPDF", {
        "paperWidth": 8.27, "paperHeight": 11.69, "preferCSSPageSize": True, "printBackground": True})["data"])
    (tmp_path / f"report-{size}.pdf").write_bytes(pdf)
    pages = pdf_pages(pdf)
    # Printed: the A4 text column (210 mm less 2 x 12 mm margins, 96 px an inch) holds every table whole.
    column = round((210 - 24) / 25.4 * 96)
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": column, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
    printed = browser.execute_script("return document.documentElement.scrollWidth")
    assert printed <= column, f"printed, the page is {printed} px wide in a {column} px column"
    shot = browser.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
    (tmp_path / f"report-{size}-print.png").write_bytes(base64.b64decode(shot["data"]))
    print(f"\nscreenshot: {screenshot} ({WIDTH}x{height}); PDF: {tmp_path / f'report-{size}.pdf'} ({pages} pages)")
    # the sections (each from a new page), none of them sprawling
    assert 6 <= pages <= (10 if size == "small" else 16)
