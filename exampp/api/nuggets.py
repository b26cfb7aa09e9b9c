"""The nugget score job: nugget scores of answers and runs from an assignment file (the TREC 2024
RAG track's format, :mod:`exampp.formats.nugget_assignments`), as the track computes them
(:mod:`exampp.analysis.nugget_scores`).

Errors are :class:`~exampp.errors.ExamppError` (the command line prints them as one line).
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import pandas as pd

from exampp.analysis.nugget_scores import MEASURES, per_answer, run_scores
from exampp.errors import ExamppError
from exampp.files.io import PathLike
from exampp.formats.nugget_assignments import Answer, read_assignments


@dataclass(frozen=True)
class NuggetScores:
    """Nugget scores of every answer and every run of an assignment file."""

    per_answer: pd.DataFrame
    """Columns ``run, query_id`` and the :data:`~exampp.analysis.nugget_scores.MEASURES`, one row per
    answer, by run then topic (a per-query table as :mod:`exampp.formats.leaderboard` reads it)."""
    leaderboard: pd.DataFrame
    """Columns ``run``, the measures (with ``low, high`` after ``measure`` when bootstrapped) and
    ``n_topics`` (the topics a run's mean is over), best first by ``measure`` (ties by run)."""
    topics: tuple[str, ...]
    """The topics of the file, in order of first appearance."""
    measure: str
    complete: bool
    """Means over every topic of the file (an unanswered one scoring 0), else over those a run answered."""


def score_nuggets(
    assignments: PathLike | Sequence[Answer],
    *,
    measure: str = "V_strict",
    complete: bool = False,
    bootstrap: int = 0,
    seed: int = 0,
    confidence: float = 0.95,
) -> NuggetScores:
    """Nugget scores of the answers of an assignment file (``exampp nuggets score``).

    A run's score is the track's: the mean over the topics it answered.

    :param assignments: An assignment file, or answers read already.
    :param measure: The measure the leaderboard is ordered by and bootstrapped (one of
        :data:`~exampp.analysis.nugget_scores.MEASURES`).
    :param complete: Means over every topic of the file, a topic the run did not answer scoring 0.
    :param bootstrap: When > 0, intervals (``low, high``; :func:`exampp.analysis.statistics.bootstrap_interval`)
        of each run's ``measure`` over this many resamplings of the topics its mean is over (runs over
        the same topics share the draws, as in every bootstrap of exampp's).
    :param seed: The seed of the bootstrap's draws.
    :param confidence: The intervals' confidence level.
    """

    if measure not in MEASURES:
        raise ExamppError(f"unknown nugget measure {measure!r}; expected one of {', '.join(MEASURES)}")
    # Scores read only the assignments: the answers' texts are not kept.
    answers = read_assignments(assignments, texts=False) if isinstance(assignments, (str, os.PathLike)) \
        else assignments
    scores = per_answer(answers)
    topics = tuple(dict.fromkeys(a.query_id for a in answers))
    board = run_scores(scores, list(topics) if complete else None)
    board = board.sort_values([measure, "run"], ascending=[False, True], kind="stable").reset_index(drop=True)
    if bootstrap:
        interval = _intervals(scores, measure, complete, bootstrap, seed, confidence)
        at = cast(int, board.columns.get_loc(measure)) + 1  # a column of its own: its position
        board.insert(at, "low", board["run"].map(interval["low"]))
        board.insert(at + 1, "high", board["run"].map(interval["high"]))
    return NuggetScores(scores, board, topics, measure, complete)


def _intervals(scores: pd.DataFrame, measure: str, complete: bool, n: int, seed: int, confidence: float
               ) -> pd.DataFrame:
    """index run; columns low, high: bootstrap intervals of each run's mean ``measure``."""
    from exampp.analysis.statistics import bootstrap_means, scores_table

    if complete:
        return bootstrap_means(scores_table(scores, measure), n=n, seed=seed, confidence=confidence)
    table = scores.pivot(index="run", columns="query_id", values=measure)
    answered = table.notna()
    groups = answered.groupby(list(answered.columns), sort=False).groups  # runs by the topics they answered
    parts = [bootstrap_means(table.loc[runs, answered.loc[runs[0]]], n=n, seed=seed, confidence=confidence)
             for runs in groups.values()]
    return pd.concat(parts)
