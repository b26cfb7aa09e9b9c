"""The audit job: which runs' scores rest on pooled texts that game the judge.

`exampp audit` pools a workspace's runs, hands every pooled text, with its query's title and its
exam's questions, to the detectors (:func:`exampp.audit.audit_texts`), and reports per run how
many flagged texts it retrieved, by class, and what share of its pooled texts they are. Where the
workspace holds grades, each run's EXAM-Cover and rank stand beside the same with every flagged
text it retrieved graded 0: a run whose score falls there owes it to those texts. Where the store
holds canary grades of that method (``exampp grade --canaries N``), a text the judge finds to answer
several unrelated questions is flagged too (:mod:`exampp.audit.canary`).

RAG answers (``responses``, any file ``exampp grade --responses`` reads) are audited each whole, as
one text: an instruction to the judge or three copied nuggets may span the passages the grader was
given. An answer's id is its run's name (the reader allows a run one answer per query); each run
ranks its one answer per query, so no answer repeats within a ranking, but one repeated across
queries is flagged. The scores are those of the segmented answers as ``exampp grade --responses``
graded them, every passage of a flagged answer graded 0. An exam of nuggets (every question
carrying a nugget's importance, as the nugget banks and the track's files give them) is checked
with the thresholds for nuggets (:data:`exampp.audit.NUGGET_EXAM`), any other with the default.

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
    relevance_methods,
    stored_grades,
    workspace_bank,
    workspace_runs,
)
from exampp.audit import CLASSES, DEFAULT, NUGGET_EXAM, WINDOW, Flag, Thresholds, audit_texts, long_texts
from exampp.audit.canary import canary_flags
from exampp.audit.model_check import check_flags, stored_check_grades
from exampp.collection.questions import QuestionBank
from exampp.collection.runs import Run
from exampp.defaults import DEPTH as DEFAULT_DEPTH
from exampp.errors import ExamppError
from exampp.files.io import PathLike
from exampp.formats.rag_responses import Response
from exampp.pool import Pool, id_list
from exampp.setting_rules import check_settings
from exampp.stores.layout import Workspace

Pair = tuple[str, str]  # (query_id, text_id)

THRESHOLDS: dict[str, Thresholds] = {"default": DEFAULT, "nuggets": NUGGET_EXAM}
"""The detectors' thresholds by the name the output gives them: ``nuggets`` for an exam of nuggets."""

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
    texts: str = "passages"
    """What was audited: ``passages`` (the pool of the runs' top-``depth``) or ``answers`` (RAG
    answers, each whole; its text id is its run)."""
    thresholds: str = "default"
    """The name (:data:`THRESHOLDS`) of the detectors' thresholds: ``nuggets`` for a nugget exam."""

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
    responses: PathLike | None = None,
    warn: Warn = python_warning,
) -> AuditResult:
    """Audit the top-``depth`` pool of the runs on the workspace's corpus, query titles (topics, else
    the bank's) and exam (``exampp audit``).

    Scores come from the store's grades: of the runs, or of the segmented answers. A workspace
    without grades gives the table without scores, unless ``method`` or ``tau`` asks for them: then
    the missing store is an error.

    :param workspace: The workspace.
    :param depth: How many of each run's top passages to pool.
    :param method: The store's grading method (None: the only method there).
    :param bank: The exam; else the workspace's bank.
    :param tau: The grade at which a question counts as answered (default: the method's).
    :param runs: The runs (default: the workspace's ``runs/``).
    :param responses: A RAG responses file: audit its answers, each whole, instead of a pool.
    :param warn: Takes each warning line (default: a Python warning).
    """

    from exampp.formats.corpus_sources import open_corpus
    from exampp.formats.rag_responses import read_responses
    from exampp.formats.topic_files import read_topics
    from exampp.formats.trec_run import check_judged
    from exampp.grading.runner import query_texts
    from exampp.pool import build_pool
    from exampp.scoring import questions_by_query
    from exampp.segment import segment_responses

    check_settings({"tau": tau, "depth": depth})
    ws = as_workspace(workspace)
    if runs is not None and responses is not None:
        raise ExamppError("audit runs or responses, not both")
    if responses is None:
        if not ws.corpus.exists():
            raise WorkspaceError(f"{ws.corpus}: no corpus: the audit reads the pooled passages' texts from it")
        read = workspace_runs(ws, runs)
        pool = build_pool(read, open_corpus(ws.corpus), depth)
        for line in pool.warnings():
            warn(line)
        audited, rankings = pool, pooled_rankings(read, pool)
    else:
        answers = read_responses(responses)
        segmented = segment_responses(answers)
        read = segmented.runs
        audited, rankings = answer_pool(answers)
    read_bank = workspace_bank(ws, bank)
    queries = query_texts(read_bank, read_topics(ws.topics) if ws.topics.exists() else None)
    exam_texts = ({qid: {q.question_id: q.text for q in questions} for qid, questions in read_bank.by_query().items()}
                  if read_bank is not None else {})
    thresholds = exam_thresholds(read_bank)
    flags = audit_texts(audited.passages, queries, exam_texts, rankings, thresholds=THRESHOLDS[thresholds])
    for line in window_warnings(long_texts(audited.passages)):
        warn(line)
    texts = "passages" if responses is None else "answers"
    stored = _grades(ws, method, tau)
    # the store's flags are of the graded texts: the pool, or the passages of the segmented answers
    graded = audited if responses is None else build_pool(read, segmented.corpus, depth)
    from_store = check_flags(stored_check_grades(ws.store, graded.passages))
    if stored is not None:
        tau = stored.default_tau if tau is None else tau
        # the exam once read (``bank`` may be standard input): the bank's questions, else the graded ones
        exam = read_bank.question_ids() if read_bank is not None else questions_by_query(stored.grades)
        from_store += canary_flags(_canary_grades(ws, stored.method_id, graded, exam), tau)
    flags = sorted(flags + (from_store if responses is None else answer_flags(from_store, read)),
                   key=lambda f: (f.query_id, f.text_id, f.kind, f.run or "", f.other or ""))
    table = flag_table(rankings, flags)
    if stored is None:
        return AuditResult(table, flagged_texts(flags, audited), flags, len(audited), depth, None, None, texts,
                           thresholds)
    if responses is None:
        zeroed = {name: run_pairs(flags, name) for name in read}
    else:  # every passage of a flagged answer, for its run
        zeroed = {name: answer_segments(run_pairs(flags, name), read, name) for name in read}
    for line in check_judged(read, exam, EXAM_SOURCE):
        warn(line)
    assert tau is not None  # the store's default where not given
    scores = corrected_cover(read, stored.grades, exam, zeroed, tau=tau, depth=depth)
    table = table.merge(scores, on="run").sort_values(["rank", "run"], kind="stable").reset_index(drop=True)
    return AuditResult(table, flagged_texts(flags, audited), flags, len(audited), depth, stored.method_id, tau,
                       texts, thresholds)


def window_warnings(cut: Sequence[Pair]) -> list[str]:
    """One warning line naming the texts the detectors read only the first :data:`WINDOW`
    characters of (none when no text is that long).

    :param cut: The (query, text id) pairs of those texts.
    """
    if not cut:
        return []
    return [f"warning: {len(cut)} texts are longer than {WINDOW:,} characters; the audit read the first {WINDOW:,} "
            f"of each: {id_list(cut)}"]


def exam_thresholds(bank: QuestionBank | None) -> str:
    """Which :data:`THRESHOLDS` fit an exam: ``nuggets`` for an exam of nuggets, ``default`` for any
    other exam, and for none.

    :param bank: The exam. It is one of nuggets when every question carries a nugget's importance
        (``info["importance"]`` vital or okay, as the nugget banks and the track's assignment files
        are read).
    """
    from exampp.formats.nugget_assignments import IMPORTANCE

    questions = list(bank.enabled()) if bank is not None else []
    nuggets = bool(questions) and all((q.info or {}).get("importance") in IMPORTANCE for q in questions)
    return "nuggets" if nuggets else "default"


def answer_pool(answers: Sequence[Response]) -> tuple[Pool, dict[str, dict[str, list[str]]]]:
    """RAG answers as a pool of whole texts: per query, each answer under its run's name (a run
    answers a query once), its run its one contributor; and each run's one-answer rankings.

    :param answers: The responses.
    """
    texts: dict[str, dict[str, str]] = {}
    rankings: dict[str, dict[str, list[str]]] = {}
    for answer in sorted(answers, key=lambda a: (a.query_id, a.run_id)):
        texts.setdefault(answer.query_id, {})[answer.run_id] = answer.text
        rankings.setdefault(answer.run_id, {})[answer.query_id] = [answer.run_id]
    contributors: dict[str, dict[str, tuple[str, ...]]] = {qid: {run: (run,) for run in by_run}
                                                           for qid, by_run in texts.items()}
    return Pool(None, texts, contributors, {}), {run: rankings[run] for run in sorted(rankings)}


def answer_flags(flags: Sequence[Flag], segmented: Mapping[str, Run]) -> list[Flag]:
    """Flags of the passages segmented from answers, each as a flag of its answer (text id: the run),
    its evidence naming the passage.

    :param flags: The passages' flags.
    :param segmented: Run -> its answers' passages, in order.
    """
    where = {(qid, doc.docid): (name, position) for name, run in segmented.items()
             for qid, docs in run.rankings.items() for position, doc in enumerate(docs, start=1)}
    lifted = []
    for flag in flags:
        name, position = where[flag.query_id, flag.text_id]
        lifted.append(Flag(flag.kind, flag.query_id, name, f"passage {position}: {flag.evidence}", flag.strength,
                           other=flag.other))
    return lifted


def answer_segments(pairs: Collection[Pair], segmented: Mapping[str, Run], run: str) -> set[Pair]:
    """The (query, passage) pairs of every passage of a run's answers among the flagged ones.

    :param pairs: Flagged (query, answer) pairs (an answer's id is its run).
    :param segmented: Run -> its answers' passages, in order.
    :param run: The run.
    """
    rankings = segmented[run].rankings
    return {(qid, doc.docid) for qid, text_id in pairs if text_id == run for doc in rankings.get(qid, ())}


def _grades(ws: Workspace, method: str | None, tau: float | None) -> StoredGrades | None:
    """The grades the scores come from; None when the workspace holds none and none were asked for."""
    from exampp.stores.grade_store import GradeStore

    if method is None and tau is None:
        if not ws.store.exists():
            return None
        with GradeStore(ws.store, read_only=True) as store:
            if not relevance_methods(store.methods()):  # none, or only an injection check's
                return None
    return stored_grades(ws, method)


def _canary_grades(ws: Workspace, method_id: str, pool: Pool,
                   exam: Mapping[str, Collection[str]]) -> dict[Pair, dict[str, float]]:
    """The canary grades of ``method_id``'s grader (``exampp grade --canaries``) of the pooled texts,
    per (query, text): canary question id -> grade. A question of the query's own exam is no canary
    (the store joins grades by content: a text pooled for two queries shows one's grades under both)."""
    from exampp.grading.canaries import canary_method_id, canary_query_id, pooled_query_id
    from exampp.stores.grade_store import GradeStore

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
    """Each run's top-``pool.depth`` per query, in rank order, keeping the texts the pool holds.

    :param runs: The runs, by name.
    :param pool: The pool.
    """
    return {name: {qid: [doc.docid for doc in run.top(qid, pool.depth) if doc.docid in pool.passages.get(qid, {})]
                   for qid in sorted(run.rankings)}
            for name, run in sorted(runs.items())}


def run_pairs(flags: Sequence[Flag], run: str, kinds: Collection[str] = CLASSES) -> set[Pair]:
    """The (query, text) pairs flagged that count against a run: a flag of the text counts wherever
    it is ranked; a flag of one ranking only against that run.

    :param flags: The flags.
    :param run: The run.
    :param kinds: The flag classes that count.
    """
    return {(f.query_id, f.text_id) for f in flags if f.kind in kinds and f.run in (None, run)}


def flag_table(rankings: Mapping[str, Mapping[str, Sequence[str]]], flags: Sequence[Flag]) -> pd.DataFrame:
    """Per run (in name order): the flagged texts among its ranked ones, per class and in all,
    its ranked texts (``pooled``) and the flagged share of them (0 for a run with none).

    :param rankings: Each run's ranked text ids per query (:func:`pooled_rankings`).
    :param flags: The flags.
    """
    rows = []
    for name in sorted(rankings):
        ranked = {(qid, tid) for qid, ids in rankings[name].items() for tid in ids}
        counts = [len(ranked & run_pairs(flags, name, (kind,))) for kind in CLASSES]
        flagged = len(ranked & run_pairs(flags, name))
        rows.append((name, *counts, flagged, len(ranked), flagged / len(ranked) if ranked else 0.0))
    return pd.DataFrame(rows, columns=["run", *CLASSES, "flagged", "pooled", "share"])


def zero_flagged(grades: pd.DataFrame, pairs: Collection[Pair]) -> pd.DataFrame:
    """The grades with every grade of some (query_id, passage_id) pairs set to 0.

    :param grades: The grades.
    :param pairs: The (query_id, passage_id) pairs.
    """
    if not pairs:
        return grades
    keys = pd.MultiIndex.from_frame(grades[["query_id", "passage_id"]])
    zeroed = grades.copy()
    zeroed.loc[keys.isin(list(pairs)), "grade"] = 0.0
    return zeroed


def corrected_cover(runs: Mapping[str, Run], grades: pd.DataFrame, exam: Mapping[str, Collection[str]],
                    flagged: Mapping[str, Collection[Pair]], *, tau: float, depth: int) -> pd.DataFrame:
    """Per run: EXAM-Cover@``depth`` and its rank on the grades, the same with the run's flagged pairs
    graded 0 (each run on its own pairs: a within-run flag zeroes that run's copy only), and the
    change. Columns ``run`` and :data:`SCORE_COLUMNS`.

    :param runs: The runs, by name.
    :param grades: The grades.
    :param exam: Each query's question ids.
    :param flagged: Each run's flagged (query, passage) pairs.
    :param tau: The grade at which a question counts as answered.
    :param depth: How many of each run's top passages count.
    """
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
    against (the pool's contributors of the text, or the run of a within-run flag).

    :param flags: The flags.
    :param pool: The pool.
    """

    rows = [(f.query_id, f.text_id, f.kind,
             (f.run,) if f.run is not None else pool.contributors.get(f.query_id, {}).get(f.text_id, ()),
             f.evidence, f.strength, f.other)
            for f in flags]
    table = pd.DataFrame(rows, columns=FLAG_COLUMNS)
    return table.sort_values(["query_id", "text_id", "kind"], kind="stable").reset_index(drop=True)
