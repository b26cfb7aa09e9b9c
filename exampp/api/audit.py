"""The audit job: which runs' scores rest on pooled texts that game the judge.

`exampp audit` pools a workspace's runs, hands every pooled text, with its query's title and its
exam's questions, to the detectors (:func:`exampp.audit.audit_texts`), and reports per run how
many flagged texts it retrieved, by class, and what share of its pooled texts they are. Where the
workspace holds grades, each run's EXAM-Cover and rank stand beside the same with every flagged
text it retrieved graded 0: a run whose score falls there owes it to those texts. Where the store
holds canary grades of that method (``exampp grade --canaries N``), a text the judge finds to answer
several unrelated questions is flagged too (:mod:`exampp.audit.canary`).

Errors are :class:`~exampp.errors.ExamppError` (the command line prints them as one line).
"""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from exampp.api import Warn, python_warning
from exampp.api.scores import EXAM_SOURCE
from exampp.api.workspace import (
    RunsSource,
    StoredGrades,
    WorkspaceError,
    as_workspace,
    stored_grades,
    workspace_bank,
    workspace_runs,
)
from exampp.audit import CLASSES, Flag, audit_texts
from exampp.audit.canary import canary_flags
from exampp.collection.io import PathLike
from exampp.collection.runs import Run
from exampp.defaults import DEPTH as DEFAULT_DEPTH
from exampp.pool import Pool
from exampp.settings import check_settings
from exampp.workspace import Workspace

Pair = tuple[str, str]  # (query_id, text_id)

FLAG_COLUMNS = ["query_id", "text_id", "kind", "runs", "evidence", "strength", "other"]
SCORE_COLUMNS = ["cover", "rank", "cover_corrected", "rank_corrected", "change"]


@dataclass(frozen=True)
class AuditResult:
    """What the audit of a workspace's runs found."""

    table: pd.DataFrame
    """One row per run: ``run``, the flagged texts it retrieved in its top-``depth`` per class
    (:data:`exampp.audit.CLASSES`), ``flagged`` (texts with any flag: a text may carry several
    classes), ``pooled`` (its top-``depth`` texts with a text in the corpus), ``share``
    (flagged / pooled); with grades also :data:`SCORE_COLUMNS`: EXAM-Cover@``depth`` as graded and
    its rank (1 best; tied runs share the better rank), the same with the flagged texts graded 0,
    and ``change`` (corrected - graded). Best first as graded; by run name without grades."""
    flagged: pd.DataFrame
    """One row per flag (:data:`FLAG_COLUMNS`): ``runs`` the runs it counts against (those that
    retrieved the text, or the one ranking a within-run flag is about), as a tuple."""
    flags: list[Flag]
    pooled: int
    """Pooled texts (query, text) audited."""
    depth: int
    method_id: str | None
    """The grades' method; None when the workspace holds no grades (no score columns)."""
    tau: float | None

    @property
    def flagged_texts(self) -> int:
        """Distinct (query, text) pairs with a flag."""
        return len({(f.query_id, f.text_id) for f in self.flags})


def audit(
    workspace: Workspace | PathLike = ".",
    *,
    depth: int = DEFAULT_DEPTH,
    method: str | None = None,
    bank: PathLike | None = None,
    tau: float | None = None,
    runs: RunsSource | None = None,
    warn: Warn = python_warning,
) -> AuditResult:
    """Audit the top-``depth`` pool of ``runs`` (default: the workspace's runs/) on the workspace's
    corpus, query titles (topics, else ``bank``'s) and exam (``bank``, else the workspace's bank).

    Scores come from the store's grades of ``method`` (None: the only method there) at ``tau``
    (default: the method's). A workspace without grades gives the table without scores, unless
    ``method`` or ``tau`` asks for them: then the missing store is an error.
    """
    from exampp.collection.corpus import open_corpus
    from exampp.collection.runs import check_judged
    from exampp.collection.topics import read_topics
    from exampp.grading.runner import query_texts
    from exampp.pool import build_pool
    from exampp.scoring import questions_by_query

    check_settings({"tau": tau, "depth": depth})
    ws = as_workspace(workspace)
    if not ws.corpus.exists():
        raise WorkspaceError(f"{ws.corpus}: no corpus: the audit reads the pooled passages' texts from it")
    read = workspace_runs(ws, runs)
    pool = build_pool(read, open_corpus(ws.corpus), depth)
    for line in pool.warnings():
        warn(line)
    read_bank = workspace_bank(ws, bank)
    queries = query_texts(read_bank, read_topics(ws.topics) if ws.topics.exists() else None)
    exam_texts = ({qid: {q.question_id: q.text for q in questions} for qid, questions in read_bank.by_query().items()}
                  if read_bank is not None else {})
    rankings = pooled_rankings(read, pool)
    flags = audit_texts(pool.passages, queries, exam_texts, rankings)
    stored = _grades(ws, method, tau)
    if stored is None:
        return AuditResult(flag_table(rankings, flags), flagged_texts(flags, pool), flags, len(pool), depth, None, None)
    tau = stored.default_tau if tau is None else tau
    # the exam once read (``bank`` may be standard input): the bank's questions, else the graded ones
    exam = read_bank.question_ids() if read_bank is not None else questions_by_query(stored.grades)
    flags += canary_flags(_canary_grades(ws, stored.method_id, pool, exam), tau)
    table = flag_table(rankings, flags)
    for line in check_judged(read, exam, EXAM_SOURCE):
        warn(line)
    scores = corrected_cover(read, stored.grades, exam, {name: run_pairs(flags, name) for name in read},
                             tau=tau, depth=depth)
    table = table.merge(scores, on="run").sort_values(["rank", "run"], kind="stable").reset_index(drop=True)
    return AuditResult(table, flagged_texts(flags, pool), flags, len(pool), depth, stored.method_id, tau)


def _grades(ws: Workspace, method: str | None, tau: float | None) -> StoredGrades | None:
    """The grades the scores come from; None when the workspace holds none and none were asked for."""
    from exampp.store import GradeStore

    if method is None and tau is None:
        if not ws.store.exists():
            return None
        with GradeStore(ws.store, read_only=True) as store:
            if not store.methods():
                return None
    return stored_grades(ws, method)


def _canary_grades(ws: Workspace, method_id: str, pool: Pool,
                   exam: Mapping[str, Collection[str]]) -> dict[Pair, dict[str, float]]:
    """The canary grades of ``method_id``'s grader (``exampp grade --canaries``) of the pooled texts,
    per (query, text): canary question id -> grade. A question of the query's own exam is no canary
    (the store joins grades by content: a text pooled for two queries shows one's grades under both)."""
    from exampp.grading.canaries import canary_method_id, canary_query_id, pooled_query_id
    from exampp.store import GradeStore

    with GradeStore(ws.store, read_only=True) as store:
        frame = store.grades(canary_method_id(method_id), query_ids=[canary_query_id(q) for q in pool.passages])
    grades: dict[Pair, dict[str, float]] = {}
    for filed, pid, question_id, grade in zip(frame["query_id"], frame["passage_id"], frame["question_id"],
                                              frame["grade"]):
        qid = pooled_query_id(filed)
        if pid in pool.passages[qid] and question_id not in exam.get(qid, ()):
            grades.setdefault((qid, pid), {})[question_id] = grade
    return grades


def pooled_rankings(runs: Mapping[str, Run], pool: Pool) -> dict[str, dict[str, list[str]]]:
    """Each run's top-``pool.depth`` per query, in rank order, keeping the texts the pool holds."""
    return {name: {qid: [doc.docid for doc in run.top(qid, pool.depth) if doc.docid in pool.passages.get(qid, {})]
                   for qid in sorted(run.rankings)}
            for name, run in sorted(runs.items())}


def run_pairs(flags: Sequence[Flag], run: str, kinds: Collection[str] = CLASSES) -> set[Pair]:
    """The (query, text) pairs flagged with a class of ``kinds`` that count against ``run``: a flag
    of the text counts wherever it is ranked; a flag of one ranking only against that run."""
    return {(f.query_id, f.text_id) for f in flags if f.kind in kinds and f.run in (None, run)}


def flag_table(rankings: Mapping[str, Mapping[str, Sequence[str]]], flags: Sequence[Flag]) -> pd.DataFrame:
    """Per run (in name order): the flagged texts among its ranked ones, per class and in all,
    its ranked texts (``pooled``) and the flagged share of them (0 for a run with none)."""
    rows = []
    for name in sorted(rankings):
        ranked = {(qid, tid) for qid, ids in rankings[name].items() for tid in ids}
        counts = [len(ranked & run_pairs(flags, name, (kind,))) for kind in CLASSES]
        flagged = len(ranked & run_pairs(flags, name))
        rows.append((name, *counts, flagged, len(ranked), flagged / len(ranked) if ranked else 0.0))
    return pd.DataFrame(rows, columns=["run", *CLASSES, "flagged", "pooled", "share"])


def zero_flagged(grades: pd.DataFrame, pairs: Collection[Pair]) -> pd.DataFrame:
    """``grades`` with every grade of a (query_id, passage_id) in ``pairs`` set to 0."""
    if not pairs:
        return grades
    keys = pd.MultiIndex.from_frame(grades[["query_id", "passage_id"]])
    zeroed = grades.copy()
    zeroed.loc[keys.isin(list(pairs)), "grade"] = 0.0
    return zeroed


def corrected_cover(runs: Mapping[str, Run], grades: pd.DataFrame, exam: Mapping[str, Collection[str]],
                    flagged: Mapping[str, Collection[Pair]], *, tau: float, depth: int) -> pd.DataFrame:
    """Per run: EXAM-Cover@``depth`` and its rank on ``grades``, the same on ``grades`` with the
    pairs ``flagged[run]`` graded 0 (each run on its own pairs: a within-run flag zeroes that run's
    copy only), and the change. Columns ``run`` and :data:`SCORE_COLUMNS`."""
    from exampp.scoring import exam_cover, summarize

    graded = _means(summarize(exam_cover(runs, grades, exam, tau=tau, depth=depth)))
    by_pairs: dict[frozenset[Pair], list[str]] = {}  # runs sharing their flagged pairs are scored together
    for name in runs:
        by_pairs.setdefault(frozenset(flagged.get(name, ())), []).append(name)
    corrected = pd.concat([exam_cover({name: runs[name] for name in names}, zero_flagged(grades, pairs), exam,
                                      tau=tau, depth=depth) for pairs, names in by_pairs.items()])
    fixed = _means(summarize(corrected))
    table = pd.DataFrame({"cover": graded, "rank": _ranks(graded),
                          "cover_corrected": fixed, "rank_corrected": _ranks(fixed)})
    table["change"] = table["cover_corrected"] - table["cover"]
    return table.rename_axis("run").reset_index()


def _means(board: pd.DataFrame) -> pd.Series:
    return board.set_index("run")["mean"]


def _ranks(means: pd.Series) -> pd.Series:
    """1 for the best mean; tied runs share the better rank (1, 2, 2, 4)."""
    return means.rank(method="min", ascending=False).astype(int)


def flagged_texts(flags: Sequence[Flag], pool: Pool) -> pd.DataFrame:
    """One row per flag, by query, text and class: :data:`FLAG_COLUMNS`, ``runs`` those it counts
    against (the pool's contributors of the text, or the run of a within-run flag)."""
    rows = [(f.query_id, f.text_id, f.kind,
             (f.run,) if f.run is not None else pool.contributors.get(f.query_id, {}).get(f.text_id, ()),
             f.evidence, f.strength, f.other)
            for f in flags]
    table = pd.DataFrame(rows, columns=FLAG_COLUMNS)
    return table.sort_values(["query_id", "text_id", "kind"], kind="stable").reset_index(drop=True)
