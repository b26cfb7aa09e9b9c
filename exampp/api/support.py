"""Citation support of RAG answers as Python calls: ``exampp support measures``, ``assess`` and ``agree``.

:func:`support_scores` scores a citation-judgment file per answer or per run
(:mod:`exampp.analysis.support_scores`). :func:`assess_support` judges every (sentence, cited segment)
pair of a file with an LLM (:class:`~exampp.grading.methods.citation_support.CitationSupport`)
into a grade store, resumably, and writes the file again with the model's support.
:func:`support_agreement` compares two judgment files: on the citations both judged, κ and
Krippendorff's α; on the runs both have, the correlation of the leaderboards they induce.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd

from exampp import defaults
from exampp.analysis.correlation import Correlation, correlate
from exampp.analysis.support_scores import per_answer, run_scores
from exampp.collection.corpus import Corpus
from exampp.collection.questions import Question, question_id_for
from exampp.errors import ExamppError
from exampp.files.io import PathLike
from exampp.formats.citations import CitedAnswer, read_citations, write_citations
from exampp.grading.base import Pair
from exampp.grading.runner import GradingSummary
from exampp.llm.backend import BackendSpec, Usage
from exampp.stores.grade_store import GradeStore

GRADES = (0, 1, 2)  # the support scale: none, partial, full
LEADERBOARD_MEASURES = ("weighted_precision", "weighted_recall")
Key = tuple[str, str, int, str]  # (topic, run, sentence id, segment id): one judged citation


def support_scores(path: PathLike, *, per_query: bool = False) -> pd.DataFrame:
    """The support measures of a judgment file (``exampp support measures``).

    :param path: The citation-support judgment file.
    :param per_query: One row per answer, instead of per run (the mean over its topics, best
        weighted precision first).
    """
    answers = per_answer(read_citations(path, texts=False))  # the measures read only the citations
    return answers if per_query else run_scores(answers)


# --- assess: an LLM judges the pairs ---------------------------------------------------------------

class NothingToAssess(ExamppError, ValueError):
    """No citation whose segment and sentence have a text: no pair to judge."""


@dataclass(frozen=True)
class Assessment:
    """What ``exampp support assess`` did: the answers with the model's support, written to ``output``."""

    answers: list[CitedAnswer]
    summary: GradingSummary
    citations: int  # citations in the file
    missing: tuple[str, ...]  # segment ids the corpus lacks (their citations are left unjudged)
    untexted: int  # citations of sentences without text, left unjudged
    unread: int  # judged pairs whose model gave no label after every attempt (graded 0)
    usage: Usage | None
    output: Path


def support_pairs(answers: Iterable[CitedAnswer], texts: dict[str, str]) -> list[Pair]:
    """One pair per citation whose segment and sentence have a text: the segment as the passage, the
    sentence as the question (id ``question_id_for(topic, text)``).

    :param answers: The answers with their citations.
    :param texts: The cited segments' texts, by id.
    """
    pairs = []
    for answer in answers:
        for sentence in answer.sentences:
            if not sentence.text.strip():
                continue
            question = Question(answer.topic_id, question_id_for(answer.topic_id, sentence.text), sentence.text)
            pairs += [Pair(answer.topic_id, c.reference, texts[c.reference], question)
                      for c in sentence.citations if c.reference in texts]
    return pairs


def assess_support(judgments: PathLike, corpus: Corpus, output: PathLike, backend: BackendSpec, store: PathLike, *,
                   chunk_size: int = defaults.CHUNK, progress: bool = True) -> Assessment:
    """Judge every (sentence, cited segment) pair with the ``citation-support`` method, and write the
    answers with the model's support (the predictions file's spelling; ``exampp support assess``).
    Citations whose segment the corpus lacks, or whose sentence has no text, are written unjudged (-1).

    :param judgments: A citation-support judgment file; its support is ignored.
    :param corpus: The cited segments' texts.
    :param output: The file to write.
    :param backend: The judge's backend.
    :param store: The grade store: only the pairs it lacks are graded.
    :param chunk_size: Pairs graded between two commits to the store.
    :param progress: Show a progress bar.
    """
    from exampp.grading.methods.citation_support import UNREAD, CitationSupport
    from exampp.grading.registry import check_backend, make_grader
    from exampp.grading.runner import grade_pairs

    method = CitationSupport()
    check_backend(method, backend.name)
    answers = read_citations(judgments)  # input errors before any model or server
    cited = dict.fromkeys(c.reference for a in answers for s in a.sentences for c in s.citations)
    texts = corpus.get_many(cited)
    pairs = support_pairs(answers, texts)
    if not pairs:
        raise NothingToAssess(f"nothing to judge in {judgments}: no cited segment has a text in the corpus "
                              f"({len(cited)} segments cited)")
    with GradeStore(store) as grades, make_grader(method, backend) as grader:
        summary = grade_pairs(pairs, grader, grades, chunk_size=chunk_size, progress=progress)
        stored = {(g.query_id, g.passage_id, g.question_id): g
                  for g in grades.records(summary.method_id, query_ids={p.query_id for p in pairs})}
    judged = [_judged(answer, stored) for answer in answers]
    write_citations(judged, output)
    wanted = {(p.query_id, p.passage_id, p.question.question_id) for p in pairs}
    unread = sum(1 for key in wanted if (stored[key].answer or "").startswith(UNREAD))
    citations = sum(len(s.citations) for a in answers for s in a.sentences)
    untexted = sum(len(s.citations) for a in answers for s in a.sentences if not s.text.strip())
    return Assessment(judged, summary, citations, tuple(r for r in cited if r not in texts), untexted, unread,
                      grader.usage, Path(output))


def _judged(answer: CitedAnswer, stored: dict) -> CitedAnswer:
    """``answer`` with each citation's support the store's grade (None where it has none)."""
    sentences = []
    for sentence in answer.sentences:
        question_id = question_id_for(answer.topic_id, sentence.text)
        citations = []
        for citation in sentence.citations:
            grade = stored.get((answer.topic_id, citation.reference, question_id)) if sentence.text.strip() else None
            citations.append(replace(citation, support=None if grade is None else int(grade.grade)))
        sentences.append(replace(sentence, citations=tuple(citations)))
    return replace(answer, sentences=tuple(sentences))


# --- agree: two judgment files ---------------------------------------------------------------------

@dataclass(frozen=True)
class SupportAgreement:
    """Two judgment files compared: on the citations both judged (``n``), Cohen's κ on the three
    levels and on full support against the rest, Krippendorff's α (ordinal), the confusion table
    (rows: the first file's support, columns: the second's); and the correlation of the run
    leaderboards they induce, per measure, over the runs both have, on the ``topics`` both cover
    (all of each file's topics when they share none: ``shared_topics`` empty)."""

    n: int
    kappa: float
    kappa_full: float
    alpha: float
    confusion: pd.DataFrame
    topics: tuple[int, int]  # topics in the first file, in the second
    shared_topics: tuple[str, ...]
    correlations: dict[str, Correlation]

    @property
    def leaderboard_note(self) -> str:
        """Over what the leaderboards were compared, in words."""
        if self.shared_topics:
            return f"over the {len(self.shared_topics)} topics both files cover"
        return (f"over different topics: the files share none ({self.topics[0]} and {self.topics[1]} topics); "
                "each run's measures are means over its own file's topics")


def judged_citations(answers: Iterable[CitedAnswer]) -> dict[Key, int]:
    """``{(topic, run, sentence id, segment id): support}`` of the judged citations.

    :param answers: The answers with their citations.
    """

    return {(a.topic_id, a.run_id, s.sentence_id, c.reference): c.support
            for a in answers for s in a.sentences for c in s.citations if c.support is not None}


def support_agreement(first: PathLike, second: PathLike) -> SupportAgreement:
    """Compare two judgment files (see :class:`SupportAgreement`; ``exampp support agree``).

    :param first: A citation-support judgment file.
    :param second: Another judgment file.
    """

    from exampp.analysis.label_agreement import cohen_kappa, cohen_kappa_counts, confusion
    from exampp.analysis.statistics import krippendorff_alpha

    answers_a, answers_b = read_citations(first), read_citations(second)
    judged_a, judged_b = judged_citations(answers_a), judged_citations(answers_b)
    pairs = [(judged_a[key], judged_b[key]) for key in judged_a if key in judged_b]
    kappa_full = cohen_kappa(confusion(pairs, threshold=2, rel_level=2)) if pairs else math.nan
    alpha = krippendorff_alpha(np.array(pairs, dtype=float).T, "ordinal") if pairs else math.nan
    counts = Counter(pairs)
    table = pd.DataFrame([[counts[a, b] for b in GRADES] for a in GRADES],
                         index=pd.Index(GRADES, name="first"), columns=pd.Index(GRADES, name="second"))
    topics_a = {a.topic_id for a in answers_a}
    topics_b = {a.topic_id for a in answers_b}
    shared = sorted(topics_a & topics_b)
    scores_a, scores_b = per_answer(answers_a), per_answer(answers_b)
    if shared:
        scores_a, scores_b = (s[s["query_id"].isin(shared)] for s in (scores_a, scores_b))
    board_a, board_b = run_scores(scores_a).set_index("run"), run_scores(scores_b).set_index("run")
    correlations = {m: correlate(cast("dict[str, float]", board_a[m].to_dict()),  # runs' names
                                 cast("dict[str, float]", board_b[m].to_dict())) for m in LEADERBOARD_MEASURES}
    return SupportAgreement(len(pairs), float(cohen_kappa_counts(table.to_numpy())), kappa_full, alpha, table,
                            (len(topics_a), len(topics_b)), tuple(shared), correlations)
