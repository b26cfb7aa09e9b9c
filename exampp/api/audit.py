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

from collections.abc import Collection, Mapping

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
from exampp.audit import audit_texts, long_texts
from exampp.audit.canary import canary_flags
from exampp.audit.model_check import check_flags, stored_check_grades
from exampp.audit.tables import AuditResult, corrected_cover, flag_table, flagged_texts, run_pairs
from exampp.audit.texts import (
    THRESHOLDS,
    Pair,
    answer_flags,
    answer_pool,
    answer_segments,
    exam_thresholds,
    pooled_rankings,
    window_warnings,
)
from exampp.defaults import DEPTH as DEFAULT_DEPTH
from exampp.errors import ExamppError
from exampp.files.io import PathLike
from exampp.pool import Pool
from exampp.setting_rules import check_settings
from exampp.stores.layout import Workspace


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


