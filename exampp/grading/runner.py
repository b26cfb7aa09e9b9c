"""Grading a pool against an exam, incrementally and crash-safely.

Every (passage, question) pair of the same query is a unit of work. Grades are filed in the
store by content (passage text, question text, method), so the runner asks the store which
pairs lack a grade and grades only those: re-running grades nothing, a new run brings only its
new passages, a new question only its own pairs, an edited text only the pairs it is part of.
Pairs with the same passage and question texts (e.g. one passage under two ids) are graded once.

Work is graded in chunks, longest passages first (an out-of-memory shows up at once, and
batches of similar length pad little), the pairs of one passage together. Each chunk is
committed in one transaction as soon as it is graded, so a killed process loses at most the
chunks in flight and the same command resumes. An engine (:mod:`exampp.grading.engine`) does the
grading: the grader in this process, or model replicas on Ray workers; claims, the cascade and
every commit stay here.

Several processes may grade into one store at once: each claims a chunk in the store before
grading it and skips pairs another live process has claimed, then waits for those to be
committed, so that no pair is graded twice and each process ends with every grade.

With a cascade (:mod:`exampp.grading.cascade`), a first stage scores each chunk before the grader
sees it; the pairs it rules out are stored with grade 0, marked as cascaded, and count as graded
only for a run with the same cascade (a run without it grades them).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace

import pandas as pd

from exampp.collection.grades import DIRECT_QUESTION_ID, Grade
from exampp.collection.questions import Question, QuestionBank
from exampp.collection.topics import Topic
from exampp.defaults import CHUNK as DEFAULT_CHUNK
from exampp.errors import Interrupted
from exampp.grading.base import Grader, Judgment, Pair
from exampp.grading.cascade import Cascade
from exampp.grading.engine import Engine, LocalEngine
from exampp.llm.backend import Usage
from exampp.pool import Pool
from exampp.progress import progress_bar
from exampp.setting_rules import check_setting
from exampp.stores.grade_store import GradeStore, HashedGrade, claimant

_WAIT_SECONDS = 0.5  # between looks at pairs another process is grading

Key = tuple[str, str]  # (passage text hash, question text hash): a pair's content
# A chunk as the runner commits it: the pairs sent to the grader, those the cascade ruled out (with scores).
Chunk = tuple[list[tuple[Key, Pair]], list[tuple[tuple[Key, Pair], float]]]


@dataclass(frozen=True)
class Exam:
    """The questions each query is graded against, and what had to be left out."""

    questions: dict[str, list[Question]]
    skipped_questions: int = 0  # lacking what the grader needs (answer key, choices)

    def question_ids(self) -> dict[str, list[str]]:
        return {qid: [q.question_id for q in questions] for qid, questions in self.questions.items()}


@dataclass(frozen=True)
class GradingSummary:
    method_id: str
    pairs: int  # (passage, question) pairs of the pool and exam, or as given
    graded: int  # distinct (passage text, question text) pairs graded now
    shared: int  # pairs graded now whose texts equal another pair's (one grade for both)
    reused: int  # pairs whose grade was already in the store
    seconds: float
    missing_passages: int = 0  # pooled passages without text, not graded
    skipped_questions: int = 0  # questions lacking what the grader needs
    queries_without_questions: int = 0  # pooled queries with no exam question
    concurrent: int = 0  # pairs another process graded into the store meanwhile
    cascaded: int = 0  # distinct pairs the cascade's first stage ruled out now: grade 0, no grader call
    cut: int = 0  # pairs graded now whose passage was cut to fit the judge's input
    cut_tokens: int = 0  # the tokens cut from their prompts

    @property
    def pairs_per_second(self) -> float:
        return self.graded / self.seconds if self.seconds > 0 else 0.0

    def __str__(self) -> str:
        rate = f" in {self.seconds:.1f} s ({self.pairs_per_second:.1f} pairs/s)" if self.graded else ""
        text = f"{self.pairs} pairs: {self.graded} new pairs graded{rate}, "
        if self.cascaded:
            text += f"{self.cascaded} ruled out by the cascade (grade 0; LLM calls saved), "
        text += f"{self.reused} reused from the store"
        if self.shared:
            text += f", {self.shared} shared a grade with an identical pair"
        if self.concurrent:
            text += f", {self.concurrent} graded by another process meanwhile"
        if self.cut:
            text += f", {self.cut} graded with the passage cut to fit the judge's input ({self.cut_tokens} tokens cut)"
        skipped = [(self.missing_passages, "passages without text"),
                   (self.skipped_questions, "questions lacking the grader's answer key or choices"),
                   (self.queries_without_questions, "pooled queries without questions")]
        parts = [f"{n} {what}" for n, what in skipped if n]
        return text + (f"; skipped: {', '.join(parts)}" if parts else "")


def query_texts(bank: QuestionBank | None = None, topics: Mapping[str, Topic | str] | None = None) -> dict[str, str]:
    """Each query's title where known: from the topics, else the bank's query text.

    :param bank: The question bank.
    :param topics: The topics, or query texts by query id.
    """
    titles = {qid: t if isinstance(t, str) else t.text for qid, t in (topics or {}).items()}
    for qid, text in (bank.query_texts if bank is not None else {}).items():
        titles.setdefault(qid, text)
    return titles


def build_exam(grader: Grader, bank: QuestionBank | None = None,
               topics: Mapping[str, Topic | str] | None = None) -> Exam:
    """The exam ``grader`` grades against: the bank's questions it can use, or, for a direct
    grader, one question per query whose title is known (id ``"direct"``).

    :param grader: The grader the exam is for.
    :param bank: The question bank; needed unless the grader is direct.
    :param topics: The query titles (topics, or texts by query id) a direct grader's questions take;
        the bank's query texts where a query has none.
    :raises ValueError: No bank for a grader that needs one.
    """
    if grader.direct:
        return Exam({qid: [Question(qid, DIRECT_QUESTION_ID, text)] for qid, text in query_texts(bank, topics).items()})
    if bank is None:
        raise ValueError(f"grader {grader.name!r} needs a question bank")
    questions: dict[str, list[Question]] = {}
    skipped = 0
    for qid, query_questions in bank.by_query().items():
        usable = [q for q in query_questions if grader.usable(q)]
        skipped += len(query_questions) - len(usable)
        if usable:
            questions[qid] = usable
    return Exam(questions, skipped_questions=skipped)


def build_pairs(pool: Pool, exam: Exam) -> list[Pair]:
    """Every (pooled passage, exam question) pair of the same query, in pool then exam order.

    :param pool: The pooled passages.
    :param exam: The questions per query.
    """
    return [
        Pair(qid, pid, text, question)
        for qid, texts in pool.passages.items()
        for pid, text in texts.items()
        for question in exam.questions.get(qid, ())
    ]


def grade_pool(
    pool: Pool,
    exam: Exam,
    grader: Grader,
    store: GradeStore,
    *,
    chunk_size: int = DEFAULT_CHUNK,
    progress: bool = True,
    cascade: Cascade | None = None,
    engine: Engine | None = None,
) -> GradingSummary:
    """Grade every pair of ``pool`` x ``exam`` that ``store`` lacks (see :func:`grade_pairs`); the
    summary also counts what the pool and exam left out.

    :param pool: The pooled passages.
    :param exam: The questions per query (:func:`build_exam`).
    :param grader: The grader.
    :param store: The grade store, which receives the grades chunk by chunk.
    :param chunk_size: Pairs graded between two commits to the store.
    :param progress: Show a progress bar.
    :param cascade: A first stage that rules out pairs (grade 0) before the grader sees them; none by default.
    :param engine: What grades the chunks (default: ``grader`` in this process; see :mod:`exampp.grading.engine`).
    """

    summary = grade_pairs(build_pairs(pool, exam), grader, store, chunk_size=chunk_size, progress=progress,
                          cascade=cascade, engine=engine)
    return replace(summary, missing_passages=pool.missing_count, skipped_questions=exam.skipped_questions,
                   queries_without_questions=sum(qid not in exam.questions for qid in pool.passages))


def grade_pairs(
    pairs: list[Pair],
    grader: Grader,
    store: GradeStore,
    *,
    chunk_size: int = DEFAULT_CHUNK,
    progress: bool = True,
    cascade: Cascade | None = None,
    engine: Engine | None = None,
) -> GradingSummary:
    """Grade every pair that the store lacks, committing chunk by chunk. Claims, the cascade and
    every commit stay in this process. The summary counts the pairs whose passage the judge's
    backend cut to fit its input.

    :param pairs: The pairs. They need not be a cross product (a sentence is judged against the
        segments it cites only), but a (query, passage id) or (query, question id) has one text
        throughout.
    :param grader: The grader.
    :param store: The grade store.
    :param chunk_size: Pairs graded between two commits to the store.
    :param progress: Show a progress bar.
    :param cascade: Grade only the pairs its first stage sends (it rules out the rest: grade 0).
    :param engine: What grades the chunks (default: ``grader`` in this process; see
        :mod:`exampp.grading.engine`).
    :raises ValueError: A passage or question id with two texts.
    """
    check_setting("chunk_size", chunk_size)  # a SettingError (a ValueError) with the flag's message
    start = time.perf_counter()
    method_id = grader.method.method_id
    used = replace(grader.usage or Usage())  # a copy: the backend counts on in place
    texts: dict[str, dict[str, str]] = {}
    questions: dict[tuple[str, str], str] = {}
    for pair in pairs:  # one text per id: the store files a grade under the texts' hashes
        question = pair.question
        if (texts.setdefault(pair.query_id, {}).setdefault(pair.passage_id, pair.passage) != pair.passage
                or questions.setdefault((pair.query_id, question.question_id), question.text) != question.text):
            raise ValueError(f"query {pair.query_id!r}: passage {pair.passage_id!r} or question "
                             f"{question.question_id!r} comes with two different texts")
    passage_hashes = {qid: store.register_passages(qid, passages) for qid, passages in texts.items()}
    question_hashes = store.register_questions((qid, question_id, text)
                                               for (qid, question_id), text in questions.items())
    keys = [(passage_hashes[p.query_id][p.passage_id], question_hashes[p.query_id, p.question.question_id])
            for p in pairs]
    mark = cascade.mark if cascade is not None else None
    todo = set(store.missing(method_id, keys, mark))
    # One representative pair per missing content key; the others share its grade.
    first: dict[Key, Pair] = {}
    for pair, key in zip(pairs, keys):
        if key in todo:
            first.setdefault(key, pair)
    # Longest passages first, a passage's questions together (graders that encode each text
    # once per call, like the embedding grader, then encode each passage about once).
    work = sorted(first.items(), key=lambda item: (-len(item[1].passage), item[0][0],
                                                   -len(item[1].question.text), item[0][1]))
    pending = sum(key in todo for key in keys)
    bar = progress_bar(len(work), progress, unit="pair", desc="grading")
    owner = claimant()
    engine = engine if engine is not None else LocalEngine(grader)
    graded = ruled_out = 0
    try:
        while work:
            others: list[tuple[Key, Pair]] = []  # claimed by another process
            chunks = _claimed_chunks(work, chunk_size, store, method_id, owner, cascade, others,
                                     whole_passages=grader.whole_passages)
            for (sent, excluded), judgments in engine.grade(chunks):
                _commit(store, sent, excluded, judgments, method_id, grader.name, cascade)
                graded += len(sent)
                ruled_out += len(excluded)
                if bar is not None:
                    bar.update(len(sent) + len(excluded))
            # What others claimed: wait until it is committed, or claim it once their claims lapse.
            left = set(store.missing(method_id, [key for key, _ in others], mark))
            work = [item for item in others if item[0] in left]
            if work:
                time.sleep(_WAIT_SECONDS)
    except KeyboardInterrupt:  # what the store holds now, the chunk being committed included when it made it
        lacking = set(store.missing(method_id, keys, mark))
        kept = sum(key not in lacking for key in keys)
        raise Interrupted(f"{kept:,} of {len(pairs):,} pairs graded and kept in {store.path}; "
                          "run the same command to resume") from None
    finally:
        store.release(owner)  # what this process claimed and did not grade (it was stopped)
        if bar is not None:
            bar.close()
    distinct = len(first)
    cut = (grader.usage or Usage()) - used
    return GradingSummary(
        method_id=method_id,
        pairs=len(pairs),
        graded=graded,
        concurrent=distinct - graded - ruled_out,
        shared=pending - distinct,
        reused=len(pairs) - pending,
        seconds=time.perf_counter() - start,
        cascaded=ruled_out,
        cut=cut.cut_contexts,
        cut_tokens=cut.cut_tokens,
    )


def _chunk_bounds(work: list[tuple[Key, Pair]], chunk_size: int, whole_passages: bool) -> Iterator[tuple[int, int]]:
    """(begin, end) of each chunk of ``work``: ``chunk_size`` pairs, or, with ``whole_passages``, as
    many more as finish the last passage's pairs (they are together in ``work``)."""
    begin = 0
    while begin < len(work):
        end = min(begin + chunk_size, len(work))
        while whole_passages and end < len(work) and work[end][0][0] == work[end - 1][0][0]:
            end += 1
        yield begin, end
        begin = end


def _claimed_chunks(work: list[tuple[Key, Pair]], chunk_size: int, store: GradeStore, method_id: str, owner: str,
                    cascade: Cascade | None, others: list[tuple[Key, Pair]], *,
                    whole_passages: bool = False) -> Iterator[tuple[Chunk, list[Pair]]]:
    """The chunks of ``work`` to grade, each claimed as the engine pulls it (the pairs another
    process holds go to ``others``), split by the cascade: (pairs sent, pairs ruled out with their
    scores), and the pairs the engine grades."""
    mark = cascade.mark if cascade is not None else None
    for begin, end in _chunk_bounds(work, chunk_size, whole_passages):
        chunk = work[begin:end]
        mine = set(store.claim(method_id, [key for key, _ in chunk], owner, cascade=mark))
        others += [item for item in chunk if item[0] not in mine]
        chunk = [item for item in chunk if item[0] in mine]
        if not chunk:
            continue
        sent, ruled_out = chunk, []
        if cascade is not None:
            scores = cascade.scores([pair for _, pair in chunk])
            ruled_out = [(item, score) for item, score in zip(chunk, scores) if score < cascade.threshold]
            sent = [item for item, score in zip(chunk, scores) if not score < cascade.threshold]  # NaN: the LLM decides
        yield (sent, ruled_out), [pair for _, pair in sent]


def _commit(store: GradeStore, sent: list[tuple[Key, Pair]], ruled_out: list[tuple[tuple[Key, Pair], float]],
            judgments: list[Judgment], method_id: str, grader: str, cascade: Cascade | None) -> None:
    """Commit one chunk's grades, the cascaded ones too, in one transaction."""
    if len(judgments) != len(sent):
        raise RuntimeError(f"grader {grader!r} returned {len(judgments)} judgments for {len(sent)} pairs")
    with store.batch():
        store.put_many(
            HashedGrade(Grade(p.query_id, p.passage_id, p.question.question_id, j.grade, method_id,
                              j.answer, j.probabilities), key[0], key[1])
            for (key, p), j in zip(sent, judgments)
        )
        if ruled_out:
            assert cascade is not None  # only a cascade rules pairs out
            store.put_cascaded(cascade.mark.stage, (
                (HashedGrade(Grade(p.query_id, p.passage_id, p.question.question_id, 0.0, method_id), *key), score)
                for (key, p), score in ruled_out))


def _member(pool: Pool, exam: Exam) -> Callable[[str, str, str], bool]:
    questions = {qid: set(ids) for qid, ids in exam.question_ids().items()}
    return lambda qid, pid, question_id: pid in pool.passages.get(qid, {}) and question_id in questions.get(qid, ())


def pool_grades(store: GradeStore, pool: Pool, exam: Exam, method_id: str, *,
                probabilities: bool = False) -> pd.DataFrame:
    """The store's grades of exactly the pool x exam pairs, leaving out passages and questions graded
    before but no longer pooled or asked.

    :param store: The grade store.
    :param pool: The pooled passages.
    :param exam: The questions per query.
    :param method_id: The grading method's id in the store.
    :param probabilities: With the ``probabilities`` column.
    :returns: A DataFrame as :meth:`exampp.stores.grade_store.GradeStore.grades` returns it.
    """
    frame = store.grades(method_id, query_ids=pool.passages, probabilities=probabilities)
    member = _member(pool, exam)
    keep = [member(*row) for row in zip(frame["query_id"], frame["passage_id"], frame["question_id"])]
    return frame.loc[keep].reset_index(drop=True)  # frame[[]] would drop the columns of an empty frame


def graded_without_text(store: GradeStore, pool: Pool, method_id: str) -> list[tuple[str, str]]:
    """The pooled passages left out for lack of text (:attr:`Pool.missing`) that the store holds grades
    of a method for, as (query id, passage id) in pool order: labels the qrels would lose.

    :param store: The grade store.
    :param pool: The pooled passages.
    :param method_id: The grading method's id in the store.
    """
    if not pool.missing:
        return []
    graded = store.graded_passages(method_id, pool.missing)
    return [(qid, pid) for qid, pids in pool.missing.items() for pid in pids if (qid, pid) in graded]


def pool_records(store: GradeStore, pool: Pool, exam: Exam, method_id: str) -> list[Grade]:
    """The same grades as :func:`pool_grades`, as :class:`Grade` records (with probabilities).

    :param store: The grade store.
    :param pool: The pooled passages.
    :param exam: The questions per query.
    :param method_id: The grading method's id in the store.
    """

    member = _member(pool, exam)
    return [g for g in store.records(method_id, query_ids=pool.passages)
            if member(g.query_id, g.passage_id, g.question_id)]
