"""Nugget scores of answers and runs, as the TREC 2024 RAG track computes them.

For one answer, over its topic's nuggets (Pradeep et al. 2024, the ``nuggetizer`` package):

- ``A``: the share of all nuggets supported, a partly supported one counting 0.5;
- ``V``: the same over the vital nuggets only;
- ``W``: weighted by importance, vital 1 and okay 0.5: Σ wᵢ sᵢ / Σ wᵢ;
- ``*_strict``: the same with partial support counting 0.

A score whose nuggets are none (a topic without vital nuggets, for V) is 0, as the package
has it. A run's score is the mean over the topics it answered (the track's, and the package's
``calculate_global_metrics``); with ``topics`` given, over those topics, an unanswered one
scoring 0 (like ``trec_eval -c``).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from exampp.formats.nugget_assignments import Answer, AssignedNugget

MEASURES = ("V_strict", "A_strict", "V", "A", "W_strict", "W")
SUPPORT = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}  # what an assignment is worth
WEIGHT = {"vital": 1.0, "okay": 0.5}  # what a nugget is worth in W


def _share(nuggets: Sequence[AssignedNugget], *, strict: bool, weighted: bool) -> float:
    total = sum(WEIGHT[n.importance] if weighted else 1.0 for n in nuggets)
    if not total:
        return 0.0
    got = 0.0
    for nugget in nuggets:
        if nugget.assignment is None:
            raise ValueError(f"nugget {nugget.text!r} has no assignment")
        value = SUPPORT[nugget.assignment]
        if strict and value < 1.0:
            value = 0.0
        got += value * (WEIGHT[nugget.importance] if weighted else 1.0)
    return got / total


def answer_scores(nuggets: Sequence[AssignedNugget]) -> dict[str, float]:
    """The six scores of one answer from its assigned nuggets (see the module docstring).

    :param nuggets: The answer's nuggets with their importance and assignment.
    """
    vital = [n for n in nuggets if n.importance == "vital"]
    return {
        "V_strict": _share(vital, strict=True, weighted=False),
        "A_strict": _share(nuggets, strict=True, weighted=False),
        "V": _share(vital, strict=False, weighted=False),
        "A": _share(nuggets, strict=False, weighted=False),
        "W_strict": _share(nuggets, strict=True, weighted=True),
        "W": _share(nuggets, strict=False, weighted=True),
    }


def per_answer(answers: Iterable[Answer]) -> pd.DataFrame:
    """Columns ``run, query_id`` and the :data:`MEASURES`, one row per answer, sorted by run then topic.

    :param answers: The answers with their assigned nuggets.
    """
    rows = [{"run": a.run_id, "query_id": a.query_id, **answer_scores(a.nuggets)} for a in answers]
    frame = pd.DataFrame(rows, columns=["run", "query_id", *MEASURES])
    return frame.sort_values(["run", "query_id"], kind="stable").reset_index(drop=True)


def run_scores(per_answer_scores: pd.DataFrame, topics: Sequence[str] | None = None, *,
               measures: Sequence[str] = MEASURES) -> pd.DataFrame:
    """Columns ``run``, the ``measures`` and ``n_topics``, best first by the first measure (ties by run).

    A run's score is the mean over its answers.

    :param per_answer_scores: The per-answer table (:func:`per_answer`).
    :param topics: Average over these topics instead, a topic the run did not answer scoring 0
        (answers to other topics are left out).
    :param measures: The per-answer columns averaged (the support measures use it too).
    """

    frame = per_answer_scores
    if topics is not None:
        wanted = list(dict.fromkeys(topics))
        frame = frame[frame["query_id"].isin(wanted)]
        grid = pd.MultiIndex.from_product([sorted(per_answer_scores["run"].unique()), wanted],
                                          names=["run", "query_id"])
        frame = frame.set_index(["run", "query_id"]).reindex(grid, fill_value=0.0).reset_index()
    board = frame.groupby("run", sort=True)[list(measures)].mean()
    board["n_topics"] = frame.groupby("run", sort=True)["query_id"].nunique()
    board = board.reset_index()
    board = board.sort_values([measures[0], "run"], ascending=[False, True], kind="stable")
    return board.reset_index(drop=True)
