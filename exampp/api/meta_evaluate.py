"""The meta-evaluate job: every evaluation a workspace supports (label variant x tau x measure,
EXAM-Cover, n-EXAM, intent-aware measures, IRT ability) correlated with an official leaderboard,
each correlation with its bootstrap interval over queries.

Errors are :class:`~exampp.errors.ExamppError` (the command line prints them as one line).
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class MetaEvaluation:
    """Every evaluation of one workspace against the official leaderboard."""

    table: pd.DataFrame
    """One row per evaluation, best first by Kendall's τ: columns ``evaluation`` (display name),
    ``family`` (qrels, cover, n-exam, intent, irt), ``label``, ``tau``, ``measure``, ``n_systems``,
    and for each statistic s of :data:`exampp.analysis.statistics.CORRELATIONS`: ``s``, ``s_low``,
    ``s_high``; ``best`` marks the best row of each statistic."""
    scores: pd.DataFrame
    """Index run, one column per evaluation: its mean scores."""
    low: pd.DataFrame
    """Same shape as ``scores``: the low end of each mean's bootstrap interval (NaN where none)."""
    high: pd.DataFrame
    per_query: dict[str, pd.DataFrame]
    """Evaluation -> run x query table of its per-query scores (absent where there is none: IRT)."""
    official: pd.Series
    """Index run: the official scores; its name is the official leaderboard's label."""
    official_per_query: pd.DataFrame | None
    bootstrap: int
    seed: int
    top: int
    confidence: float
