"""Citation-support measures of answers and runs (Thakur et al. 2025, "Support Evaluation for the
TREC 2024 RAG Track: Comparing Human versus LLM Judges", arXiv 2504.15205).

A citation's weight is its support: full 1, partial 0.5, none 0. For one answer:

- ``weighted_precision``: over the answer's judged citations, the mean weight — how far what
  the answer cites supports the sentences citing it;
- ``weighted_recall``: over the answer's sentences, the mean of each sentence's best weight
  among its judged citations, a sentence without citations counting 0 — how far the answer's
  sentences are supported by what they cite;
- ``uncited``: the share of the answer's sentences that cite nothing.

The paper names the two measures and their weights (precision over citations, recall over
sentences, full 1 and partial 0.5); its formulas could not be read here, so these are the
definitions its description gives, written out. Unjudged citations (support -1) are left out:
of precision's citations, and of recall's sentences when none of a sentence's citations is
judged (its support is unknown; a sentence that cites nothing is known to be unsupported). An
answer with nothing to average (no judged citation, for precision) scores 0, as the nugget
scores do (:mod:`exampp.analysis.nugget_scores`). A run's score is the mean over the topics it
answered, as for the nugget scores (:func:`exampp.analysis.nugget_scores.run_scores`).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from exampp.analysis import nugget_scores
from exampp.formats.citations import CitedAnswer, Sentence

MEASURES = ("weighted_precision", "weighted_recall", "uncited")
WEIGHT = {2: 1.0, 1: 0.5, 0: 0.0}  # what a citation's support is worth


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _best(sentence: Sentence) -> float | None:
    """A sentence's support: its best judged citation's weight; 0 without citations; None when
    it cites only unjudged segments."""
    if not sentence.citations:
        return 0.0
    judged = [WEIGHT[c.support] for c in sentence.citations if c.support is not None]
    return max(judged) if judged else None


def answer_scores(answer: CitedAnswer) -> dict[str, float]:
    """The :data:`MEASURES` of one answer (see the module docstring).

    :param answer: The answer with its judged citations.
    """
    weights = [WEIGHT[c.support] for s in answer.sentences for c in s.citations if c.support is not None]
    best = [b for b in map(_best, answer.sentences) if b is not None]
    uncited = [0.0 if s.citations else 1.0 for s in answer.sentences]
    return {"weighted_precision": _mean(weights), "weighted_recall": _mean(best), "uncited": _mean(uncited)}


def per_answer(answers: Iterable[CitedAnswer]) -> pd.DataFrame:
    """Columns ``run, query_id`` and the :data:`MEASURES`, one row per answer, sorted by run then topic.

    :param answers: The answers with their judged citations.
    """
    rows = [{"run": a.run_id, "query_id": a.topic_id, **answer_scores(a)} for a in answers]
    frame = pd.DataFrame(rows, columns=["run", "query_id", *MEASURES])
    return frame.sort_values(["run", "query_id"], kind="stable").reset_index(drop=True)


def run_scores(per_answer_scores: pd.DataFrame, topics: Sequence[str] | None = None) -> pd.DataFrame:
    """Columns ``run``, the :data:`MEASURES` and ``n_topics``, best weighted precision first: each
    run's mean over its answers.

    :param per_answer_scores: The per-answer table (:func:`per_answer`).
    :param topics: Average over these topics instead, an unanswered one scoring 0.
    """

    return nugget_scores.run_scores(per_answer_scores, topics, measures=MEASURES)
