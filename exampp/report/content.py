"""What the evaluation report holds, as values: the names of its files and the content of its page.

The report's tables (:mod:`exampp.report.tables`) make a :class:`ReportContent` for the report job
(:mod:`exampp.api.report`); the page (:mod:`exampp.report.html`) renders one. Both name the report's
tables by the constants here, so that the page imports nothing from the tables or the job.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

# The report's files: tables (TSV), the figures (figures/NAME), the page.
LEADERBOARD, SCORES, COMPARISON, META = "leaderboard.tsv", "scores.tsv", "comparison.tsv", "meta-evaluation.tsv"
KAPPA, GRADED, PER_QUERY, GRADES = "kappa.tsv", "graded-agreement.tsv", "per-query.tsv", "grades.tsv"
KAPPA_QUESTIONS, ALPHA = "kappa-questions.tsv", "alpha.tsv"
BANK, TOO_BROAD = "bank.tsv", "too-broad.tsv"
NUGGETS, NUGGET_AGREEMENT, SUPPORT = "nuggets.tsv", "nugget-agreement.tsv", "support.tsv"
AUDIT, AUDIT_FLAGS = "audit.tsv", "audit-flags.tsv"
HUMAN_CHECK, HUMAN_ORDERINGS, HUMAN_CALIBRATION = "human-check.tsv", "human-orderings.tsv", "human-calibration.tsv"
VS_BEST = "vs_best"
"""The meta-evaluation table's column saying how each row stands to the best (the first):
``best``, ``overlaps`` (its Kendall τ-b interval overlaps the best's: not told apart), ``apart``, or
empty (no τ-b or no interval: not compared)."""
PAGE = "report.html"


@dataclass(frozen=True)
class ReportContent:
    """Everything the page shows, as values: :func:`~exampp.report.tables.report_content` computes it,
    :func:`~exampp.api.report.write_report` writes it."""

    header: dict[str, str]
    """What was evaluated how: label -> value (workspace, method, official measure, runs, ...)."""
    official: str
    """The official leaderboard's name (e.g. ``nDCG@10``)."""
    chosen: list[str]
    """The evaluations drawn in the figures and shown in the leaderboard table, best first."""
    tables: dict[str, pd.DataFrame]
    """TSV file name -> table; a table a workspace cannot give (no judgments, no bank) is absent."""
    rel_level: float
    audit: AuditSummary | None = None
    """What the judge-integrity section says besides its tables; None: no section (nothing audited)."""
    conclusion: Conclusion | None = None
    """The page's first sentence; None where no evaluation has a Kendall τ-b."""
    human: HumanSummary | None = None
    """What the human-check section says besides its tables; None: no section (no human sample)."""


@dataclass(frozen=True)
class HumanSummary:
    """The human sample's figures the *Human check* section states (its tables are :data:`HUMAN_CHECK`,
    :data:`HUMAN_ORDERINGS` and :data:`HUMAN_CALIBRATION`)."""

    labelled: int
    kappa: float
    estimator: str
    level: float
    confirmed: int  # pairs of runs the sample confirms in the judge's order, over all measures
    compared: int  # pairs of runs per measure


@dataclass(frozen=True)
class Conclusion:
    """The best evaluation by the meta-evaluation table's order and how the others stand to it, by
    the rule the page states: two evaluations are told apart only where their Kendall τ-b intervals
    do not overlap (:data:`VS_BEST`)."""

    best: str
    kendall: float
    low: float
    high: float
    """The best's interval; NaN without bootstrap."""
    confidence: float
    systems: int
    overlapping: list[str]
    """The evaluations whose interval overlaps the best's, in the table's order."""
    apart: int
    """Evaluations whose interval does not overlap the best's."""
    unknown: int
    """Evaluations that cannot be compared: no τ-b (a constant leaderboard) or no interval."""


@dataclass(frozen=True)
class AuditSummary:
    """The audit's figures the judge-integrity section states (its tables are :data:`AUDIT` and
    :data:`AUDIT_FLAGS`, present only where something is flagged)."""

    texts: str
    """``passages`` (the runs' pooled top-``depth``) or ``answers`` (RAG answers, each whole)."""
    thresholds: str
    """The detectors' thresholds: ``default``, or ``nuggets`` for an exam of nuggets."""
    depth: int
    pooled: int
    flagged_texts: int
    flags: int
    runs: int
    unflagged: list[str]
    """Runs without a flagged text left out of the per-run table (only when it would be long)."""
    scored: bool
    """Whether the per-run table has the scores (the store holds grades)."""
