"""The report job: one HTML page about a workspace's evaluation, for people to read and print.

    report = build_report("out/dl19", "out/dl19/report", official_measure="nDCG@10", bootstrap=1000)
    report.html                 # out/dl19/report/report.html
    report.tables               # {"leaderboard.tsv": DataFrame, ...}: every table, also written as TSV

The page opens with its conclusion in words (:func:`conclusion`): the best evaluation, its Kendall
τ-b with its interval, and the evaluations that interval does not tell apart from it. It shows: the
leaderboards with their bootstrap intervals; the EXAM++ paper's comparison plot (systems in the
official leaderboard's order, each evaluation min-max normalised, one panel each beside the official
leaderboard); the meta-evaluation table; agreement of the EXAM labels with the official judgments (Cohen's κ);
per-query scatter plots; grade histograms; the bank diagnostics where there is a bank. For RAG
answers, where given: the nugget leaderboard of the track's assignment file, how exampp's own
nugget assignments agree with it, and the runs' citation support. Judge integrity, where there is
something to audit (the runs' pooled passages, or the answers): ``exampp audit``'s per-run table
and the texts it flags (:func:`audit_tables`).

A RAG track without qrels gives the official leaderboard as a file (``official``: a per-query
table such as ``exampp nuggets score --per-query`` writes) and its runs as the segmented responses
(``responses``), as ``exampp grade --responses`` graded them.

Figures are embedded in the page as PNG data URIs, so the page is one file that can be mailed or
archived alone; the same PNGs lie in ``figures/`` for pasting into a paper. Every file is written
atomically and all of them replace the old ones together: a failed run leaves the last report whole.

Errors are :class:`~exampp.errors.ExamppError` (the command line prints them as one line).
"""
from __future__ import annotations

import datetime
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd

from exampp.api import Warn, python_warning
from exampp.collection.qrels import Qrels, as_label
from exampp.defaults import DEPTH
from exampp.errors import ExamppError
from exampp.files.io import PathLike

# The page's files and content live with the page (exampp.report.content); the job's callers import them from here.
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
    PAGE,
    PER_QUERY,
    SCORES,
    SUPPORT,
    TOO_BROAD,
    VS_BEST,
    AuditSummary,
    Conclusion,
    HumanSummary,
    ReportContent,
)
from exampp.stores.layout import Workspace

if TYPE_CHECKING:
    from exampp.api.assess import HumanCheck
    from exampp.api.audit import AuditResult
    from exampp.api.bank_review import BankReview
    from exampp.api.leaderboards import LeaderboardSource
    from exampp.api.meta_evaluate import MetaEvaluation
    from exampp.formats.nugget_assignments import Answer

CHOSEN = 3
"""Best evaluations of the meta-evaluation table drawn in the figures, besides the official leaderboard
and EXAM-Cover."""
TOO_BROAD_SHOWN = 10  # rows of the bank review's too-broad table on the page (`exampp bank review` has all)
HISTOGRAM_LEVELS = 20  # more distinct grades than this (a continuous grader) are binned
HISTOGRAM_BINS = 10

AUDIT_RUNS_SHOWN = 20  # more runs than this: those without a flagged text are named in a sentence
AUDIT_FLAGS_SHOWN = 50  # flagged texts on the page (`exampp audit --flags` lists all)


@dataclass(frozen=True)
class Report:
    """A written report.

    :param folder: The folder it was written to.
    :param html: Its page, ``report.html``.
    :param tables: TSV file name (in ``folder``) -> the table written there.
    :param figures: Figure file name -> its PNG (in ``folder/figures``).
    """

    folder: Path
    html: Path
    tables: dict[str, pd.DataFrame]
    figures: dict[str, Path]


def build_report(
    workspace: Workspace | PathLike = ".",
    output_dir: PathLike = "report",
    *,
    meta: MetaEvaluation | None = None,
    official_qrels: PathLike | None = None,
    official_measure: str = "nDCG@10",
    method: str | None = None,
    bootstrap: int = 1000,
    irt_bootstrap: int = 50,
    seed: int = 0,
    depth: int = DEPTH,
    exclude: Collection[str] = (),
    rel_level: float = 1,
    chosen: int = CHOSEN,
    date: str | None = None,
    official: LeaderboardSource | None = None,
    responses: PathLike | None = None,
    nuggets: PathLike | None = None,
    nuggets_assigned: Sequence[PathLike] = (),
    support: PathLike | None = None,
    assess_sample: PathLike | None = None,
    assess_labels: PathLike | None = None,
    assess_measures: Sequence[str] = ("P@10",),
    assess_rel_level: float = 1.0,
    progress: bool = True,
    warn: Warn = python_warning,
) -> Report:
    """Write the report on a workspace (``exampp report``): ``report.html``, the tables as TSV,
    ``figures/*.png``.

    :param workspace: The workspace.
    :param output_dir: The folder to write to (made if missing).
    :param meta: The meta-evaluation to show; None: computed here by
        :func:`~exampp.api.meta_evaluate.meta_evaluate` with the settings below.
    :param official_qrels: The official qrels (default: the workspace's ``qrels/official.qrels``).
    :param official_measure: The official leaderboard's measure on them.
    :param method: The stored grading method (None: the only one).
    :param bootstrap: The number of bootstrap resamples of the queries (the meta-evaluation's and the
        RAG tables').
    :param irt_bootstrap: IRT is refitted on this many of them.
    :param seed: The seed of the resamples.
    :param depth: Cut the runs at this depth.
    :param exclude: Runs to leave out.
    :param rel_level: The official grade from which a passage is relevant (agreement, bank review).
    :param chosen: How many of the meta-evaluation's best evaluations the figures draw (see :data:`CHOSEN`).
    :param date: The date in the header (default: the ``SOURCE_DATE_EPOCH`` environment variable's
        day where set, else today).
    :param official: The official leaderboard instead of ``official_qrels`` (which then serves only
        the agreement and the bank review).
    :param responses: A RAG responses file whose segmented answers are the runs, instead of the
        workspace's ``runs/``.
    :param nuggets: The official nugget assignment file: the RAG tables' nugget leaderboard (:func:`rag_tables`).
    :param nuggets_assigned: Nugget assignment files compared with ``nuggets``.
    :param support: A citation support judgment file: the runs' support measures.

    :param assess_sample: A human sample (``exampp assess sample``) whose labels give the *Human
        check* section (:func:`~exampp.api.assess.human_check`).
    :param assess_labels: The sample's labels (default: the workspace's label store).
    :param assess_measures: The measures the sample corrects, shown beside the judge's.
    :param assess_rel_level: The human grade from which a unit is relevant.
    :param progress: Show the meta-evaluation's bar on stderr, on a terminal only.
    :param warn: Takes each warning line (default: a Python warning).
    """

    from exampp.api.workspace import (
        WorkspaceError,
        as_workspace,
        exam_questions,
        given_or_existing,
        labelled_grades,
        stored_grades,
    )
    from exampp.formats.trec_qrels import read_qrels
    from exampp.labels import exam_labels

    ws = as_workspace(workspace)
    stored = stored_grades(ws, method)
    # the RAG files first: bad input is told before the long meta-evaluation
    rag = rag_tables(nuggets, nuggets_assigned, support, bootstrap=bootstrap, seed=seed)
    official_path = given_or_existing(official_qrels, ws.official_qrels)
    audited = None  # the audit takes seconds: checked before the meta-evaluation, bad responses told early
    if responses is not None or ws.runs.exists() and ws.corpus.exists():
        from exampp.api.audit import audit

        audited = audit(ws, depth=depth, method=stored.method_id, responses=responses, warn=warn)
    if meta is None:
        from exampp.api.leaderboards import QrelsMeasure
        from exampp.api.meta_evaluate import meta_evaluate

        if official is None and official_path is None:
            raise WorkspaceError(f"{ws.official_qrels}: no official qrels to meta-evaluate against "
                                 "(give --official-qrels, or --official FILE)")
        # official_path is given where official is not (checked above)
        source = official if official is not None else QrelsMeasure(cast(PathLike, official_path), official_measure)
        meta = meta_evaluate(ws, official=source,
                             responses=responses,
                             method=stored.method_id, bootstrap=bootstrap, irt_bootstrap=irt_bootstrap, seed=seed,
                             depth=depth, exclude=exclude, progress=progress, warn=warn)
    # the labels of the passages of the runs reported on (the meta-evaluation has told what it left out)
    stored = labelled_grades(ws, stored, responses=responses, warn=lambda line: None)
    exam = exam_questions(ws, stored)
    labels = exam_labels(stored.grades, exam)
    answered = exam_labels(stored.grades, exam, label="count", tau=stored.default_tau)
    judgments = read_qrels(official_path) if official_path is not None else None
    bank = _bank_review(ws, stored.method_id, official_path, rel_level) if ws.question_bank.exists() else None
    content = report_content(meta, stored.method_id, stored.grades, labels, judgments, bank,
                             workspace=str(Path(ws.root).resolve()),  # "." says nothing on a mailed page
                             rel_level=rel_level, chosen=chosen, date=date, answered=answered,
                             tau=stored.default_tau, excluded=exclude)
    if rag:
        given = {"nugget assignments": nuggets, "citation judgments": support}
        content = replace(content, header={**content.header, **{k: str(v) for k, v in given.items() if v is not None}},
                          tables={**content.tables, **rag})
    if assess_sample is not None:
        from exampp.api.assess import human_check

        check = human_check(ws, sample=assess_sample, labels=assess_labels, measures=assess_measures,
                            rel_level=assess_rel_level, method=stored.method_id, exclude=tuple(exclude), warn=warn)
        content = replace(content, human=human_summary(check),
                          tables={**content.tables, HUMAN_CHECK: check.leaderboard, HUMAN_ORDERINGS: check.orderings,
                                  HUMAN_CALIBRATION: check.calibration})
    if audited is not None:
        summary, tables = audit_tables(audited)
        content = replace(content, audit=summary, tables={**content.tables, **tables})
    return write_report(content, output_dir)


def human_summary(check: HumanCheck) -> HumanSummary:
    """The section's figures of a human check.

    :param check: The human check (:func:`~exampp.api.assess.human_check`).
    """
    return HumanSummary(check.n_pairs, check.kappa, check.estimator, check.level, len(check.orderings),
                        check.n_compared)


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


def rag_tables(nuggets: PathLike | None = None, assigned: Sequence[PathLike] = (), support: PathLike | None = None,
               *, bootstrap: int = 1000, seed: int = 0) -> dict[str, pd.DataFrame]:
    """The RAG section's tables, each where its input is given.

    :param nuggets: The official assignment file: :data:`NUGGETS`, its nugget leaderboard (V_strict
        with its bootstrap interval over topics, :func:`~exampp.api.nuggets.score_nuggets`).
    :param assigned: Assignment files: :data:`NUGGET_AGREEMENT`, one row per file against ``nuggets``
        (:func:`~exampp.api.nugget_agreement.assignment_agreement` on V_strict: ``n_nuggets, n_topics,
        n_runs`` and each statistic with ``_low, _high``).
    :param support: A citation-support judgment file: :data:`SUPPORT`, the runs' support measures
        (:func:`~exampp.api.support.support_scores`).
    :param bootstrap: The number of bootstrap resamples of the topics.
    :param seed: The seed of the resamples.
    :raises ExamppError: Assignments to compare without the official one.
    """
    tables: dict[str, pd.DataFrame] = {}
    if assigned and nuggets is None:
        raise ExamppError("nugget assignments to compare need the official one (--nuggets)")
    if nuggets is not None:
        from exampp.api.nuggets import score_nuggets
        from exampp.formats.nugget_assignments import read_assignments

        official = read_assignments(nuggets)
        tables[NUGGETS] = score_nuggets(official, bootstrap=bootstrap, seed=seed).leaderboard
        if assigned:
            tables[NUGGET_AGREEMENT] = pd.DataFrame([_agreement_row(path, official, bootstrap, seed)
                                                     for path in assigned])
    if support is not None:
        from exampp.api.support import support_scores

        tables[SUPPORT] = support_scores(support)
    return tables


def _agreement_row(path: PathLike, official: Sequence[Answer], bootstrap: int, seed: int) -> dict[str, object]:
    """One row of :data:`NUGGET_AGREEMENT`: the assignment file ``path`` against the official answers."""
    from exampp.api.nugget_agreement import assignment_agreement
    from exampp.report.records import table_rows

    result = assignment_agreement(path, official, measures=("V_strict",), bootstrap=bootstrap, seed=seed)
    row: dict[str, object] = {"assignment": str(path), "n_nuggets": result.n_nuggets,
                              "n_topics": len(result.topics), "n_runs": result.n_runs}
    statistics = [*table_rows(result.nuggets), *table_rows(result.runs.set_index("statistic"))]
    for statistic in statistics:
        row.update({statistic.Index: statistic.value, f"{statistic.Index}_low": statistic.low,
                    f"{statistic.Index}_high": statistic.high})
    return row


def report_content(
    meta: MetaEvaluation,
    method_id: str,
    grades: pd.DataFrame,
    labels: Qrels,
    judgments: Qrels | None = None,
    bank: BankReview | None = None,
    *,
    workspace: str = ".",
    rel_level: float = 1,
    chosen: int = CHOSEN,
    date: str | None = None,
    answered: Qrels | None = None,
    tau: float | None = None,
    excluded: Collection[str] = (),
) -> ReportContent:
    """The page's header, conclusion and tables. A table without rows is left out (the page says why).

    :param meta: The meta-evaluation.
    :param method_id: The grading method's id in the store.
    :param grades: Its stored grades.
    :param labels: Their EXAM labels.
    :param judgments: The official judgments (None: no agreement section).
    :param bank: The bank review (None: no bank section).
    :param workspace: The workspace, as the header names it.
    :param rel_level: The official grade from which a passage is relevant.
    :param chosen: How many of the best evaluations the figures draw (:data:`CHOSEN`).
    :param date: The date in the header (default: as :func:`build_report` says).
    :param answered: Each passage's number of questions answered at grade >= ``tau`` (the count
        labels), for κ by the least number of questions answered.
    :param tau: The grade at which ``answered`` counts a question answered.
    :param excluded: The runs the meta-evaluation left out, named in the header.
    """
    from exampp import __version__
    from exampp.analysis.label_agreement import graded_confusion, kappa_table, ordinal_alpha

    official = str(meta.official.name)
    evaluations = chosen_evaluations(meta.table, chosen)
    scores = scores_table(meta)
    order = official_order(meta.official)
    tables = {
        LEADERBOARD: leaderboard_table(scores, order, [official, *evaluations]),
        SCORES: scores,
        COMPARISON: comparison_table(scores, order, [official, *evaluations]),
        META: marked_meta(meta.table),
        GRADES: grade_histogram(grades, labels),
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
            tables[KAPPA_QUESTIONS] = by_questions.rename(columns={"tau": "questions"}).assign(tau=tau)[
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
    header = {"workspace": workspace, "grading method": method_id, "official leaderboard": official,
              "systems": systems, "queries": str(queries), "evaluations": str(len(meta.table)),
              "bootstrap": interval, "exampp": __version__, "date": date or report_date()}
    tables = {name: table for name, table in tables.items() if len(table)}
    return ReportContent(header, official, evaluations, tables, rel_level,
                         conclusion=conclusion(tables[META], meta.confidence, len(meta.official)))


def write_report(content: ReportContent, output_dir: PathLike) -> Report:
    """Draw the figures and write the page, the TSV tables and the PNGs; every file is replaced only
    when all are written.

    :param content: The page's content (:func:`report_content`).
    :param output_dir: The folder to write to.
    """
    from exampp.files.io import atomic_write, replace_together
    from exampp.report.figures import comparison_figure, grades_figure, png_bytes, scatter_figure
    from exampp.report.html import report_html
    from exampp.report.records import write_tsv

    tables = content.tables
    figures = {"comparison.png": png_bytes(comparison_figure(tables[COMPARISON], content.official))}
    if GRADES in tables:
        figures["grades.png"] = png_bytes(grades_figure(tables[GRADES]))
    if PER_QUERY in tables:
        figures["per-query.png"] = png_bytes(scatter_figure(tables[PER_QUERY], content.official))
    folder = Path(output_dir)
    with replace_together():
        for name, table in tables.items():
            write_tsv(table, folder / name)
        for name, png in figures.items():
            with atomic_write(folder / "figures" / name, gzipped=False) as fh:
                fh.buffer.write(png)  # binary under the text handle, nothing pending in it
        with atomic_write(folder / PAGE) as fh:
            fh.write(report_html(content, figures))
    return Report(folder, folder / PAGE, dict(tables), {name: folder / "figures" / name for name in figures})


# -- the tables (pure) -------------------------------------------------------------------------


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


def _bank_review(ws: Workspace, method_id: str, official: PathLike | None, rel_level: float) -> BankReview | None:
    """The bank review of the stored method; None for direct grades (no questions to review)."""
    from exampp.api.bank_review import review_bank
    from exampp.grading.registry import stored_method

    known = stored_method(method_id)
    if known is not None and known.direct:
        return None
    return review_bank(ws, method=method_id, official=official, rel_level=rel_level, warn=lambda line: None)
