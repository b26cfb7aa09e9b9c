"""The evaluation report as one self-contained HTML page: inline CSS, no scripts, figures as PNG data
URIs, every text from the data HTML-escaped. Readable at laptop width; printed, each section starts
a page, tables keep their rows whole and figures fit the page width.

Every ``<table>`` names the TSV it shows in ``data-tsv`` (same rows, full precision there)."""
from __future__ import annotations

import base64
import math
from collections.abc import Collection, Iterable, Sequence
from html import escape
from pathlib import PurePath
from typing import Any, cast

import numpy as np
import pandas as pd

from exampp.report.content import (
    ALPHA,
    AUDIT,
    AUDIT_FLAGS,
    BANK,
    COMPARISON,
    GRADED,
    GRADES,
    HUMAN_CALIBRATION,
    HUMAN_CHECK,
    HUMAN_ORDERINGS,
    KAPPA,
    KAPPA_QUESTIONS,
    LEADERBOARD,
    META,
    NUGGET_AGREEMENT,
    NUGGETS,
    PER_QUERY,
    SCORES,
    SUPPORT,
    TOO_BROAD,
    VS_BEST,
    Conclusion,
    ReportContent,
)
from exampp.report.figures import CUT

STATISTICS = {"spearman": "Spearman ρ", "kendall": "Kendall τ-b", "tau_ap": "τ<sub>AP</sub>",
              "kendall_top": "Kendall τ-b, top systems"}
"""Display names of the meta-evaluation's correlation columns (others show their column name)."""

_CSS = """
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d1d1f;
       max-width: 74rem; margin: 1.5rem auto; padding: 0 1.2rem; }
h1 { font-size: 1.7rem; margin-bottom: .3rem; }
h2 { margin-top: 2.4rem; padding-bottom: .15rem; border-bottom: 2px solid #ddd; }
h3 { font-size: 1.05rem; margin: 1.4rem 0 .3rem; }
p.note, .muted { color: #555; } code { font: 13px ui-monospace, SFMono-Regular, Menlo, monospace; }
nav { margin: .8rem 0 0; } nav a { margin-right: .9rem; white-space: nowrap; }
dl.summary { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1.2rem; margin: .6rem 0; }
dl.summary dt { color: #555; } dl.summary dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: 14px; max-width: 100%; }
table.wide { width: 100%; }
th, td { border: 1px solid #d6d6d6; padding: .25rem .5rem; vertical-align: top; text-align: left;
         overflow-wrap: anywhere; }
th { background: #f2f2f2; font-weight: 600; } tbody tr:nth-child(even) { background: #fafafa; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
td.n, td.k, span.k { white-space: nowrap; overflow-wrap: normal; }
.ci { display: block; color: #666; font-size: 12px; }
tr.best td { background: #eef6ec; } td.top { font-weight: 700; }
.star { color: #b8860b; } .near { color: #555; }
p.conclusion { font-size: 1.05rem; margin: .8rem 0; padding: .5rem .8rem; background: #f4f8f3;
               border-left: 4px solid #7aa36f; }
figure { margin: .8rem 0 1.2rem; } figure img { display: block; max-width: 100%; height: auto; }
figcaption { color: #555; font-size: 14px; margin-top: .3rem; }
@media print {
  @page { size: A4; margin: 14mm 12mm; }
  body { max-width: none; margin: 0; padding: 0; font-size: 10pt; }
  nav { display: none; }
  section + section:not(#leaderboards) { break-before: page; }
  h2, h3 { break-after: avoid; margin-top: 0; }
  table { font-size: 8.5pt; } table.wide { width: 100%; } thead { display: table-header-group; }
  tr, figure, img, dl.summary { break-inside: avoid; }
  th, td { padding: .12rem .3rem; }
  .ci { font-size: 7.5pt; }
  figure img { width: 100%; }
}
"""


def report_html(content: ReportContent, figures: dict[str, bytes]) -> str:
    """The whole page; ``figures``: file name -> PNG bytes, embedded."""
    title = f"EXAM++ evaluation report: {PurePath(content.header.get('workspace', '')).name}"
    sections = [_leaderboards(content), _comparison(content, figures), _meta(content), _agreement(content),
                _per_query(content, figures), _grades(content, figures), _bank(content)]
    links = [("leaderboards", "Leaderboards"), ("comparison", "Comparison"), ("meta", "Meta-evaluation"),
             ("agreement", "Agreement"), ("per-query", "Per query"), ("grades", "Grades"), ("bank", "Bank")]
    if any(name in content.tables for name in RAG_TABLES):  # only a report given RAG inputs has the section
        sections.insert(1, _rag(content))
        links.insert(1, ("rag", "RAG answers"))
    if content.human is not None:
        sections.insert(1, _human(content))
        links.insert(1, ("human", "Human check"))
    if content.audit is not None:
        sections.append(_audit(content))
        links.append(("audit", "Judge integrity"))
    summary = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in content.header.items())
    nav = "".join(f'<a href="#{anchor}">{name}</a>' for anchor, name in links)
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>", f"<style>{_CSS}</style>", "</head>", "<body>",
        '<section id="summary">', "<h1>EXAM++ evaluation report</h1>",
        f'<dl class="summary">{summary}</dl>', _conclusion(content), f"<nav>{nav}</nav>", "</section>",
        *sections, "</body>", "</html>", ""])


# -- sections --------------------------------------------------------------------------------

NAMED = 5  # evaluations not told apart from the best named in the conclusion; the table marks them all


def conclusion_html(conclusion: Conclusion | None) -> str:
    """The conclusion in words (HTML): the best evaluation with its Kendall τ-b and interval, and the
    evaluations not told apart from it, by the rule it states."""
    if conclusion is None:
        return "No evaluation has a Kendall τ-b with the official leaderboard (every one is constant): no conclusion."
    c = conclusion
    interval = "" if _missing(c.low) else f" [{c.low:.3f}, {c.high:.3f}]"
    lead = (f"The best evaluation is <b>{_text(c.best)}</b>: Kendall τ-b {c.kendall:.3f}{interval} with the "
            f"official leaderboard over {c.systems} systems.")
    if _missing(c.low):
        return lead + " Without bootstrap intervals no other evaluation is told apart from it."
    named = "; ".join(_text(name) for name in c.overlapping[:NAMED])  # names hold commas
    more = len(c.overlapping) - NAMED
    rule = f"{c.confidence:.0%} bootstrap interval"
    if c.overlapping:
        others = (f"{len(c.overlapping)} {_plural(len(c.overlapping), 'other')} cannot be told apart from it (their "
                  f"{rule}s of τ-b overlap its interval): {named}"
                  + (f" and {more} more (≈ in the meta-evaluation table)" if more > 0 else "") + ".")
        apart = f" Below it, told apart by the same rule: {c.apart}." if c.apart else ""
    else:
        others = ""
        apart = (f" No other's {rule} of τ-b overlaps its interval: {c.apart} {_plural(c.apart, 'other')} "
                 f"{'is' if c.apart == 1 else 'are'} below it." if c.apart else "")
    unknown = f" Not compared (no τ-b or no interval): {c.unknown}." if c.unknown else ""
    return f"{lead}{' ' + others if others else ''}{apart}{unknown}"


def _plural(n: int, word: str) -> str:
    return word if n == 1 else word + "s"


def _conclusion(content: ReportContent) -> str:
    return f'<p class="conclusion">{conclusion_html(content.conclusion)}</p>\n'



def _leaderboards(content: ReportContent) -> str:
    table = content.tables[LEADERBOARD]
    evaluations = [content.official, *content.chosen]
    head = ["#", "run", *(f"{e} (official)" if e == content.official else e for e in evaluations)]
    rows = [[_number(r["rank"]), f'<span class="k">{_text(r["run"])}</span>',
             *(_score(r[e], r[f"{e} low"], r[f"{e} high"]) for e in evaluations)]
            for _, r in table.iterrows()]
    n_evaluations = content.tables[SCORES]["evaluation"].nunique() - 1
    intro = _note("Systems best first on the official leaderboard, with the best evaluations of the meta-evaluation "
                  "and EXAM-Cover; under each score its bootstrap interval over queries. "
                  f"All {n_evaluations} evaluations: {_link(SCORES)}.")
    return _section("leaderboards", "Leaderboards",
                    intro + _table(head, rows, LEADERBOARD, numeric=set(range(2, len(head))) | {0}, wide=True))


def _comparison(content: ReportContent, figures: dict[str, bytes]) -> str:
    return _section("comparison", "Comparison of leaderboards", _figure(
        figures, "comparison.png", "Each evaluation's scores min-max normalised onto [0, 1] (best system 1, worst 0); "
        f"its interval mapped by the same affine map (cut at {-CUT} and {1 + CUT}). "
        f"Systems in the official ({_text(content.official)}) order: "
        f"a line that falls from left to right agrees with it. Data: {_link(COMPARISON)}."))


def _meta(content: ReportContent) -> str:
    table = content.tables[META]
    statistics = [s for s in STATISTICS if s in table] + [
        c for c in table.columns if f"{c}_low" in table and c not in STATISTICS]
    tops = {s: table[s].max() for s in statistics}
    marks = table[VS_BEST] if VS_BEST in table else pd.Series("", index=table.index)
    # (header HTML, numeric); the statistics' names hold markup (sub), so they are not escaped again
    head = [("#", True), ("evaluation", False), ("family", False), ("systems", True),
            *((STATISTICS.get(s) or escape(s), True) for s in statistics)]
    rows = []
    for i, r in _ranked_rows(table):
        best = _best(r["best"], statistics) if "best" in table else {s for s in statistics if r[s] == tops[s]}
        marked = marks[i] == "best"
        mark = {"best": ' <span class="star" title="best">★</span>',
                "overlaps": ' <span class="near" title="not told apart from the best">≈</span>'}.get(marks[i], "")
        cells = [(_number(i + 1), ""), (_text(r["evaluation"]) + mark, ""),
                 (_text(r.get("family", "")), "k"), (_number(r.get("n_systems", math.nan)), "")]
        cells += [(_score(r[s], r.get(f"{s}_low"), r.get(f"{s}_high")), "top" if s in best else "")
                  for s in statistics]
        tds = "".join(f'<td class="{" ".join(filter(None, ["n" if numeric else "", extra]))}">{cell}</td>'
                      if numeric or extra else f"<td>{cell}</td>"
                      for (cell, extra), (_, numeric) in zip(cells, head))
        rows.append(f'<tr{" class=best" if marked else ""}>{tds}</tr>')
    head_html = "".join(f'<th class="n">{h}</th>' if numeric else f"<th>{h}</th>" for h, numeric in head)
    intro = _note("Every evaluation the workspace supports, correlated with the official leaderboard over the "
                  "systems, best first by Kendall's τ-b; under each value its bootstrap interval. ★: the best "
                  "evaluation (the first row); ≈: its Kendall τ-b interval overlaps the best's, so the two are not "
                  "told apart. Bold: the best value of each statistic, whatever its interval (it may lie in "
                  f"another row). Table: {_link(META)} (column <code>{VS_BEST}</code>).")
    return _section("meta", "Meta-evaluation", intro
                    + f'<table class="wide" data-tsv="{META}">\n<thead><tr>{head_html}</tr></thead>\n<tbody>\n'
                    + "\n".join(rows) + "\n</tbody>\n</table>\n")


def _agreement(content: ReportContent) -> str:
    tables = content.tables
    name = "Agreement of EXAM labels with the official judgments"
    if KAPPA not in tables:
        return _section("agreement", name, _note("No official judgments (<code>qrels/official.qrels</code> or "
                                                 "<code>--official-qrels</code>): nothing to compare."))
    alpha = tables[ALPHA]["alpha_ordinal"].iloc[0] if ALPHA in tables else math.nan
    intro = _note(f"On the passages judged in both: EXAM label (best grade) &ge; τ against official grade "
                  f"&ge; {_number(content.rel_level)}; tp both relevant, fp EXAM only, fn official only, tn neither; "
                  f"κ: Cohen's kappa, α: Krippendorff's alpha (nominal) of the same 0/1 labels. "
                  f"Krippendorff's alpha (ordinal) of the graded EXAM label and the official grade: "
                  f"<b>{_number(alpha)}</b>.")
    by_questions = ""
    if KAPPA_QUESTIONS in tables:
        by_questions = ("<h3>By the number of questions a passage answers</h3>"
                        + _note("EXAM relevant: the passage answers at least this many of its query's questions "
                                "(grade &ge; τ) against the same official relevance.")
                        + _frame_table(tables[KAPPA_QUESTIONS], KAPPA_QUESTIONS))
    graded = (_frame_table(tables[GRADED], GRADED) if GRADED in tables
              else _note("No passage is both graded and judged: no table."))
    return _section("agreement", name, intro + _frame_table(tables[KAPPA], KAPPA) + by_questions
                    + "<h3>EXAM label &times; official grade (passages)</h3>" + graded)


def _per_query(content: ReportContent, figures: dict[str, bytes]) -> str:
    if PER_QUERY not in content.tables:
        return _section("per-query", "Per-query scores", _note(
            "No per-query official scores in the meta-evaluation: no scatter plots."))
    return _section("per-query", "Per-query scores", _figure(
        figures, "per-query.png", f"Official {_text(content.official)} (x) against each chosen evaluation (y), "
        f"one point per system and query. Data: {_link(PER_QUERY)}."))


def _grades(content: ReportContent, figures: dict[str, bytes]) -> str:
    method = content.header.get("grading method", "")
    if GRADES not in content.tables:
        return _section("grades", "Grades", _note(f"No grades of <code>{_text(method)}</code>: no histogram."))
    return _section("grades", "Grades", _figure(
        figures, "grades.png", f"Grades of <code>{_text(method)}</code>: every (passage, question) grade, and every "
        "passage's EXAM label (its best grade over its query's questions).")
        + _frame_table(content.tables[GRADES], GRADES))


def _bank(content: ReportContent) -> str:
    tables = content.tables
    if BANK not in tables:
        return _section("bank", "Question bank", _note("No question bank in the workspace: no bank diagnostics."))
    parts = [_frame_table(tables[BANK], BANK)]
    if TOO_BROAD in tables:
        parts += ["<h3>Too broad questions</h3>",
                  _note("Answered by more officially non-relevant passages than relevant ones, worst first "
                        "(at most the first ten; all of them, with gaps and answers: "
                        "<code>exampp bank review</code>)."),
                  _frame_table(tables[TOO_BROAD], TOO_BROAD, wide=True)]
    elif KAPPA in tables:  # judged, and no question is too broad (a table without rows is left out)
        parts.append(_note("No question is answered by more officially non-relevant passages than relevant "
                           "ones: no too-broad table."))
    else:
        parts.append(_note("No official judgments: no too-broad questions to find."))
    return _section("bank", "Question bank", "".join(parts))


RAG_TABLES = (NUGGETS, NUGGET_AGREEMENT, SUPPORT)
AGREEMENT_STATISTICS = {"kappa": "κ", "kappa_binary": "κ, support vs rest", "alpha_ordinal": "α ordinal",
                        "kendall": "Kendall τ-b (V<sub>strict</sub>)", "spearman": "Spearman ρ (V<sub>strict</sub>)",
                        "tau_ap": "τ<sub>AP</sub> (V<sub>strict</sub>)"}
"""Display names of the nugget agreement table's statistics (HTML)."""
_RAG_CITATIONS = (
    "TREC 2024 Retrieval-Augmented Generation track (<a href=\"https://trec-rag.github.io/\">trec-rag.github.io</a>); "
    "R. Pradeep et al., <i>Initial Nugget Evaluation Results for the TREC 2024 RAG Track with the AutoNuggetizer "
    "Framework</i>, 2024, arXiv:2411.09607; N. Thakur et al., <i>Support Evaluation for the TREC 2024 RAG Track: "
    "Comparing Human versus LLM Judges</i>, 2025, arXiv:2504.15205.")


def _rag(content: ReportContent) -> str:
    tables = content.tables
    parts = []
    if NUGGETS in tables:
        board = tables[NUGGETS]
        measures = [c for c in board.columns if c not in ("run", "low", "high", "n_topics")]
        head = ["#", "run", *measures, "topics"]
        rows = [[_number(i + 1), f'<span class="k">{_text(r["run"])}</span>',
                 *(_score(r[m], r.get("low") if m == "V_strict" else None, r.get("high") if m == "V_strict" else None)
                   for m in measures), _number(r["n_topics"])] for i, r in _ranked_rows(board)]
        parts += ["<h3>Nugget scores</h3>", _note(
            "The official nugget assignment's run leaderboard, best first by V<sub>strict</sub>: the share of a "
            "topic's vital nuggets the answer supports (V counts partial support as 0.5, V<sub>strict</sub> as 0); "
            "A and A<sub>strict</sub> over all nuggets; W and W<sub>strict</sub> all nuggets weighted, vital 1 and "
            "okay 0.5. A run's score is its mean over the topics it answered; under V<sub>strict</sub> its "
            "bootstrap interval over those topics."),
            _table(head, rows, NUGGETS, numeric=set(range(2, len(head))) | {0}, wide=True)]
    if NUGGET_AGREEMENT in tables:
        agreement = tables[NUGGET_AGREEMENT]
        statistics = [s for s in AGREEMENT_STATISTICS if s in agreement]
        head_row = ("<tr><th>assignment</th>" + "".join(f'<th class="n"><span class="k">{h}</span></th>'
                                                             for h in ("nuggets", "topics", "runs"))
                    + "".join(f'<th class="n">{AGREEMENT_STATISTICS[s]}</th>' for s in statistics) + "</tr>")
        body_rows = "\n".join(
            f"<tr><td>{_text(r['assignment'])}</td>"
            + "".join(f'<td class="n">{_number(r[c])}</td>' for c in ("n_nuggets", "n_topics", "n_runs"))
            + "".join(f'<td class="n">{_score(r[s], r[f"{s}_low"], r[f"{s}_high"])}</td>' for s in statistics)
            + "</tr>" for _, r in agreement.iterrows())
        parts += ["<h3>Nugget assignments against the official one</h3>", _note(
            "On the (topic, run, nugget) both assign: Cohen's κ of support / partial support / no support, κ of "
            "support against the rest, Krippendorff's α (ordinal) of the grades 0/1/2; and the correlation of "
            "the V<sub>strict</sub> leaderboards the two assignments induce over the runs that answered every "
            "shared topic. Under each value its bootstrap interval over the topics."),
            f'<table class="wide" data-tsv="{NUGGET_AGREEMENT}">\n<thead>{head_row}</thead>\n<tbody>\n{body_rows}\n'
            "</tbody>\n</table>\n"]
    if SUPPORT in tables:
        parts += ["<h3>Citation support</h3>", _note(
            "Per run, the mean over its topics of each answer's weighted precision (over its judged citations, "
            "full support 1, partial 0.5, none 0), weighted recall (over its sentences, each its best cited "
            "support, a sentence citing nothing 0) and the share of its sentences that cite nothing."),
            _frame_table(tables[SUPPORT], SUPPORT, wide=True)]
    parts.append(_note(f"Measures as defined by: {_RAG_CITATIONS}"))
    return _section("rag", "RAG answers", "".join(parts))


def _human(content: ReportContent) -> str:
    summary, tables = content.human, content.tables
    assert summary is not None  # the section of a report with a human check only
    board = tables[HUMAN_CHECK]
    measures = [c for c in board.columns if c != "run" and not c.endswith((" judge", " low", " high"))]
    head = ["#", "run", *(h for m in measures for h in (f"{m} (judge)", f"{m} (corrected)"))]
    rows = [[_number(i + 1), f'<span class="k">{_text(r["run"])}</span>',
             *(cell for m in measures
               for cell in (_number(r[f"{m} judge"]), _score(r[m], r[f"{m} low"], r[f"{m} high"])))]
            for i, r in _ranked_rows(board)]
    kappa = "&ndash;" if _missing(summary.kappa) else f"{summary.kappa:.3f}"
    parts = [_note(
        f"{summary.labelled} pairs judged by people, drawn with known probabilities "
        "(<code>exampp assess sample</code>). "
        f"Each run's measure as the judge alone gives it, and corrected by the people's labels "
        f"(estimator <code>{escape(summary.estimator)}</code>) with its {summary.level:.0%} interval under it. "
        f"The judge against the people on the sample: Cohen's κ {kappa}."),
        _table(head, rows, HUMAN_CHECK, numeric=set(range(2, len(head))) | {0}, wide=True),
        "<h3>Orderings the sample confirms</h3>", _note(
            f"{summary.confirmed} of the {summary.compared} pairs of runs (per measure) that the judge orders are "
            f"confirmed by the sample: the estimated difference is positive at the {summary.level:.0%} level, "
            "Holm-adjusted over the pairs of a measure.")]
    if len(tables[HUMAN_ORDERINGS]):
        parts.append(_frame_table(tables[HUMAN_ORDERINGS], HUMAN_ORDERINGS, wide=True))
    parts += ["<h3>The judge's calibration</h3>", _note(
        "Per judge grade: the labelled pairs and the share of the pool's pairs at that grade that people call "
        "relevant (each labelled pair weighted by 1/π), with its interval."),
        _frame_table(tables[HUMAN_CALIBRATION], HUMAN_CALIBRATION)]
    return _section("human", "Human check", "".join(parts))


def _audit(content: ReportContent) -> str:
    summary, tables = content.audit, content.tables
    assert summary is not None  # the section of an audited report only
    if summary.texts == "answers":
        audited = f"Every answer ({summary.pooled}), each whole as submitted,"
    else:
        audited = f"Every pooled passage (the top {summary.depth} of every run: {summary.pooled})"
    thresholds = ("the thresholds for an exam of nuggets" if summary.thresholds == "nuggets"
                  else "the default thresholds")
    intro = (f"{audited} checked by <code>exampp audit</code> for text that games the judge: instructions "
             "addressed to it (injection), questions of the exam copied in (leakage), the query's words stuffed "
             f"(stuffing), one text repeated (duplicate), unrelated questions answered (canary); with {thresholds}.")
    if not summary.flags:
        return _section("audit", "Judge integrity", _note(f"{intro} No text is flagged."))
    scores = (" EXAM-Cover and rank as graded, the same with every flagged text the run retrieved graded 0, and "
              "the change: a run whose score falls owes that much to the flagged texts." if summary.scored else "")
    folded = ""
    if summary.unflagged:
        names = ", ".join(f'<span class="k">{_text(name)}</span>' for name in summary.unflagged)
        folded = f" Not listed, the runs without a flagged text ({len(summary.unflagged)}): {names}."
    shown = len(tables[AUDIT_FLAGS])
    listed = (f"All {summary.flags} flags" if shown == summary.flags
              else f"The first {shown} of {summary.flags} flags "
                   "(<code>exampp audit --flags FILE</code> lists them all)")
    return _section("audit", "Judge integrity", "".join([
        _note(f"{intro} {summary.flagged_texts} of the {summary.pooled} texts are flagged."),
        "<h3>Runs</h3>",
        _note(f"Per run: its flagged texts by class, all of them (a text may carry several classes), its texts "
              f"and the flagged share.{scores}{folded}"),
        _frame_table(tables[AUDIT], AUDIT, wide=True),
        "<h3>Flagged texts</h3>",
        _note(f"{listed}, by query and text: the runs each counts against, the evidence to check without opening "
              "the text, and the detector's measure."),
        _frame_table(tables[AUDIT_FLAGS], AUDIT_FLAGS, wide=True)]))


# -- pieces ----------------------------------------------------------------------------------


def _section(anchor: str, name: str, body: str) -> str:
    return f'<section id="{anchor}">\n<h2>{escape(name)}</h2>\n{body}</section>'



def _note(html: str) -> str:
    return f'<p class="note">{html}</p>\n'


def _link(name: str) -> str:
    return f'<a href="{escape(name)}"><code>{escape(name)}</code></a>'


def _figure(figures: dict[str, bytes], name: str, caption: str) -> str:
    data = base64.b64encode(figures[name]).decode("ascii")
    return (f'<figure><img src="data:image/png;base64,{data}" alt="{escape(name)}">'
            f'<figcaption>{caption} PNG: {_link("figures/" + name)}.</figcaption></figure>\n')


def _ranked_rows(table: pd.DataFrame) -> Iterable[tuple[int, pd.Series]]:
    """``table.iterrows()`` of a table ranked best first: the labels are the places from 0 (a RangeIndex)."""
    return cast("Iterable[tuple[int, pd.Series]]", table.iterrows())


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], tsv: str, numeric: Collection[int] = frozenset(),
           wide: bool = False) -> str:
    """A table of cells that are HTML already (escaped by the callers' helpers); ``tsv``: the file it shows."""
    head = "".join(f'<th class="n">{escape(h)}</th>' if i in numeric else f"<th>{escape(h)}</th>"
                   for i, h in enumerate(headers))
    body = "\n".join("<tr>" + "".join(f'<td class="n">{c}</td>' if i in numeric else f"<td>{c}</td>"
                                      for i, c in enumerate(row)) + "</tr>" for row in rows)
    return (f'<table{" class=wide" if wide else ""} data-tsv="{escape(tsv)}">\n<thead><tr>{head}</tr></thead>\n'
            f"<tbody>\n{body}\n</tbody>\n</table>\n")


KEY_COLUMNS = ("query_id", "run")


def _frame_table(frame: pd.DataFrame, tsv: str, wide: bool = False) -> str:
    """A DataFrame as it is: numbers right-aligned (:func:`_number`), everything else as text."""
    numeric = {i for i, column in enumerate(frame.columns) if pd.api.types.is_numeric_dtype(frame[column])}
    keys = {i for i, column in enumerate(frame.columns) if column in KEY_COLUMNS}  # ids stay on one line
    rows = [[_number(v) if i in numeric else f'<span class="k">{_text(v)}</span>' if i in keys else _text(v)
             for i, v in enumerate(row)] for row in frame.itertuples(index=False)]
    return _table([str(c) for c in frame.columns], rows, tsv, numeric, wide)


def _best(value: Any, statistics: Sequence[str]) -> set[str]:
    """The statistics a meta-evaluation row is best at: its ``best`` column names them (``"kendall, tau_ap"``);
    a boolean marks all or none."""
    if isinstance(value, str):
        return {name.strip() for name in value.split(",")} & set(statistics)
    return set(statistics) if value is True or isinstance(value, np.bool_) and value else set()


def _text(value: object) -> str:
    return escape("" if value is None else str(value))


def _missing(value: Any) -> bool:
    return value is None or isinstance(value, float) and math.isnan(value)


def _number(value: Any) -> str:
    """Integers as integers, other numbers to 3 decimals, a missing value as a dash."""
    if _missing(value):
        return "&ndash;"
    value = float(value)
    return f"{value:.0f}" if value.is_integer() else f"{value:.3f}"


def _score(value: Any, low: Any, high: Any) -> str:
    """A score with its interval under it (none where there is none)."""
    if _missing(value):
        return "&ndash;"
    interval = ("" if _missing(low) or _missing(high)
                else f'<span class="ci">[{float(low):.3f}, {float(high):.3f}]</span>')
    return f"{float(value):.3f}{interval}"
