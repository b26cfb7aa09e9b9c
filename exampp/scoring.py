"""Scores from grades: EXAM-Cover, EXAM-Qrels (labels: :mod:`exampp.labels`), and measure leaderboards.

Everything here is a pure function of in-memory data (runs, grades as a DataFrame, qrels);
reading and writing happen at the edges (CLI, importer).

Grades come as a DataFrame with at least the columns ``query_id, passage_id, question_id, grade``
(what :meth:`exampp.stores.grade_store.GradeStore.grades` returns).
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd

from exampp.collection.qrels import (
    IntentQrels,
    Qrels,
    as_label,
    check_integer_labels,
    flatten_intent_qrels,
    is_intent_qrels,
)
from exampp.collection.runs import Ranked, Restart, Run
from exampp.defaults import DEPTH as DEFAULT_DEPTH
from exampp.errors import ExamppError
from exampp.formats.trec_run import check_unique_name

# below collection, where the reader of per-query leaderboards takes it too; callers of scoring import it here
from exampp.means import exact_mean

GRADE_COLUMNS = ("query_id", "passage_id", "question_id", "grade")


def standard_error(values: Sequence[float]) -> float:
    n = len(values)
    if n < 2:
        return float("nan")
    mean = math.fsum(values) / n
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1) / n)


def check_grades(grades: pd.DataFrame) -> None:
    missing = [c for c in GRADE_COLUMNS if c not in grades.columns]
    if missing:
        raise ValueError(f"grades table lacks columns {missing}")


# --- EXAM-Qrels (the labels: exampp.labels) -------------------------------------------------------------

def exam_qrels(labels: Qrels, min_grade: float | None = None) -> Qrels:
    """Graded labels as they are, or binary.

    :param labels: EXAM labels (:func:`exampp.labels.exam_labels`).
    :param min_grade: When set, a label becomes 1 when it is >= ``min_grade``, else 0.
    """
    if min_grade is None:
        return {q: dict(docs) for q, docs in labels.items()}
    return {q: {d: int(label >= min_grade) for d, label in docs.items()} for q, docs in labels.items()}


def facet_labels(grades: pd.DataFrame, facet_of: Mapping[str, str | None]) -> Qrels:
    """EXAM labels per query facet: qrels keyed ``<query_id>/<facet_id>``, a passage's label its best grade.

    :param grades: The grades (see the module docstring).
    :param facet_of: Each question's facet id; questions without one are skipped.
    """
    check_grades(grades)
    frame = grades.assign(facet=grades["question_id"].map(facet_of))
    frame = frame[frame["facet"].notna()]
    best = frame.groupby(["query_id", "facet", "passage_id"], sort=True)["grade"].max()
    labels: Qrels = defaultdict(dict)
    for key, grade in best.items():
        qid, facet, pid = cast("tuple[str, str, str]", key)  # the groupby's three keys
        labels[f"{qid}/{facet}"][pid] = as_label(grade)
    return dict(labels)


# --- EXAM-Cover -------------------------------------------------------------------------------

def restrict_grades(grades: pd.DataFrame, questions: Mapping[str, Collection[str]] | None) -> pd.DataFrame:
    if questions is None:
        return grades
    allowed = pd.MultiIndex.from_tuples([(q, qu) for q, ids in questions.items() for qu in ids],
                                        names=["query_id", "question_id"])
    keep = pd.MultiIndex.from_frame(grades[["query_id", "question_id"]]).isin(allowed)
    return grades.loc[keep]  # not grades[keep]: an empty mask there selects no columns


def answered_questions(grades: pd.DataFrame, tau: float) -> dict[tuple[str, str], frozenset[str]]:
    """(query_id, passage_id) -> the question ids that passage answers with grade >= tau."""
    check_grades(grades)
    hits = grades[grades["grade"] >= tau]
    answered: dict[tuple[str, str], set[str]] = defaultdict(set)
    for qid, pid, question in zip(hits["query_id"].tolist(), hits["passage_id"].tolist(), hits["question_id"].tolist()):
        answered[(qid, pid)].add(question)
    return {key: frozenset(value) for key, value in answered.items()}


def questions_by_query(grades: pd.DataFrame) -> dict[str, list[str]]:
    """The question ids seen in the grades, per query (the exam when no bank is given)."""
    return {cast(str, q): sorted(ids) for q, ids in grades.groupby("query_id")["question_id"].unique().items()}


def exam_cover(
    runs: Mapping[str, Run],
    grades: pd.DataFrame,
    questions: Mapping[str, Collection[str]] | None = None,
    *,
    tau: float = 1,
    depth: int | None = DEFAULT_DEPTH,
    normalized: bool = False,
) -> pd.DataFrame:
    """Per-query EXAM-Cover: the fraction of a query's questions answered (grade >= tau) by at
    least one of the run's top-``depth`` passages.

    Every query with questions is scored for every run; a query the run returns nothing for
    scores 0.

    :param runs: The runs, by name.
    :param grades: The grades (see the module docstring).
    :param questions: Each query's question ids: the exam. By default every question graded.
    :param tau: The grade from which a question counts as answered.
    :param depth: How many of each run's top passages count (None: all).
    :param normalized: n-EXAM: the denominator is the number of questions that any pooled passage
        (top-``depth`` of any run) answers; a query where none is answered scores 0.
    :returns: Columns ``run, query_id, covered, total, cover`` (covered/total are integer counts).
    """
    check_grades(grades)
    hits = grades[grades["grade"] >= tau]
    if questions is None:
        questions = questions_by_query(grades)  # every graded question is in the exam: nothing to restrict
    else:
        hits = restrict_grades(hits, questions)
    masks = _answer_masks(hits)
    qids = sorted(questions)
    covered = {(name, qid): _covered_mask(runs[name], qid, depth, masks.get(qid, {})) for name in runs for qid in qids}
    pooled: dict[str, int] = defaultdict(int)
    if normalized:
        for (_, qid), mask in covered.items():
            pooled[qid] |= mask
    rows = []
    for name in sorted(runs):
        for qid in qids:
            total = pooled[qid].bit_count() if normalized else len(questions[qid])
            count = covered[name, qid].bit_count()
            rows.append((name, qid, count, total, count / total if total else 0.0))
    return pd.DataFrame(rows, columns=["run", "query_id", "covered", "total", "cover"])


def _answer_masks(hits: pd.DataFrame) -> dict[str, dict[str, int]]:
    """query -> passage -> the questions it answers as a bit set (bit i: the query's i-th
    question), so that a ranking's distinct answered questions are an OR and a bit count."""
    masks: dict[str, dict[str, int]] = {}
    for qid, group in hits.groupby("query_id", sort=False):
        passage_codes, passages = pd.factorize(group["passage_id"])
        question_codes, questions = pd.factorize(group["question_id"])
        answers = np.zeros((len(passages), len(questions)), dtype=bool)
        answers[passage_codes, question_codes] = True
        packed = np.packbits(answers, axis=1)
        masks[cast(str, qid)] = {passage: int.from_bytes(row.tobytes(), "big")  # grouped by query id
                                 for passage, row in zip(passages.tolist(), packed)}
    return masks


def _covered_mask(run: Run, qid: str, depth: int | None, masks: Mapping[str, int]) -> int:
    """The questions the run's top-``depth`` passages for ``qid`` answer, as a bit set."""
    covered = 0
    for doc in run.top(qid, depth):
        covered |= masks.get(doc.docid, 0)
    return covered


def summarize(per_query: pd.DataFrame, value: str = "cover") -> pd.DataFrame:
    """Mean, standard error and query count per run, best first (ties keep run-name order).

    :param per_query: A per-query table with a ``run`` column, such as :func:`exam_cover` returns.
    :param value: The column to average.
    :returns: Columns ``run, mean, stderr, n_queries``.
    """
    rows = []
    for run, group in per_query.groupby("run", sort=True):
        values = list(group[value])
        rows.append((run, exact_mean(values), standard_error(values), len(values)))
    table = pd.DataFrame(rows, columns=["run", "mean", "stderr", "n_queries"])
    return table.sort_values(["mean", "run"], ascending=[False, True], kind="stable").reset_index(drop=True)


# --- measure leaderboards (ir_measures with its pytrec_eval provider) ---------------------------

class MeasureError(ExamppError, ValueError):
    """A measure that cannot be computed: a name neither ir_measures nor trec_eval knows (the message
    suggests close names), bad parameters, or no installed provider."""


_HINT = "use ir_measures names (nDCG@10, P(rel=2)@10, AP) or trec_eval names (ndcg_cut.10, P.10, map)"


def parse_measures(names: Sequence[str]) -> list[tuple[str, Any]]:
    """``(column, ir_measures measure)`` pairs for measure names in ir_measures or trec_eval syntax.

    A name that maps to one measure keeps the name as its column (``ndcg_cut.10`` -> nDCG@10);
    a multi-valued trec_eval name gives one column per measure, named as ir_measures prints it
    (``P.5,10`` -> ``P@5``, ``P@10``). A repeated column is kept once.

    :param names: Measure names (``nDCG@20``, ``P(rel=2)@10``, ``ndcg_cut.10``, ``P.5,10``...).
    :raises MeasureError: An unknown measure (the message suggests close names).
    """
    columns: dict[str, Any] = {}
    for name in names:
        measures = _parse_measure(name)
        if len(measures) == 1:
            columns.setdefault(name, measures[0])
        else:
            for measure in measures:
                columns.setdefault(str(measure), measure)
    return list(columns.items())


def _parse_measure(name: str) -> list[Any]:
    import ir_measures

    from exampp.trec_eval.irm import close_measure_names, is_ir_measure_name, parse_ir_measure

    try:
        return [parse_ir_measure(name)]
    except ValueError as error:
        ir_error = error
    try:
        return list(ir_measures.parse_trec_measure(name))
    except ValueError:
        pass
    if is_ir_measure_name(name):  # a known measure with bad parameters, or no provider
        raise MeasureError(str(ir_error))
    close = close_measure_names(name)
    raise MeasureError(f"unknown measure {name!r}; " + (f"did you mean {' or '.join(close)}?" if close else _HINT))


def _run_values(run: Ranked, measures: Collection[Any], qrels: Qrels, intent: IntentQrels | None,
                depth: int | None, exclude: Collection[str], evaluators: dict) -> dict[tuple[Any, str], float] | None:
    """``{(measure, query_id): value}`` of one run, or None when the run is excluded (a run
    file's name is known once its first query is read). ``evaluators``: shared by the runs scored on
    these qrels (see :class:`~exampp.trec_eval.irm.IrBatches`)."""
    from exampp.trec_eval.irm import IrBatches

    batches = IrBatches(measures, qrels, intent, evaluators)
    for block in run.blocks(qrels, depth):
        if run.name in exclude:
            return None
        if isinstance(block, Restart):
            batches.clear()
        else:
            batches.add(block[0], block[1])
    batches.flush()
    return None if run.name in exclude else batches.values


def per_query_measures(
    runs: Mapping[str, Run] | Iterable[Ranked], qrels: Qrels | IntentQrels, measures: Sequence[str],
    depth: int | None = None,
    *, exclude: Collection[str] = (),
) -> pd.DataFrame:
    """Per-query values of measures named in ir_measures or trec_eval syntax (``nDCG@20``,
    ``P(rel=2)@10``, ``AP``, ``ndcg_cut.10``...; see :func:`parse_measures`).

    Queries are those of the qrels; a query the run lacks scores 0 (trec_eval ``-c``).

    :param runs: In-memory runs (by name), or run files (:class:`~exampp.formats.trec_run.RunFile`)
        read one query at a time.
    :param qrels: The judgments. Intent-aware measures (``alpha_nDCG@10``, ``ERR_IA@20``...) need
        intent qrels (:data:`~exampp.collection.qrels.IntentQrels`, e.g.
        :func:`exampp.labels.question_qrels`); given those, the other measures see each document at
        its best label over the subtopics.
    :param measures: The measure names.
    :param depth: Keep exactly each run's top-``depth`` in trec_eval order (all by default).
    :param exclude: Names of runs to leave out.
    :returns: Columns ``run, query_id, measure, value``, measure as the column :func:`parse_measures` names.
    :raises MeasureError: An unknown measure.
    """
    return _per_query(runs, qrels, parse_measures(measures), depth, exclude)


def _per_query(runs: Mapping[str, Run] | Iterable[Ranked], qrels: Qrels | IntentQrels,
               columns: list[tuple[str, Any]], depth: int | None, exclude: Collection[str]) -> pd.DataFrame:
    """:func:`per_query_measures` with the measures already parsed (``(column, measure)`` pairs)."""
    from exampp.trec_eval.irm import IR_MEASURES, IntentQrelsNeeded, is_intent_aware

    intent = qrels if is_intent_qrels(qrels) else None
    if intent is not None:
        plain = flatten_intent_qrels(intent)
    else:
        plain = cast(Qrels, qrels)
        needs = next((m for _, m in columns if is_intent_aware(m)), None)
        if needs is not None:
            raise IntentQrelsNeeded(needs)
    runs = list(runs.values() if isinstance(runs, Mapping) else runs)
    if runs and columns:  # once for every run, before any is read
        check_integer_labels(plain, IR_MEASURES)
    qids = sorted(plain)
    per_run: dict[str, dict[tuple[Any, str], float]] = {}
    seen: dict[str, Any] = {}
    evaluators: dict = {}  # ir_measures' evaluators, each reading the qrels once for every run
    for run in runs:
        values = _run_values(run, {m for _, m in columns}, plain, intent, depth, exclude, evaluators)
        if values is None:
            continue
        check_unique_name(seen, run)
        assert run.name is not None  # known once the run is read
        seen[run.name] = run
        per_run[run.name] = values
    rows = [(name, qid, column, per_run[name].get((measure, qid), 0.0))
            for name in sorted(per_run) for column, measure in columns for qid in qids]
    return pd.DataFrame(rows, columns=["run", "query_id", "measure", "value"])


def leaderboard(
    runs: Mapping[str, Run] | Iterable[Ranked], qrels: Qrels | IntentQrels, measures: Sequence[str],
    depth: int | None = None,
    *, exclude: Collection[str] = (),
) -> pd.DataFrame:
    """Mean of each measure over the qrels' queries per run: index run, one column per
    :func:`parse_measures` column, best first by the first.

    :param runs: In-memory runs (by name), or run files, as :func:`per_query_measures` takes them.
    :param qrels: The judgments; intent qrels as in :func:`per_query_measures`.
    :param measures: The measure names.
    :param depth: Keep each run's top-``depth`` only (all by default).
    :param exclude: Names of runs to leave out.
    :raises MeasureError: An unknown measure.
    """

    parsed = parse_measures(measures)
    return mean_table(_per_query(runs, qrels, parsed, depth, exclude), [column for column, _ in parsed])


def mean_table(per_query: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """The leaderboard of per-query values (columns ``run, query_id, measure, value``): index run,
    one column per measure in ``columns`` holding its :func:`exact_mean`, best first by the first."""
    table = (
        per_query.groupby(["run", "measure"], sort=False)["value"]
        .agg(lambda v: exact_mean(v))
        .unstack("measure")
    )
    table = table.reindex(columns=list(columns))  # no runs or no queries: an empty table with these columns
    table.index.name = "run"
    table.columns.name = None
    return table.sort_values(columns[0], ascending=False, kind="stable")
