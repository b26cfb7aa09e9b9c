"""The score jobs: EXAM-Cover of runs on a workspace's grades, EXAM-Qrels from those grades, and
leaderboards of runs under ir_measures / trec_eval measures on qrels.

Errors are :class:`~exampp.errors.ExamppError` (the command line prints them as one line).
"""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from exampp.api import Warn, python_warning
from exampp.api.workspace import (
    RunsSource,
    as_workspace,
    exam_questions,
    question_facets,
    stored_grades,
    workspace_exam,
    workspace_runs,
)
from exampp.collection.io import PathLike
from exampp.collection.qrels import Qrels
from exampp.collection.runs import Ranked, RunFile, run_paths
from exampp.errors import ExamppError
from exampp.defaults import DEPTH as DEFAULT_DEPTH
from exampp.defaults import LEADERBOARD_MEASURES
from exampp.workspace import Workspace

EXAM_SOURCE = "the exam (question bank)"  # what run queries are checked against, in warnings


class NoRunLeft(ExamppError, ValueError):
    """``exclude`` names every run there is."""

    def __init__(self, runs: Sequence[str]):
        self.runs = sorted(runs)
        super().__init__(f"exclude leaves no run: it names every run read ({', '.join(self.runs)})")


@dataclass(frozen=True)
class CoverResult:
    """EXAM-Cover of each run on the grades of one stored method."""

    per_query: pd.DataFrame
    """Columns ``run, query_id, covered, total, cover`` (see :func:`exampp.scoring.exam_cover`)."""
    leaderboard: pd.DataFrame
    """Columns ``run, mean, stderr, n_queries``, best first (see :func:`exampp.scoring.summarize`)."""
    tau: float
    """The grade from which a question counts as answered: given, or the method's default."""
    depth: int
    method_id: str


def cover(
    workspace: Workspace | PathLike = ".",
    runs: RunsSource | None = None,
    *,
    method: str | None = None,
    bank: PathLike | None = None,
    tau: float | None = None,
    depth: int = DEFAULT_DEPTH,
    normalized: bool = False,
    strict: bool = False,
    warn: Warn = python_warning,
) -> CoverResult:
    """EXAM-Cover@``depth`` of ``runs`` (default: the workspace's runs/) on the workspace's grades.

    ``method``: the store's grading method (None: the only one there); ``tau`` defaults to that
    method's (4 for 0-5 self-ratings, 1 for 0/1 grades). The exam is ``bank``, else the
    workspace's bank, else the graded questions. A run query the exam lacks is left out with a
    warning, or with ``strict`` an :class:`~exampp.errors.InputError`. ``normalized``: n-EXAM.
    """
    from exampp.collection.runs import check_judged
    from exampp.scoring import exam_cover, summarize

    ws = as_workspace(workspace)
    stored = stored_grades(ws, method)
    tau = stored.default_tau if tau is None else tau
    exam = exam_questions(ws, stored, bank)
    read = workspace_runs(ws, runs)
    for line in check_judged(read, exam, EXAM_SOURCE, strict):
        warn(line)
    per_query = exam_cover(read, stored.grades, exam, tau=tau, depth=depth, normalized=normalized)
    return CoverResult(per_query, summarize(per_query), tau, depth, stored.method_id)


def export_qrels(
    workspace: Workspace | PathLike = ".",
    *,
    method: str | None = None,
    min_grade: float | None = None,
    facets: bool = False,
    bank: PathLike | None = None,
    output: PathLike | None = None,
) -> Qrels:
    """EXAM-Qrels of the workspace's grades: each graded passage labelled with its best grade over
    the query's exam questions (``bank``, else the workspace's bank, else all graded ones), or
    0/1 from ``min_grade``. ``facets``: one qrels query ``<query_id>/<facet_id>`` per facet.
    Written to ``output`` (``-``: standard output) when given."""
    from exampp.collection.qrels import write_qrels
    from exampp.scoring import exam_labels, exam_qrels, facet_labels

    ws = as_workspace(workspace)
    grades = stored_grades(ws, method).grades
    if facets:
        labels = facet_labels(grades, question_facets(ws, bank))
    else:
        labels = exam_labels(grades, workspace_exam(ws, bank))
    qrels = exam_qrels(labels, min_grade)
    if output is not None:
        write_qrels(qrels, output)
    return qrels


def measure_leaderboard(
    runs: RunsSource,
    qrels: PathLike | Qrels,
    measures: Sequence[str] = LEADERBOARD_MEASURES,
    *,
    depth: int | None = None,
    exclude: Collection[str] = (),
    per_query: bool = False,
    strict: bool = False,
    warn: Warn = python_warning,
) -> pd.DataFrame:
    """Runs under ir_measures or trec_eval measures (``nDCG@10``, ``ndcg_cut.10``...) on ``qrels``
    (a file, ``irds:<dataset-id>``, or qrels already read): columns ``run`` and one per measure,
    the mean over the qrels' queries, best first; ``per_query``: columns ``run, query_id,
    measure, value``. Run files are read one query at a time. A run query the qrels lack is
    left out with a warning, or with ``strict`` an :class:`~exampp.errors.InputError`;
    :class:`NoRunLeft` when ``exclude`` names every run."""
    from exampp.collection.qrels import read_qrels
    from exampp.collection.runs import check_judged
    from exampp.scoring import leaderboard, per_query_measures

    judged = qrels if isinstance(qrels, Mapping) else read_qrels(qrels)
    ranked = _ranked(runs)
    if per_query:
        table = per_query_measures(ranked, judged, measures, depth, exclude=exclude)
    else:
        table = leaderboard(ranked, judged, measures, depth, exclude=exclude).reset_index()
    kept = [run for run in ranked if run.name not in exclude]  # a run file's name is known once read
    if not kept:
        raise NoRunLeft([str(run.name) for run in ranked])
    for line in check_judged(kept, judged, "the qrels" if isinstance(qrels, Mapping) else qrels, strict):
        warn(line)
    return table


def _ranked(runs: RunsSource) -> list[Ranked]:
    """Runs already read as they are; run files to be read one query at a time."""
    if isinstance(runs, Mapping):
        return list(runs.values())
    return [RunFile(path) for path in run_paths(runs)]
