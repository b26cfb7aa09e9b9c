"""Workspace services shared by the jobs: the grades of one stored method, the exam of each query,
the τ a method's grades are read at, the runs.

One workspace gives one answer: the store keeps every grade ever made (the runs' passages, the
answers graded with ``exampp grade --responses``), but EXAM labels, and everything read from them
(qrels, the meta-evaluation, the report, the bank review), cover the passages of the runs they are
about: the workspace's runs/ (or the runs a job is given), or, given ``responses``, the answers'
passages (:func:`labelled_grades`). Labels of the answers never enter the runs' qrels, whatever was
graded before, and a job says what it left out.

Errors are :class:`~exampp.errors.ExamppError` (the command line prints them as one line).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from exampp.api import Warn, python_warning
from exampp.collection.questions import QuestionBank
from exampp.collection.runs import Run
from exampp.errors import ExamppError
from exampp.files.io import PathLike
from exampp.stores.layout import Workspace

RunsSource = PathLike | Iterable[PathLike] | Mapping[str, Run]
"""Runs as the jobs take them: run files or folders (``-``: standard input), or runs already read."""


class WorkspaceError(ExamppError):
    """A workspace lacks what a job needs (no store, no grades, an ambiguous method)."""


class NothingToWrite(ExamppError, ValueError):
    """A job would write an empty output: it writes nothing instead, so that an output file keeps
    what it holds (a good qrels file is not replaced by an empty one)."""

    def __init__(self, output: PathLike, reason: str):
        where = "standard output" if str(output) == "-" else output
        super().__init__(f"{reason}: nothing written to {where}")


@dataclass(frozen=True)
class StoredGrades:
    """The grades of one grading method from a workspace's store.

    :param method_id: The method's id in the store.
    :param grades: Its grades, as :meth:`exampp.stores.grade_store.GradeStore.grades` returns them.
    """

    method_id: str
    grades: pd.DataFrame

    @property
    def default_tau(self) -> float:
        """The τ at which this method's grades count a question answered: from its grade scale, or,
        for a method unknown here (a plugin not installed, a reference prompt class), from its grades."""
        from exampp.grading.registry import default_tau

        return default_tau(self.method_id, self.grades)


def as_workspace(workspace: Workspace | PathLike) -> Workspace:
    """The workspace, given as one or as its folder.

    :param workspace: A workspace, or its folder.
    """
    return workspace if isinstance(workspace, Workspace) else Workspace.at(workspace)


def relevance_methods(method_ids: Iterable[str]) -> list[str]:
    """The method ids whose grades judge relevance: not canary grades (the audit's alone) nor a
    check's (``injection-check``), which no measure may choose.

    :param method_ids: Store method ids.
    """
    from exampp.grading.canaries import is_canary_method
    from exampp.grading.registry import stored_method

    return [m for m in method_ids if not is_canary_method(m)
            and getattr(stored_method(m), "judges_relevance", True)]  # a method unknown here judges relevance


def stored_grades(workspace: Workspace | PathLike, method: str | None = None, *,
                  probabilities: bool = False) -> StoredGrades:
    """The grades of one method in a workspace's store.

    :param workspace: The workspace.
    :param method: A store method id, or a method name (``embedding``, ``self-rating``) that names one
        of the store's methods; None: the only method in the store.
    :param probabilities: With the grades' ``probabilities`` column (see
        :meth:`exampp.stores.grade_store.GradeStore.grades`).
    :raises WorkspaceError: No store, no grades, or no single method that ``method`` names.
    """

    from exampp.grading.canaries import is_canary_query
    from exampp.stores.grade_store import GradeStore

    ws = as_workspace(workspace)
    if not ws.store.exists():
        raise WorkspaceError(f"{ws.store}: no grade store (run `exampp import` or `exampp grade` first)")
    with GradeStore(ws.store, read_only=True) as store:
        methods = relevance_methods(store.methods())
        if not methods:
            raise WorkspaceError(f"{ws.store}: the store holds no grades yet: grade first with "
                                 f"`exampp grade -w {ws.root}`, or import graded JSONL with "
                                 f"`exampp import FILE -w {ws.root}`")
        if method is None:
            if len(methods) != 1:
                raise WorkspaceError(f"{ws.store}: choose a grading method with --method "
                                     f"(have: {', '.join(methods)})")
            method = methods[0]
        elif method not in methods:
            named = [m for m in methods if m.split("|", 1)[0] == method]
            if len(named) != 1:
                what = "several methods named" if named else "no grades for method"
                raise WorkspaceError(f"{ws.store}: {what} {method!r} (have: {', '.join(named or methods)})")
            method = named[0]
        frame = store.grades(method, probabilities=probabilities)
    # The store joins grades by content: a real grade may also show under a canary's query id.
    frame = frame.loc[[not is_canary_query(qid) for qid in frame["query_id"]]].reset_index(drop=True)
    return StoredGrades(method, frame)


def given_or_existing(given: PathLike | None, default: Path) -> PathLike | None:
    """The given path, else the workspace's default file when it exists; None when neither.

    :param given: The path given, if any.
    :param default: The workspace's file.
    """
    if given is not None:
        return given
    return str(default) if default.exists() else None


def workspace_bank(workspace: Workspace | PathLike, bank: PathLike | None = None) -> QuestionBank | None:
    """A bank read, else the workspace's bank; None when there is neither.

    :param workspace: The workspace.
    :param bank: A bank file (``-`` for standard input).
    """
    from exampp.formats.question_bank import read_question_bank

    path = given_or_existing(bank, as_workspace(workspace).question_bank)
    return read_question_bank(path) if path is not None else None


def workspace_exam(workspace: Workspace | PathLike, bank: PathLike | None = None) -> dict[str, list[str]] | None:
    """Question ids per query from a bank, else from the workspace's bank; None when there is neither.

    :param workspace: The workspace.
    :param bank: A bank file (``-`` for standard input).
    """
    read = workspace_bank(workspace, bank)
    return read.question_ids() if read is not None else None


def question_facets(workspace: Workspace | PathLike, bank: PathLike | None = None) -> Mapping[str, str | None]:
    """Each question's facet id, from a bank or the workspace's bank.

    :param workspace: The workspace.
    :param bank: A bank file.
    """
    from exampp.formats.question_bank import read_question_bank

    ws = as_workspace(workspace)
    return {q.question_id: q.facet_id for q in read_question_bank(bank if bank is not None else ws.question_bank)}


def exam_questions(workspace: Workspace | PathLike, grades: StoredGrades,
                   bank: PathLike | None = None) -> dict[str, list[str]]:
    """The exam: question ids per query from a bank or the workspace's bank, else the questions the
    grades hold.

    :param workspace: The workspace.
    :param grades: The stored grades.
    :param bank: A bank file.
    """
    from exampp.scoring import questions_by_query

    return workspace_exam(workspace, bank) or questions_by_query(grades.grades)


def read_runs_source(runs: RunsSource) -> dict[str, Run]:
    """Runs keyed by name: read when given as paths, as they are when already read.

    :param runs: Run files or folders, or runs already read.
    """
    from exampp.formats.trec_run import read_runs

    return dict(runs) if isinstance(runs, Mapping) else read_runs(runs)


def workspace_runs(workspace: Workspace | PathLike, runs: RunsSource | None = None) -> dict[str, Run]:
    """Runs keyed by name.

    :param workspace: The workspace.
    :param runs: Run files or folders, or runs already read; None: the workspace's ``runs/`` folder.
    """
    return read_runs_source(runs if runs is not None else as_workspace(workspace).runs)


def ranked_grades(grades: pd.DataFrame, runs: Mapping[str, Run]) -> pd.DataFrame:
    """The rows of the grades of the passages some run ranks for their query (at any depth).

    :param grades: Grades as :meth:`exampp.stores.grade_store.GradeStore.grades` returns them.
    :param runs: The runs, by name.
    """
    from exampp.collection.runs import ranked_pairs

    ranked = ranked_pairs(runs)
    kept = [key in ranked for key in zip(grades["query_id"], grades["passage_id"])]
    return grades.loc[kept].reset_index(drop=True)


def labelled_grades(workspace: Workspace | PathLike, stored: StoredGrades, responses: PathLike | None = None,
                    warn: Warn = python_warning) -> StoredGrades:
    """Stored grades kept to the passages EXAM labels cover. A warning says how many graded passages
    were left out.

    :param workspace: The workspace.
    :param stored: The stored grades.
    :param responses: A responses file: keep the passages of its answers alone. By default the runs'
        (every graded passage but the answers' passages, :func:`exampp.segment.is_segment_id`).
    :param warn: Takes each warning line (default: a Python warning).
    """

    from exampp.segment import is_segment_id, load_responses

    grades = stored.grades
    if responses is not None:
        kept = ranked_grades(grades, load_responses(responses).runs)
        what = f"the answers of {responses}"
        out = set(zip(grades["query_id"], grades["passage_id"])) - set(zip(kept["query_id"], kept["passage_id"]))
        # named for what they are: a RAG workspace has no runs' passages to speak of
        kinds = {"other answers' passages" if is_segment_id(q, p) else "the runs' passages" for q, p in out}
        hint = " and ".join(sorted(kinds, reverse=True))
    else:
        answer = [is_segment_id(q, p) for q, p in zip(grades["query_id"], grades["passage_id"])]
        kept = grades.loc[[not a for a in answer]].reset_index(drop=True)
        what, hint = "the runs", "passages of answers graded with --responses: give --responses FILE for theirs"
    left_out = len(set(zip(grades["query_id"], grades["passage_id"]))) - len(set(zip(kept["query_id"],
                                                                                      kept["passage_id"])))
    if left_out:
        warn(f"EXAM labels of {what}: {left_out} graded passage{'s' if left_out != 1 else ''} left out ({hint})")
    return StoredGrades(stored.method_id, kept)
