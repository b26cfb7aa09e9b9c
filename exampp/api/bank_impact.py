"""The bank impact job, ``exampp bank impact``: what a question bank change does to the EXAM
labels, to each run's EXAM-Cover and qrels measures, and to the leaderboards.

The runs are pooled and graded as ``exampp grade`` pools and grades them (the same
:class:`~exampp.api.grade.GradeJob` settings: exampp.toml's grader, depth, tau...), once against
the old bank and once against the new one, in one :meth:`~exampp.api.grade.GradeJob.open`: the
store grades only the pairs it lacks, so only the new questions' pairs are graded (and the old
bank's, where the workspace was never graded with it). Nothing but grades is written: the
workspace's qrels/exam.qrels stays as ``exampp grade`` wrote it.

The new bank is graded first and the old one last, so that the store's question ids point at
the old bank's texts afterwards (an id whose text the new bank changes is read back through the
text it was last graded with), as the workspace's other commands expect.

Errors are :class:`~exampp.errors.ExamppError` (the command line prints them as one line).
"""
from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pandas as pd

from exampp.analysis.bank_changes import (
    SIDES,
    differs,
    label_changes,
    leaderboard_changes,
    measure_scores,
    paired_scores,
    question_changes,
)
from exampp.api.grade import GradeResult
from exampp.collection.questions import QuestionBank
from exampp.collection.runs import Run
from exampp.errors import ExamppError
from exampp.files.io import PathLike


class NoImpact(ExamppError, ValueError):
    """A bank change cannot change what the grader grades (a direct grader grades query titles)."""


@dataclass(frozen=True)
class BankImpact:
    """What changes from the old bank to the new one. Tables use NaN where a side has no value
    (a query without questions there has no labels and no scores)."""

    old_bank: str
    new_bank: str
    before: GradeResult  # graded and scored against the old bank
    after: GradeResult  # against the new bank
    questions: pd.DataFrame
    """Per query: ``query_id, before, after, added, removed, changed, unchanged`` (question counts;
    ``changed``: the same id with another text)."""
    labels: pd.DataFrame
    """The pooled passages whose EXAM label changes: ``query_id, passage_id, before, after``."""
    label_counts: pd.DataFrame
    """Per query: ``query_id, passages`` (pooled on either side), ``changed`` (labels that change)."""
    scores: pd.DataFrame
    """Per score, run and query: ``score, run, query_id, before, after, delta``; scores are
    EXAM-Cover@depth and the measures on the EXAM-Qrels."""
    leaderboards: pd.DataFrame
    """Per score and run: ``score, run, before, after, delta, rank_before, rank_after, rank_change``
    (ranks 1 = best, ties share the best rank; rank_change > 0: the run moves up), best first before."""
    correlations: pd.DataFrame
    """Per score: ``score, kendall, spearman, tau_ap, n_systems``: the leaderboard after against before."""
    warnings: tuple[str, ...]
    min_grade: float | None = None  # the EXAM-Qrels are 0/1 from this label (None: graded labels)

    @property
    def graded(self) -> int:
        """(passage, question) pairs graded now, the store lacking them."""
        return self.before.summary.graded + self.after.summary.graded

    @property
    def score_names(self) -> list[str]:
        return list(dict.fromkeys(self.leaderboards["score"]))

    def changed_scores(self) -> pd.DataFrame:
        """The rows of :attr:`scores` that change (a value differs, or exists on one side only)."""
        return self.scores.loc[differs(self.scores["before"], self.scores["after"])].reset_index(drop=True)

    def summary(self) -> list[str]:
        """What changed, in a few lines: questions, grading, labels (per query where they change)."""
        q = self.questions
        moved = [f"{row.query_id}: " + ", ".join(f"{n} {what}" for n, what in
                                                 ((row.added, "added"), (row.removed, "removed"),
                                                  (row.changed, "changed")) if n)
                 for row in cast("Iterable[Any]", q.itertuples()) if row.added or row.removed or row.changed]
        counts = self.label_counts
        changed = counts[counts["changed"] > 0]
        names = self.score_names
        sides = "; ".join(f"{side}: {result.summary.pairs} pairs, {result.summary.graded} graded, "
                          f"{result.summary.reused} reused" for side, result in zip(SIDES, (self.before, self.after)))
        return [
            f"questions: {q['before'].sum()} before, {q['after'].sum()} after: {q['added'].sum()} added, "
            f"{q['removed'].sum()} removed, {q['changed'].sum()} changed, {q['unchanged'].sum()} unchanged"
            + (f" ({'; '.join(moved)})" if moved else ""),
            f"grading: {self.graded} new pairs graded ({sides})",
            f"labels: {counts['changed'].sum()} of {counts['passages'].sum()} pooled passages change label"
            + (f" ({', '.join(f'{r.query_id}: {r.changed}' for r in changed.itertuples())})" if len(changed) else ""),
            f"scores: {names[0]} counting grades >= {self.after.tau:g}; {', '.join(names[1:])} on the EXAM-Qrels ("
            + ("graded labels)" if self.min_grade is None else f"1 from label {self.min_grade:g})"),
        ]

    def as_dict(self) -> dict[str, Any]:
        """The whole report as JSON holds it (scores: the rows that change)."""
        from exampp.report.records import records

        return {"old_bank": self.old_bank, "new_bank": self.new_bank, "graded": self.graded,
                "tau": self.after.tau, "min_grade": self.min_grade, "questions": records(self.questions),
                "labels": records(self.labels), "label_counts": records(self.label_counts),
                "scores": records(self.changed_scores()), "leaderboards": records(self.leaderboards),
                "correlations": records(self.correlations), "warnings": list(self.warnings)}


def default_measures(depth: int, level: int | None) -> tuple[str, ...]:
    """nDCG@depth, and P@depth with a passage relevant from a label.

    :param depth: The cutoff.
    :param level: The label from which a passage is relevant (None: binary qrels).
    """
    return (f"nDCG@{depth}", f"P@{depth}" if level is None else f"P(rel={level})@{depth}")


def bank_impact(
    new_bank: PathLike | QuestionBank,
    *,
    old_bank: PathLike | None = None,
    runs: PathLike | Sequence[PathLike] | None = None,
    config: PathLike | None = None,
    workspace: PathLike | None = None,
    measures: Sequence[str] | None = None,
    progress: bool = False,
    **settings: Any,
) -> BankImpact:
    """Grade and score the runs against an old and a new bank, and compare (``exampp bank impact``).

    :param new_bank: The new bank: a file, or a bank already read.
    :param old_bank: The old bank (default: the bank ``exampp grade`` grades with: the config's,
        else the workspace's).
    :param runs: Run files or folders (default: the workspace's ``runs/``), as
        :meth:`exampp.api.grade.GradeJob.configure` takes them.
    :param config: The config file, as :meth:`exampp.api.grade.GradeJob.configure` takes it.
    :param workspace: The workspace, likewise.
    :param measures: Computed on the EXAM-Qrels as ``exampp grade`` writes them (graded labels, or
        0/1 at ``min_grade``); by default nDCG@depth and P@depth counting labels >= tau (>= 1 of
        binary qrels), as EXAM-Cover counts grades >= tau.
    :param progress: Show a progress bar.
    :param settings: The other settings of :meth:`exampp.api.grade.GradeJob.configure` (grader, depth,
        tau, min_grade, corpus, topics, store, strict, backend options...).
    """

    from exampp.api.grade import GradeJob
    from exampp.formats.question_bank import read_question_bank
    from exampp.scoring import parse_measures

    if runs is not None:
        settings["runs"] = tuple(str(r) for r in ([runs] if isinstance(runs, (str, os.PathLike)) else runs))
    job = GradeJob.configure(config, workspace, bank=None if old_bank is None else str(old_bank), progress=progress,
                             **settings)
    method = job.grading_method()
    if method.direct:
        raise NoImpact(f"grader {method.name!r} grades query titles, not questions: a bank change changes nothing")
    if measures is None:
        tau = job.tau if job.tau is not None else method.tau
        measures = default_measures(job.depth, None if job.min_grade is not None else math.ceil(tau))
    parse_measures(measures)  # a bad name, before anything is graded
    new = new_bank if isinstance(new_bank, QuestionBank) else read_question_bank(new_bank)
    with job.open() as opened:  # a grader of questions has an old bank there (or open() said why not)
        after = opened.grade(new)
        before = opened.grade(opened.bank)
    assert opened.bank is not None  # a grader of questions has an old bank (open() said why not otherwise)
    return compare(before, after, opened.bank, new, opened.runs, measures, min_grade=job.min_grade,
                   old_bank=str(job.bank or opened.workspace.question_bank),
                   new_bank="(given)" if isinstance(new_bank, QuestionBank) else str(new_bank))


def compare(before: GradeResult, after: GradeResult, old: QuestionBank, new: QuestionBank, runs: Mapping[str, Run],
            measures: Sequence[str], *, min_grade: float | None = None, old_bank: str = "old",
            new_bank: str = "new") -> BankImpact:
    """The impact of a bank change from the two graded results (pure: nothing is read or graded).

    :param before: The result graded with the old bank.
    :param after: The result graded with the new bank.
    :param old: The old bank.
    :param new: The new bank.
    :param runs: The runs, by name.
    :param measures: The measures computed on the EXAM-Qrels.
    :param min_grade: The qrels were made binary at this label (None: graded labels).
    :param old_bank: The old bank's name in the report.
    :param new_bank: The new bank's name in the report.
    """
    labels, counts = label_changes(before.labels, after.labels)
    scores = pd.concat([_cover_scores(before, after), measure_scores(before.qrels, after.qrels, runs, measures)],
                       ignore_index=True)
    boards, correlations = leaderboard_changes(scores)
    warnings = tuple(dict.fromkeys(before.warnings + after.warnings))
    return BankImpact(old_bank, new_bank, before, after, question_changes(old, new), labels, counts, scores, boards,
                      correlations, warnings, min_grade)


def _cover_scores(before: GradeResult, after: GradeResult) -> pd.DataFrame:
    """EXAM-Cover per run and query on both sides, as grade (and ``exampp cover``) compute it."""
    as_values = {"cover": "value"}
    return paired_scores(before.cover.rename(columns=as_values), after.cover.rename(columns=as_values),
                  f"EXAM-Cover@{before.pool.depth}")


def write_impact_tables(impact: BankImpact, folder: PathLike) -> list[str]:
    """Write ``labels.tsv`` (the labels that change), ``systems.tsv`` (the per-query scores that
    change), ``leaderboard.tsv`` (every run before and after, with ranks) and ``correlation.tsv``,
    each replaced atomically.

    :param impact: The impact (:func:`bank_impact`).
    :param folder: The folder to write to (made if missing).
    :returns: The names written.
    """

    from exampp.report.records import write_tsv

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    tables = {"labels.tsv": impact.labels, "systems.tsv": impact.changed_scores(),
              "leaderboard.tsv": impact.leaderboards, "correlation.tsv": impact.correlations}
    for name, table in tables.items():
        write_tsv(table, out / name)
    return list(tables)
