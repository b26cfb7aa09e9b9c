"""The report's tables and the content of its page (:mod:`exampp.api.report` reads the workspace, runs
the jobs it reports on, and writes the page): pure functions of a meta-evaluation, the grades and their
labels, the official judgments, the bank review and the audit.
"""
from __future__ import annotations

import datetime
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import cast

import numpy as np
import pandas as pd

from exampp.analysis.meta_evaluation import MetaEvaluation
from exampp.audit.tables import AuditResult
from exampp.collection.qrels import Qrels, as_label
from exampp.report.bank_review_page import BankReview
from exampp.report.content import (
    ALPHA,
    AUDIT,
    AUDIT_FLAGS,
    BANK,
    COMPARISON,
    GRADED,
    GRADES,
    KAPPA,
    KAPPA_QUESTIONS,
    LEADERBOARD,
    META,
    PER_QUERY,
    SCORES,
    TOO_BROAD,
    VS_BEST,
    AuditSummary,
    Conclusion,
    ReportContent,
)

CHOSEN = 3
"""Best evaluations of the meta-evaluation table drawn in the figures, besides the official leaderboard
and EXAM-Cover."""
TOO_BROAD_SHOWN = 10  # rows of the bank review's too-broad table on the page (`exampp bank review` has all)
HISTOGRAM_LEVELS = 20  # more distinct grades than this (a continuous grader) are binned
HISTOGRAM_BINS = 10
AUDIT_RUNS_SHOWN = 20  # more runs than this: those without a flagged text are named in a sentence
AUDIT_FLAGS_SHOWN = 50  # flagged texts on the page (`exampp audit --flags` lists all)


@dataclass(frozen=True)
class ReportInputs:
    """What a report is about: the meta-evaluation of one method's grades, their labels, and what they
    are compared with.

    :param meta: The meta-evaluation.
    :param method_id: The grading method's id in the store.
    :param grades: Its stored grades.
    :param labels: Their EXAM labels.
    :param judgments: The official judgments (None: no agreement section).
    :param bank: The bank review (None: no bank section).
    :param answered: Each passage's number of questions answered at grade >= ``tau`` (the count
        labels), for κ by the least number of questions answered.
    :param tau: The grade at which ``answered`` counts a question answered.
    """

    meta: MetaEvaluation
    method_id: str
    grades: pd.DataFrame
    labels: Qrels
    judgments: Qrels | None = None
    bank: BankReview | None = None
    answered: Qrels | None = None
    tau: float | None = None


def audit_tables(result: AuditResult, *, runs_shown: int = AUDIT_RUNS_SHOWN,
                 flags_shown: int = AUDIT_FLAGS_SHOWN) -> tuple[AuditSummary, dict[str, pd.DataFrame]]:
    """The judge-integrity section of an audit: its figures, and, where a text is flagged, the tables
    :data:`AUDIT` (the per-run table) and :data:`AUDIT_FLAGS` (flagged texts, ``runs``
    comma-separated as ``exampp audit --flags`` writes them).

    :param result: The audit (:func:`~exampp.api.audit.audit`).
    :param runs_shown: Of more runs than this, the per-run table holds only those with a flagged
        text; the others are named in the summary.
    :param flags_shown: How many flagged texts the table holds (the first).
    """
    table = result.table
    unflagged: list[str] = []
    if len(table) > runs_shown:
        unflagged = sorted(table.loc[table["flagged"] == 0, "run"])
        table = table[table["flagged"] > 0].reset_index(drop=True)
    summary = AuditSummary(result.texts, result.thresholds, result.depth, result.pooled, result.flagged_texts,
                           len(result.flags), len(result.table), unflagged, result.method_id is not None)
    if not result.flags:
        return replace(summary, unflagged=[]), {}
    flagged = result.flagged.head(flags_shown)
    return summary, {AUDIT: table, AUDIT_FLAGS: flagged.assign(runs=flagged["runs"].map(",".join))}


def report_content(inputs: ReportInputs, *, version: str, workspace: str = ".", rel_level: float = 1,
                   chosen: int = CHOSEN, date: str | None = None, excluded: Collection[str] = ()) -> ReportContent:
    """The page's header, conclusion and tables. A table without rows is left out (the page says why).

    :param inputs: What the page reports on.
    :param version: exampp's version, as the header names it.
    :param workspace: The workspace, as the header names it.
    :param rel_level: The official grade from which a passage is relevant.
    :param chosen: How many of the best evaluations the figures draw (:data:`CHOSEN`).
    :param date: The date in the header (default: :func:`report_date`).
    :param excluded: The runs the meta-evaluation left out, named in the header.
    """
    from exampp.analysis.label_agreement import graded_confusion, kappa_table, ordinal_alpha

    meta, labels, judgments, answered, bank = inputs.meta, inputs.labels, inputs.judgments, inputs.answered, inputs.bank
    official = str(meta.official.name)
    evaluations = chosen_evaluations(meta.table, chosen)
    scores = scores_table(meta)
    order = official_order(meta.official)
    tables = {
        LEADERBOARD: leaderboard_table(scores, order, [official, *evaluations]),
        SCORES: scores,
        COMPARISON: comparison_table(scores, order, [official, *evaluations]),
        META: marked_meta(meta.table),
        GRADES: grade_histogram(inputs.grades, labels),
    }
    if meta.official_per_query is not None:
        points = per_query_points(meta, evaluations)
        if len(points):
            tables[PER_QUERY] = points
    if judgments is not None:
        tables[KAPPA] = kappa_table(labels, judgments, rel_level=rel_level).reset_index()
        tables[ALPHA] = pd.DataFrame({"labels": ["EXAM label (graded) vs official grade"],
                                      "alpha_ordinal": [ordinal_alpha(labels, judgments)]})
        if answered is not None:
            by_questions = kappa_table(answered, judgments, rel_level=rel_level).reset_index()
            tables[KAPPA_QUESTIONS] = by_questions.rename(columns={"tau": "questions"}).assign(tau=inputs.tau)[
                ["questions", "tau", *by_questions.columns[1:]]]
        graded = graded_confusion(labels, judgments)
        tables[GRADED] = pd.DataFrame(
            graded.to_numpy(), columns=[f"official {as_label(cast(float, g))}" for g in graded.columns]  # grades
        ).assign(**{"EXAM label": [as_label(g) for g in graded.index]})[
            ["EXAM label", *(f"official {as_label(cast(float, g))}" for g in graded.columns)]]
    if bank is not None:
        tables[BANK] = pd.DataFrame(list(bank.counts.items()), columns=["item", "count"])
        if bank.judged:
            tables[TOO_BROAD] = bank.too_broad[["query_id", "question_id", "text", "non_relevant", "relevant",
                                                "precision"]].head(TOO_BROAD_SHOWN)
    queries = meta.official_per_query.shape[1] if meta.official_per_query is not None else (
        max((table.shape[1] for table in meta.per_query.values()), default=0))
    interval = (f"{meta.bootstrap} draws of the queries, seed {meta.seed}, {meta.confidence:.0%} symmetric intervals"
                if meta.bootstrap else "none (no intervals)")
    systems = str(len(meta.official)) + (f" ({', '.join(sorted(excluded))} left out)" if excluded else "")
    header = {"workspace": workspace, "grading method": inputs.method_id, "official leaderboard": official,
              "systems": systems, "queries": str(queries), "evaluations": str(len(meta.table)),
              "bootstrap": interval, "exampp": version, "date": date or report_date()}
    tables = {name: table for name, table in tables.items() if len(table)}
    return ReportContent(header, official, evaluations, tables, rel_level,
                         conclusion=conclusion(tables[META], meta.confidence, len(meta.official)))


def report_date() -> str:
    """Today (ISO), or the day of ``SOURCE_DATE_EPOCH`` where set (reproducible builds' convention)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is not None:
        return datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc).date().isoformat()
    return datetime.date.today().isoformat()


def chosen_evaluations(table: pd.DataFrame, chosen: int = CHOSEN) -> list[str]:
    """The first ``chosen`` evaluations of the (sorted) meta-evaluation table, and its best EXAM-Cover
    (family ``cover``) where that is not among them.

    :param table: The meta-evaluation table.
    :param chosen: How many of the first evaluations.
    """
    ordered = sorted_meta(table)
    picked = list(ordered["evaluation"][:chosen])
    covers = list(ordered.loc[ordered["family"] == "cover", "evaluation"])
    if covers and covers[0] not in picked:
        picked.append(covers[0])
    return picked


def sorted_meta(table: pd.DataFrame) -> pd.DataFrame:
    """The meta-evaluation table best first by Kendall's τ (ties: as given).

    :param table: The meta-evaluation table.
    """
    if "kendall" not in table:
        return table.reset_index(drop=True)
    return table.sort_values("kendall", ascending=False, kind="stable", na_position="last").reset_index(drop=True)


def marked_meta(table: pd.DataFrame) -> pd.DataFrame:
    """The meta-evaluation table best first (:func:`sorted_meta`) with the column :data:`VS_BEST`:
    how each row's Kendall τ-b interval stands to the first row's.

    :param table: The meta-evaluation table.
    """
    ordered = sorted_meta(table)
    if "kendall" not in ordered or ordered.empty or pd.isna(ordered["kendall"].iloc[0]):
        return ordered.assign(**{VS_BEST: ""})
    low, high = (ordered[f"kendall_{end}"].astype(float) if f"kendall_{end}" in ordered
                 else pd.Series(np.nan, index=ordered.index) for end in ("low", "high"))
    best_low, best_high = low.iloc[0], high.iloc[0]
    compared = ordered["kendall"].notna() & low.notna() & high.notna() & np.isfinite(best_low) & np.isfinite(best_high)
    overlaps = (low <= best_high) & (high >= best_low)
    marks = np.where(compared, np.where(overlaps, "overlaps", "apart"), "")
    marks[0] = "best"
    return ordered.assign(**{VS_BEST: marks})


def conclusion(table: pd.DataFrame, confidence: float, systems: int) -> Conclusion | None:
    """The conclusion of a :func:`marked_meta` table; None where the first row has no Kendall τ-b.

    :param table: A :func:`marked_meta` table.
    :param confidence: The intervals' confidence level.
    :param systems: The number of runs compared.
    """
    if table.empty or table[VS_BEST].iloc[0] != "best":
        return None
    best = table.iloc[0]
    others = table[VS_BEST].iloc[1:]
    return Conclusion(str(best["evaluation"]), float(best["kendall"]), float(best.get("kendall_low", np.nan)),
                      float(best.get("kendall_high", np.nan)), confidence, systems,
                      [str(name) for name in table.loc[others.index[others == "overlaps"], "evaluation"]],
                      int((others == "apart").sum()), int((others == "").sum()))


def official_order(official: pd.Series) -> list[str]:
    """Runs best first on the official leaderboard (ties by name).

    :param official: The official scores, by run.
    """
    frame = pd.DataFrame({"run": official.index.astype(str), "score": official.to_numpy(float)})
    return frame.sort_values(["score", "run"], ascending=[False, True], kind="stable")["run"].tolist()


def scores_table(meta: MetaEvaluation) -> pd.DataFrame:
    """Every leaderboard of a meta-evaluation, the official one first, long: ``evaluation, run, score,
    low, high`` (low/high: the bootstrap interval, empty where none).

    :param meta: The meta-evaluation.
    """
    official = str(meta.official.name)
    low, high = official_interval(meta)
    parts = [pd.DataFrame({"evaluation": official, "run": meta.official.index.astype(str),
                           "score": meta.official.to_numpy(float), "low": low.to_numpy(float),
                           "high": high.to_numpy(float)})]
    for evaluation in meta.scores.columns:
        parts.append(pd.DataFrame({
            "evaluation": str(evaluation), "run": meta.scores.index.astype(str),
            "score": meta.scores[evaluation].to_numpy(float),
            "low": meta.low[evaluation].reindex(meta.scores.index).to_numpy(float),
            "high": meta.high[evaluation].reindex(meta.scores.index).to_numpy(float)}))
    return pd.concat(parts, ignore_index=True)


def official_interval(meta: MetaEvaluation) -> tuple[pd.Series, pd.Series]:
    """The official scores' bootstrap interval, with the meta-evaluation's draws (same ``n``, seed and
    queries: paired with the other leaderboards); NaN without bootstrap or per-query scores.

    :param meta: The meta-evaluation.
    """
    none = pd.Series(np.nan, index=meta.official.index)
    if not meta.bootstrap or meta.official_per_query is None:
        return none, none
    from exampp.analysis.statistics import bootstrap_means

    means = bootstrap_means(meta.official_per_query, n=meta.bootstrap, seed=meta.seed, confidence=meta.confidence)
    return means["low"].reindex(meta.official.index), means["high"].reindex(meta.official.index)


def leaderboard_table(scores: pd.DataFrame, order: Sequence[str], evaluations: Sequence[str]) -> pd.DataFrame:
    """One row per run: ``rank, run``, then for each evaluation its score and the columns
    ``<evaluation> low`` and ``<evaluation> high``.

    :param scores: The long scores table (:func:`scores_table`).
    :param order: The runs, in the table's order.
    :param evaluations: The evaluations, in the columns' order.
    """
    table = pd.DataFrame({"rank": np.arange(1, len(order) + 1), "run": list(order)})
    for evaluation in evaluations:
        rows = scores[scores["evaluation"] == evaluation].set_index("run").reindex(list(order))
        table[evaluation] = rows["score"].to_numpy()
        table[f"{evaluation} low"] = rows["low"].to_numpy()
        table[f"{evaluation} high"] = rows["high"].to_numpy()
    return table


def normalise(score: pd.Series, low: pd.Series, high: pd.Series) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Min-max normalisation of scores onto [0, 1], and the same affine map applied to the interval
    ends; scores that are all equal map to 0.5 (their intervals too: the map has no scale).

    :param score: The scores.
    :param low: The intervals' low ends.
    :param high: The intervals' high ends.
    """
    bottom, span = score.min(), score.max() - score.min()
    if not span > 0:
        def flat(s: pd.Series) -> pd.Series:
            return pd.Series(0.5, index=s.index).where(s.notna())

        return flat(score), flat(low), flat(high)
    return (score - bottom) / span, (low - bottom) / span, (high - bottom) / span


def comparison_table(scores: pd.DataFrame, order: Sequence[str], evaluations: Sequence[str]) -> pd.DataFrame:
    """The comparison plot's data: for each evaluation, each run with its score, interval, and their
    min-max normalisation (:func:`normalise`).

    :param scores: The long scores table (:func:`scores_table`).
    :param order: The runs, best officially first (``position`` 1).
    :param evaluations: The evaluations.
    """
    parts = []
    for evaluation in evaluations:
        rows = scores[scores["evaluation"] == evaluation].set_index("run").reindex(list(order))
        norm, norm_low, norm_high = normalise(rows["score"], rows["low"], rows["high"])
        parts.append(pd.DataFrame({
            "evaluation": evaluation, "run": list(order), "position": np.arange(1, len(order) + 1),
            "score": rows["score"].to_numpy(), "low": rows["low"].to_numpy(), "high": rows["high"].to_numpy(),
            "normalised": norm.to_numpy(), "normalised_low": norm_low.to_numpy(),
            "normalised_high": norm_high.to_numpy()}))
    return pd.concat(parts, ignore_index=True)


def per_query_points(meta: MetaEvaluation, evaluations: Sequence[str]) -> pd.DataFrame:
    """``evaluation, run, query_id, official, exam``: each (run, query) both tables score, for every
    evaluation given that has per-query scores.

    :param meta: The meta-evaluation.
    :param evaluations: The evaluations.
    """
    assert meta.official_per_query is not None  # asked for where the official scores are per query only
    official = cast(pd.Series, meta.official_per_query.stack()).rename("official")  # a column level: a Series
    parts = []
    for evaluation in evaluations:
        if evaluation not in meta.per_query:
            continue
        exam = cast(pd.Series, meta.per_query[evaluation].stack()).rename("exam")
        joined = pd.concat([official, exam], axis=1, join="inner")
        joined.index.names = ["run", "query_id"]
        parts.append(joined.reset_index().assign(evaluation=evaluation))
    columns = ["evaluation", "run", "query_id", "official", "exam"]
    if not parts:
        return pd.DataFrame(columns=columns)
    points = pd.concat(parts, ignore_index=True)[columns]
    return points.astype({"run": str, "query_id": str, "official": float, "exam": float})


def grade_histogram(grades: pd.DataFrame, labels: Qrels) -> pd.DataFrame:
    """``grade, grades, labels``: how many (passage, question) grades, and how many passages' EXAM
    labels, are at each grade level; more than :data:`HISTOGRAM_LEVELS` levels (a continuous grader)
    in :data:`HISTOGRAM_BINS` equal bins, ``grade`` then naming the bin ``[a, b)``.

    :param grades: The stored grades.
    :param labels: Their EXAM labels.
    """

    values = grades["grade"].to_numpy(float)
    best = np.array([label for docs in labels.values() for label in docs.values()], dtype=float)
    levels = np.union1d(np.unique(values), np.unique(best))
    if len(levels) <= HISTOGRAM_LEVELS:
        return pd.DataFrame({"grade": [as_label(level) for level in levels],
                             "grades": [int((values == level).sum()) for level in levels],
                             "labels": [int((best == level).sum()) for level in levels]})
    edges = np.linspace(levels[0], levels[-1], HISTOGRAM_BINS + 1)
    names = [f"[{a:.3g}, {b:.3g}" + ("]" if i == HISTOGRAM_BINS - 1 else ")")
             for i, (a, b) in enumerate(zip(edges, edges[1:]))]
    return pd.DataFrame({"grade": names, "grades": np.histogram(values, edges)[0],
                         "labels": np.histogram(best, edges)[0]})
