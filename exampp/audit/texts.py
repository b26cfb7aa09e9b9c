"""What the audit reads (:mod:`exampp.api.audit` reads the workspace): the pool's texts as each run ranks
them, or RAG answers each whole, one text per run and query; the detectors' thresholds that fit the exam;
and the warning about texts read in part.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from exampp.audit.detect import DEFAULT, NUGGET_EXAM, WINDOW, Thresholds
from exampp.audit.flags import Flag
from exampp.collection.questions import QuestionBank
from exampp.collection.runs import Run
from exampp.formats.rag_responses import Response
from exampp.pool import Pool, id_list

Pair = tuple[str, str]  # (query_id, text_id)

THRESHOLDS: dict[str, Thresholds] = {"default": DEFAULT, "nuggets": NUGGET_EXAM}
"""The detectors' thresholds by the name the output gives them: ``nuggets`` for an exam of nuggets."""


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


def pooled_rankings(runs: Mapping[str, Run], pool: Pool) -> dict[str, dict[str, list[str]]]:
    """Each run's top-``pool.depth`` per query, in rank order, keeping the texts the pool holds.

    :param runs: The runs, by name.
    :param pool: The pool.
    """
    return {name: {qid: [doc.docid for doc in run.top(qid, pool.depth) if doc.docid in pool.passages.get(qid, {})]
                   for qid in sorted(run.rankings)}
            for name, run in sorted(runs.items())}
