"""The judge against people on a labelled sample (``exampp assess agree``; :mod:`exampp.api.assess` joins the
sample with its labels): Cohen's κ, the confusion table, the judge's calibration curve with Wilson
intervals, and the largest disagreements.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from exampp.assess.estimators import Evidence
from exampp.assess.population import Population


@dataclass(frozen=True)
class JudgeAgreement:
    """The judge against people on the labelled sample."""

    kappa: float
    """Cohen's κ of judge relevant (grade ≥ τ) and human relevant (grade ≥ rel_level)."""
    confusion: pd.DataFrame
    """Judge grade x human grade: how many labelled pairs."""
    calibration: pd.DataFrame
    """Per judge grade: pairs labelled, P(human relevant) over the pool (each pair weighted 1/π), and its
    interval (Wilson, on the labelled count)."""
    disagreements: pd.DataFrame
    """The labelled pairs where judge and people differ most: query_id, doc_id, judge, human, gap."""
    n_pairs: int
    relevant_grade: float
    rel_level: float


def agreement_of(evidence: Evidence, population: Population, rel_level: float, *, top: int = 20,
                 level: float = 0.9) -> JudgeAgreement:
    """κ, the confusion table, the judge's calibration curve and the largest disagreements of the judge and
    a sample joined with its labels (:func:`exampp.api.assess.judge_agreement` reads them).

    :param evidence: The sample with its labels, as the estimators see it.
    :param population: The pool the sample was drawn from: the pairs' query and document ids.
    :param rel_level: The human grade from which a pair is relevant.
    :param top: How many of the largest disagreements to list.
    :param level: The calibration curve's confidence level.
    """

    from scipy import stats

    from exampp.analysis.label_agreement import cohen_kappa_counts

    ev = evidence
    judge = ev.judge[ev.sampled]
    human = np.nanmean(ev.labels, axis=1)
    judge_rel, human_rel = judge >= ev.relevant_grade, human >= rel_level
    counts = np.array([[np.sum(judge_rel & human_rel), np.sum(judge_rel & ~human_rel)],
                       [np.sum(~judge_rel & human_rel), np.sum(~judge_rel & ~human_rel)]], dtype=float)
    kappa = float(cohen_kappa_counts(counts[None])[0])
    confusion = pd.crosstab(pd.Series(judge, name="judge"), pd.Series(human, name="human"))
    weights = 1 / ev.probabilities
    z = stats.norm.ppf((1 + level) / 2)
    rows = []
    for grade in np.unique(judge):
        at = judge == grade
        n, share = int(at.sum()), float(np.average(human_rel[at], weights=weights[at]))
        low, high = _wilson(share, n, z)
        rows.append((grade, n, share, low, high))
    calibration = pd.DataFrame(rows, columns=["judge", "n", "p_relevant", "low", "high"])
    top_judge, top_human = max(float(ev.judge.max(initial=1.0)), 1.0), max(float(np.nanmax(ev.labels)), 1.0)
    gap = judge / top_judge - human / top_human
    pop = population
    order = np.argsort(-np.abs(gap), kind="stable")[:top]
    disagreements = pd.DataFrame({
        "query_id": [pop.query_ids[ev.sampled[i]] for i in order], "doc_id": [pop.keys[ev.sampled[i]] for i in order],
        "judge": judge[order], "human": human[order], "gap": gap[order]})
    differing = disagreements[disagreements["gap"] != 0].reset_index(drop=True)
    return JudgeAgreement(kappa, confusion, calibration, differing,
                          len(judge), ev.relevant_grade, rel_level)


def _wilson(share: float, n: int, z: float) -> tuple[float, float]:
    if n == 0:
        return math.nan, math.nan
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)
