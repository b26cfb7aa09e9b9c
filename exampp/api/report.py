"""The report job: one HTML page about a workspace's evaluation, for people to read and print.

    report = ReportJob("out/dl19", "out/dl19/report", official_measure="nDCG@10", bootstrap=1000).run()
    report.html                 # out/dl19/report/report.html
    report.tables               # {"leaderboard.tsv": DataFrame, ...}: every table, also written as TSV

The page opens with its conclusion in words (:func:`~exampp.report.tables.conclusion`): the best evaluation, its Kendall
τ-b with its interval, and the evaluations that interval does not tell apart from it. It shows: the
leaderboards with their bootstrap intervals; the EXAM++ paper's comparison plot (systems in the
official leaderboard's order, each evaluation min-max normalised, one panel each beside the official
leaderboard); the meta-evaluation table; agreement of the EXAM labels with the official judgments (Cohen's κ);
per-query scatter plots; grade histograms; the bank diagnostics where there is a bank. For RAG
answers, where given: the nugget leaderboard of the track's assignment file, how exampp's own
nugget assignments agree with it, and the runs' citation support. Judge integrity, where there is
something to audit (the runs' pooled passages, or the answers): ``exampp audit``'s per-run table
and the texts it flags (:func:`~exampp.report.tables.audit_tables`).

A RAG track without qrels gives the official leaderboard as a file (``official``: a per-query
table such as ``exampp nuggets score --per-query`` writes) and its runs as the segmented responses
(``responses``), as ``exampp grade --responses`` graded them.

Figures are embedded in the page as PNG data URIs, so the page is one file that can be mailed or
archived alone; the same PNGs lie in ``figures/`` for pasting into a paper. Every file is written
atomically and all of them replace the old ones together: a failed run leaves the last report whole.

Errors are :class:`~exampp.errors.ExamppError` (the command line prints them as one line).
"""
from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pandas as pd

from exampp.analysis.meta_evaluation import MetaEvaluation
from exampp.api import Warn, python_warning
from exampp.defaults import DEPTH
from exampp.errors import ExamppError
from exampp.files.io import PathLike
from exampp.report.bank_review_page import BankReview
from exampp.report.content import (
    COMPARISON,
    GRADES,
    HUMAN_CALIBRATION,
    HUMAN_CHECK,
    HUMAN_ORDERINGS,
    NUGGET_AGREEMENT,
    NUGGETS,
    PAGE,
    PER_QUERY,
    SUPPORT,
    HumanSummary,
    ReportContent,
)
from exampp.report.tables import CHOSEN, ReportInputs, audit_tables, report_content
from exampp.setting_rules import CheckedSettings
from exampp.stores.layout import Workspace

if TYPE_CHECKING:
    from exampp.api.assess import HumanCheck
    from exampp.api.leaderboards import LeaderboardSource
    from exampp.formats.nugget_assignments import Answer


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


@dataclass(frozen=True)
class ReportJob(CheckedSettings):
    """``exampp report``: the report on a workspace, ``report.html``, the tables as TSV and
    ``figures/*.png`` (see the module docstring). :meth:`run` does the job.

    :param workspace: The workspace.
    :param output_dir: The folder to write to (made if missing).
    :param meta: The meta-evaluation to show; None: computed here by
        :class:`~exampp.api.meta_evaluate.MetaEvaluateJob` with the settings below.
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
    :param chosen: How many of the meta-evaluation's best evaluations the figures draw (see
        :data:`~exampp.report.tables.CHOSEN`).
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
        check* section (:class:`~exampp.api.assess.HumanCheckJob`).
    :param assess_labels: The sample's labels (default: the workspace's label store).
    :param assess_measures: The measures the sample corrects, shown beside the judge's.
    :param assess_rel_level: The human grade from which a unit is relevant.
    :param progress: Show the meta-evaluation's bar on stderr, on a terminal only.
    :raises SettingError: A setting that breaks its rule (:mod:`exampp.setting_rules`).
    """

    workspace: Workspace | PathLike = "."
    output_dir: PathLike = "report"
    meta: MetaEvaluation | None = None
    official_qrels: PathLike | None = None
    official_measure: str = "nDCG@10"
    method: str | None = None
    bootstrap: int = 1000
    irt_bootstrap: int = 50
    seed: int = 0
    depth: int = DEPTH
    exclude: Collection[str] = ()
    rel_level: float = 1
    chosen: int = CHOSEN
    date: str | None = None
    official: LeaderboardSource | None = None
    responses: PathLike | None = None
    nuggets: PathLike | None = None
    nuggets_assigned: Sequence[PathLike] = ()
    support: PathLike | None = None
    assess_sample: PathLike | None = None
    assess_labels: PathLike | None = None
    assess_measures: Sequence[str] = ("P@10",)
    assess_rel_level: float = 1.0
    progress: bool = True

    def run(self, warn: Warn = python_warning) -> Report:
        """Do the job: audit, meta-evaluate (unless :attr:`meta` is given), review the bank, and write the
        report.

        :param warn: Takes each warning line (default: a Python warning).
        """
        from exampp import __version__
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

        ws = as_workspace(self.workspace)
        stored = stored_grades(ws, self.method)
        # the RAG files first: bad input is told before the long meta-evaluation
        rag = rag_tables(self.nuggets, self.nuggets_assigned, self.support, bootstrap=self.bootstrap, seed=self.seed)
        official_path = given_or_existing(self.official_qrels, ws.official_qrels)
        audited = None  # the audit takes seconds: checked before the meta-evaluation, bad responses told early
        if self.responses is not None or ws.runs.exists() and ws.corpus.exists():
            from exampp.api.audit import audit

            audited = audit(ws, depth=self.depth, method=stored.method_id, responses=self.responses, warn=warn)
        meta = self.meta
        if meta is None:
            from exampp.api.leaderboards import QrelsMeasure
            from exampp.api.meta_evaluate import MetaEvaluateJob

            if self.official is None and official_path is None:
                raise WorkspaceError(f"{ws.official_qrels}: no official qrels to meta-evaluate against "
                                     "(give --official-qrels, or --official FILE)")
            # official_path is given where official is not (checked above)
            source = (self.official if self.official is not None
                      else QrelsMeasure(cast(PathLike, official_path), self.official_measure))
            meta = MetaEvaluateJob(ws, official=source, responses=self.responses, method=stored.method_id,
                                   bootstrap=self.bootstrap, irt_bootstrap=self.irt_bootstrap, seed=self.seed,
                                   depth=self.depth, exclude=self.exclude, progress=self.progress).run(warn=warn)
        # the labels of the passages of the runs reported on (the meta-evaluation has told what it left out)
        stored = labelled_grades(ws, stored, responses=self.responses, warn=lambda line: None)
        exam = exam_questions(ws, stored)
        inputs = ReportInputs(
            meta, stored.method_id, stored.grades, exam_labels(stored.grades, exam),
            read_qrels(official_path) if official_path is not None else None,
            _bank_review(ws, stored.method_id, official_path, self.rel_level) if ws.question_bank.exists() else None,
            answered=exam_labels(stored.grades, exam, label="count", tau=stored.default_tau), tau=stored.default_tau)
        content = report_content(inputs, version=__version__,
                                 workspace=str(Path(ws.root).resolve()),  # "." says nothing on a mailed page
                                 rel_level=self.rel_level, chosen=self.chosen, date=self.date, excluded=self.exclude)
        if rag:
            given = {"nugget assignments": self.nuggets, "citation judgments": self.support}
            content = replace(content, tables={**content.tables, **rag},
                              header={**content.header, **{k: str(v) for k, v in given.items() if v is not None}})
        if self.assess_sample is not None:
            from exampp.api.assess import HumanCheckJob

            check = HumanCheckJob(ws, sample=self.assess_sample, labels=self.assess_labels,
                                  measures=self.assess_measures, rel_level=self.assess_rel_level,
                                  method=stored.method_id, exclude=tuple(self.exclude)).run(warn=warn)
            content = replace(content, human=human_summary(check),
                              tables={**content.tables, HUMAN_CHECK: check.leaderboard,
                                      HUMAN_ORDERINGS: check.orderings, HUMAN_CALIBRATION: check.calibration})
        if audited is not None:
            summary, tables = audit_tables(audited)
            content = replace(content, audit=summary, tables={**content.tables, **tables})
        return write_report(content, self.output_dir)


def human_summary(check: HumanCheck) -> HumanSummary:
    """The section's figures of a human check.

    :param check: The human check (:class:`~exampp.api.assess.HumanCheckJob`).
    """
    return HumanSummary(check.n_pairs, check.kappa, check.estimator, check.level, len(check.orderings),
                        check.n_compared)


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


def write_report(content: ReportContent, output_dir: PathLike) -> Report:
    """Draw the figures and write the page, the TSV tables and the PNGs; every file is replaced only
    when all are written.

    :param content: The page's content (:func:`~exampp.report.tables.report_content`).
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


def _bank_review(ws: Workspace, method_id: str, official: PathLike | None, rel_level: float) -> BankReview | None:
    """The bank review of the stored method; None for direct grades (no questions to review)."""
    from exampp.api.bank_review import review_bank
    from exampp.grading.registry import stored_method

    known = stored_method(method_id)
    if known is not None and known.direct:
        return None
    return review_bank(ws, method=method_id, official=official, rel_level=rel_level, warn=lambda line: None)
