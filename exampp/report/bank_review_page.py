"""The bank review as values (:class:`BankReview`, what :func:`exampp.api.bank_review.review_bank`
finds) and as one self-contained HTML page: inline CSS, no scripts, no external resources, every text
from the data HTML-escaped; long passage texts folded in ``<details>``."""
from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any, cast

import pandas as pd

from exampp.report.records import table_rows

SNIPPET = 140  # characters of a passage shown before its <details> is opened

_CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d1d1f;
       max-width: 78rem; margin: 1.5rem auto; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { margin-top: 2.2rem; border-bottom: 2px solid #ddd; }
h3 { font-size: 1rem; margin: 1.4rem 0 .3rem; }
p.note, .muted { color: #555; } code, .id { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; color: #555; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; font-size: 14px; }
th, td { border: 1px solid #d6d6d6; padding: .25rem .45rem; vertical-align: top; text-align: left; }
th { background: #f2f2f2; } tbody tr:nth-child(even) { background: #fafafa; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
dl.summary { display: grid; grid-template-columns: max-content max-content; gap: .1rem 1.2rem; }
dl.summary dt { color: #555; } dl.summary dd { margin: 0; font-weight: 600; text-align: right; }
details summary { cursor: pointer; } details p { margin: .3rem 0; white-space: pre-wrap; }
.flag { display: inline-block; padding: 0 .35rem; border-radius: .3rem; background: #ffe8cc; font-size: 12px; }
@media print { body { max-width: none; font-size: 11pt; } h2 { break-after: avoid; } tr { break-inside: avoid; }
               nav { display: none; } }
"""


@dataclass(frozen=True)
class BankReview:
    """The review of one bank on the grades of one stored method (see :mod:`exampp.api.bank_review`)."""

    method_id: str
    tau: float
    rel_level: float
    judged: bool
    """Whether official judgments were there: without them ``too_broad`` and ``gaps`` are empty."""
    questions: pd.DataFrame
    """Every exam question, bank order: ``query_id, question_id, text, graded, answered, best_grade``,
    with judgments also ``relevant, non_relevant, unjudged, precision``; then ``flags``."""
    too_broad: pd.DataFrame
    """:data:`~exampp.report.bank_tables.TOO_BROAD_COLUMNS`; ``non_relevant_examples``: space-separated ids,
    highest grade first."""
    unanswered: pd.DataFrame
    """:data:`~exampp.report.bank_tables.UNANSWERED_COLUMNS`; ``best_grade`` is NaN for a question no passage
    was graded for."""
    gaps: pd.DataFrame
    """:data:`~exampp.report.bank_tables.GAP_COLUMNS`: ``best_question`` is the question the passage came
    closest to answering."""
    answers: pd.DataFrame
    """:data:`~exampp.report.bank_tables.ANSWER_COLUMNS`: per question, one row per normalised answer, most
    frequent first."""
    answers_note: str | None = None
    """Why ``answers`` is empty when the method keeps no extracted answers."""
    passages: Mapping[str, str] = field(default_factory=dict)
    """Texts of the passages the tables name (gaps, too-broad examples), where the corpus has them."""
    relevant_ungraded: int = 0
    """Officially relevant passages of the exam's queries that were not graded (not in the pool)."""
    query_texts: Mapping[str, str] = field(default_factory=dict)
    """Query titles where the bank or the workspace's topics give them (for readers of the page)."""

    @property
    def counts(self) -> dict[str, int]:
        """The summary: questions, graded (query, passage) pairs, and the length of each table."""
        counts = {"questions": len(self.questions), "queries": self.questions["query_id"].nunique(),
                  "answered questions": int((self.questions["answered"] > 0).sum()),
                  "unanswered": len(self.unanswered)}
        if self.judged:
            counts.update({"too broad": len(self.too_broad), "gaps": len(self.gaps),
                           "relevant passages not graded": self.relevant_ungraded})
        return counts


def review_html(review: BankReview, *, title: str | None = None) -> str:
    """The whole page for ``review``."""
    title = title or "Question bank review"
    sections = [_summary(review), _too_broad(review), _unanswered(review), _gaps(review), _answers(review),
                _questions(review)]
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>", f"<style>{_CSS}</style>", "</head>", "<body>",
        f"<h1>{escape(title)}</h1>", *sections, "</body>", "</html>", ""])


# -- sections --------------------------------------------------------------------------------


def _summary(review: BankReview) -> str:
    relevant = f"official grade &ge; {_number(review.rel_level)}"
    lines = [f'<p class="muted">Grades of <code>{escape(review.method_id)}</code>; a question counts as answered '
             f"by a passage graded &ge; {_number(review.tau)}"
             + (f"; a passage is relevant at {relevant}.</p>" if review.judged else
                ". No official judgments: too-broad questions and gaps need them "
                "(<code>qrels/official.qrels</code> or <code>--official</code>).</p>")]
    items = "".join(f"<dt>{escape(name)}</dt><dd>{count}</dd>" for name, count in review.counts.items())
    links = [("too-broad", "Too broad"), ("unanswered", "Unanswered"), ("gaps", "Gaps"), ("answers", "Answers"),
             ("questions", "All questions")]
    nav = " · ".join(f'<a href="#{anchor}">{name}</a>' for anchor, name in links)
    return "\n".join(lines + [f'<dl class="summary">{items}</dl>', f"<nav>{nav}</nav>"])


def _too_broad(review: BankReview) -> str:
    head = _heading("too-broad", "Too broad questions", review.too_broad if review.judged else None)
    if not review.judged:
        return head + _note("Needs official judgments.")
    intro = _note("Answered by more officially non-relevant passages than relevant ones; most non-relevant "
                  "answers first. Most passages that answer such a question are not relevant to the query: make it "
                  "more specific to the information need, or remove it.")
    rows = [[_query(r.query_id, review), _question(r.text, r.question_id), _number(r.non_relevant), _number(r.relevant),
             _number(r.precision), _number(r.answered), _number(r.graded),
             _passages(r.non_relevant_examples.split(), review.passages)]
            for r in table_rows(review.too_broad)]
    return head + intro + _table(["query", "question", "non-relevant", "relevant", "precision", "answered",
                                  "graded", "non-relevant passages answering it"], rows, numeric={2, 3, 4, 5, 6})


def _unanswered(review: BankReview) -> str:
    intro = _note("No graded passage answers these questions: the pool holds no answer, or the question asks "
                  "what the query is not about.")
    rows = [[_query(r.query_id, review), _question(r.text, r.question_id), _number(r.graded), _number(r.best_grade)]
            for r in table_rows(review.unanswered)]
    return (_heading("unanswered", "Unanswered questions", review.unanswered) + intro
            + _table(["query", "question", "graded", "best grade"], rows, numeric={2, 3}))


def _gaps(review: BankReview) -> str:
    head = _heading("gaps", "Gaps: relevant passages that answer no question", review.gaps if review.judged else None)
    if not review.judged:
        return head + _note("Needs official judgments.")
    intro = _note("Officially relevant passages whose best grade over their query's questions is below "
                  f"&tau; = {_number(review.tau)} ({review.relevant_ungraded} relevant passages were not graded "
                  "at all). What they say is what the bank is missing.")
    rows = [[_query(r.query_id, review), _text(r.passage_id), _number(r.official), _number(r.best_grade),
             _question(r.best_question_text, r.best_question), _passage_text(r.text)]
            for r in table_rows(review.gaps)]
    return head + intro + _table(["query", "passage", "official", "best grade", "closest question", "text"], rows,
                                 numeric={2, 3})


def _answers(review: BankReview) -> str:
    head = _heading("answers", "Extracted answers", None if review.answers_note else review.answers)
    if review.answers_note:
        return head + _note(escape(review.answers_note))
    parts = [head, _note("Each question's answers, normalised (case, punctuation, stopwords, word stems) and "
                         f"grouped; <em>answered</em> counts the passages graded &ge; {_number(review.tau)}.")]
    for key, group in review.answers.groupby(["query_id", "question_id"], sort=False):
        qid, question_id = cast("tuple[str, str]", key)
        parts.append(f"<h3>{_question(group['question'].iloc[0], question_id)}</h3>"
                     f'<p class="muted">query {_query(qid, review)}</p>')
        rows = [[_text(r.answer), _number(r.count), _number(r.answered), _text(r.passages)]
                for r in table_rows(group)]
        parts.append(_table(["answer", "passages", "answered", "example passages"], rows, numeric={1, 2}))
    return "\n".join(parts)


def _questions(review: BankReview) -> str:
    table = review.questions
    judged = "precision" in table
    headers = ["query", "question", "graded", "answered", "best grade"]
    if judged:
        headers += ["relevant", "non-relevant", "unjudged", "precision"]
    headers.append("flags")

    def row(r: Any) -> list[str]:
        cells = [_query(r.query_id, review), _question(r.text, r.question_id), _number(r.graded), _number(r.answered),
                 _number(r.best_grade)]
        if judged:
            cells += [_number(r.relevant), _number(r.non_relevant), _number(r.unjudged), _number(r.precision)]
        return cells + [" ".join(f'<span class="flag">{_text(f)}</span>' for f in r.flags.split(",") if f)]

    return (_heading("questions", "All questions", table)
            + _table(headers, [row(r) for r in table_rows(table)], numeric=set(range(2, len(headers) - 1))))


# -- pieces ----------------------------------------------------------------------------------


def _heading(anchor: str, name: str, table: pd.DataFrame | None) -> str:
    count = "" if table is None else f" ({len(table)})"
    return f'<h2 id="{anchor}">{escape(name)}{count}</h2>\n'


def _note(html: str) -> str:
    return f'<p class="note">{html}</p>\n'


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Collection[int] = ()) -> str:
    """A table of cells that are HTML already (escaped by the callers' helpers)."""
    if not rows:
        return _note("None.")
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "\n".join("<tr>" + "".join(f'<td class="n">{c}</td>' if i in numeric else f"<td>{c}</td>"
                                      for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def _text(value: object) -> str:
    return escape("" if value is None else str(value))


def _number(value: Any) -> str:
    """Integers as integers, other numbers to 4 decimals, a missing value as a dash."""
    if value is None or isinstance(value, float) and math.isnan(value):
        return "&ndash;"
    value = float(value)
    return f"{value:.0f}" if value.is_integer() else f"{value:.4f}"


def _query(query_id: str, review: BankReview) -> str:
    """A query's id, with its title under it where known."""
    title = review.query_texts.get(query_id)
    return _text(query_id) + (f'<br><span class="muted">{_text(title)}</span>' if title else "")


def _question(text: str, question_id: str) -> str:
    """A question's text with its id (the id alone where it stands in for the text)."""
    ident = f'<span class="id">{_text(question_id)}</span>'
    return f"{_text(text)} {ident}" if text and text != question_id else ident


def _passage_text(text: str) -> str:
    """A passage's first words, the whole text folded under them."""
    if not text:
        return '<span class="muted">(text not in the corpus)</span>'
    if len(text) <= SNIPPET:
        return _text(text)
    return f"<details><summary>{_text(text[:SNIPPET].rstrip())}&hellip;</summary><p>{_text(text)}</p></details>"


def _passages(ids: Sequence[str], texts: Mapping[str, str]) -> str:
    """Passage ids, each with its text folded."""
    return "".join(f'<div><span class="id">{_text(pid)}</span> {_passage_text(texts.get(pid, ""))}</div>'
                   for pid in ids)
