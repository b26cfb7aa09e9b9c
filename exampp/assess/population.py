"""The population a human sample is drawn from: every (query, passage) pair in the top-k of some run,
every (answer, nugget) pair of RAG answers, or every sentence of RAG answers that cites a segment,
with the judge's label of each, laid out for the measures (:class:`exampp.assess.measures.Layout`)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from exampp.assess.measures import Layout
from exampp.collection.runs import Run
from exampp.formats.citations import CitedAnswer, Sentence
from exampp.formats.nugget_assignments import Answer

A = TypeVar("A")  # an answer, of a nugget assignment or a citation-support file
Unit = tuple[str, float, float]  # a unit of an answer: its key, the judge's grade, its weight


@dataclass(frozen=True)
class Population:
    """The pool's pairs: ``query_ids[d]``, ``keys[d]`` (the passage id), the judge's grade ``judge[d]``,
    and ``layout`` for the measures."""

    query_ids: tuple[str, ...]
    keys: tuple[str, ...]
    judge: np.ndarray
    layout: Layout

    def index(self) -> dict[tuple[str, str], int]:
        """(query id, key) -> pair index."""
        return {pair: d for d, pair in enumerate(zip(self.query_ids, self.keys))}


def passage_population(runs: Mapping[str, Run], depth: int, judge: Mapping[tuple[str, str], float]) -> Population:
    """The top-``depth`` pool of ``runs`` (queries: those some run ranks a passage for), each pair with
    its grade in ``judge`` ((query id, passage id) -> grade). KeyError names the first pair ``judge``
    lacks, so that the caller can say what to grade."""
    names = sorted(runs)
    queries = sorted({q for run in runs.values() for q, docs in run.rankings.items() if docs[:depth]})
    at = {q: i for i, q in enumerate(queries)}
    index: dict[tuple[str, str], int] = {}
    rankings = []
    for name in names:
        per_query = []
        for q in queries:
            ranked = []
            for doc in runs[name].top(q, depth):
                pair = (q, doc.docid)
                if pair not in index:
                    index[pair] = len(index)
                ranked.append(index[pair])
            per_query.append(np.array(ranked, dtype=int))
        rankings.append(tuple(per_query))
    pairs = list(index)
    missing = [pair for pair in pairs if pair not in judge]
    if missing:
        raise KeyError(missing[0], len(missing))
    layout = Layout(tuple(names), tuple(queries), np.array([at[q] for q, _ in pairs], dtype=int), tuple(rankings))
    return Population(tuple(q for q, _ in pairs), tuple(k for _, k in pairs),
                      np.array([float(judge[pair]) for pair in pairs]), layout)


def _answer_population(answers: Mapping[tuple[str, str], A], units: Callable[[str, A], Iterable[Unit]],
                       weights: str) -> Population:
    """The units of RAG answers (``answers``: (run, topic) -> answer), each answer's from ``units``
    (key, the judge's grade, a weight), laid out under their run and topic; the weights go to the
    layout's field ``weights`` names."""
    names = sorted({run for run, _ in answers})
    queries = sorted({q for _, q in answers})
    at = {q: i for i, q in enumerate(queries)}
    query_ids: list[str] = []
    keys: list[str] = []
    judge: list[float] = []
    weight: list[float] = []
    rankings = []
    for run in names:
        per_query = []
        for q in queries:
            start = len(keys)
            answer = answers.get((run, q))
            for key, grade, w in units(run, answer) if answer is not None else ():
                query_ids.append(q)
                keys.append(key)
                judge.append(grade)
                weight.append(w)
            per_query.append(np.arange(start, len(keys), dtype=int))
        rankings.append(tuple(per_query))
    query_of = np.array([at[q] for q in query_ids], dtype=int)
    layout = Layout(tuple(names), tuple(queries), query_of, tuple(rankings), **{weights: np.array(weight)})
    return Population(tuple(query_ids), tuple(keys), np.array(judge), layout)


def nugget_population(answers: Sequence[Answer]) -> Population:
    """Every (answer, nugget) pair of assigned answers (the judge's assignment file): the key is
    ``run/i``, i the nugget's place in its topic's list; the judge's grade its assignment (0 not
    supported, 1 partly, 2 fully); the layout ranks each run's answer's nuggets under its topic,
    with each nugget's importance (1 vital, 0.5 okay)."""
    def units(run: str, answer: Answer) -> Iterable[Unit]:
        for i, nugget in enumerate(answer.nuggets):
            yield (f"{run}/{i}", float(nugget.grade if nugget.grade is not None else 0),
                   1.0 if nugget.importance == "vital" else 0.5)

    return _answer_population({(a.run_id, a.query_id): a for a in answers}, units, "importance")


def nugget_labels(ours: Sequence[Answer], judged: Sequence[Answer], name: str) -> dict[tuple[str, str], list[float]]:
    """(topic, ``run/i``) -> [grade] of the assigned nuggets of ``judged`` (people's assignment file),
    i the place of the nugget with the same text in the run's answer in ``ours`` (the judge's file);
    InputError for an answer or a nugget the judge's file lacks."""
    from exampp.errors import InputError

    place = {(a.query_id, a.run_id, n.text): i for a in ours for i, n in enumerate(a.nuggets)}
    labels: dict[tuple[str, str], list[float]] = {}
    for answer in judged:
        for nugget in answer.nuggets:
            if nugget.grade is None:
                continue
            i = place.get((answer.query_id, answer.run_id, nugget.text))
            if i is None:
                raise InputError(name, answer.line, f"topic {answer.query_id}, run {answer.run_id}: the judge's "
                                                    f"assignment has no such answer and nugget ({nugget.text[:60]!r})")
            labels.setdefault((answer.query_id, f"{answer.run_id}/{i}"), []).append(float(nugget.grade))
    return labels


def _support_of(sentence: Sentence, kind: str) -> float | None:
    """A sentence's support label on the 0–2 scale: its judged citations' mean (``weighted_precision``)
    or best (``weighted_recall``) support; None when none of them is judged."""
    judged = [c.support for c in sentence.citations if c.support is not None]
    if not judged:
        return None
    return float(np.mean(judged)) if kind == "weighted_precision" else float(max(judged))


def support_population(answers: Sequence[CitedAnswer], kind: str) -> Population:
    """Every sentence that cites a segment, of every answer of the judge's citation-support file: the key
    ``run/sentence id``; the judge's grade the sentence's support (:func:`_support_of`, 0 where the
    judge left every citation unjudged); ``layout.shares`` each sentence's weight in its run's ``kind``
    (``weighted_precision``: its share of the answer's citations; ``weighted_recall``: one over the
    answer's sentences; both over the topics the run answered), as :mod:`exampp.analysis.support_scores`
    scores a run. A sentence citing nothing is no unit: it scores 0 for recall and counts in no
    precision, so there is nothing to judge."""
    answered = Counter(a.run_id for a in answers)

    def units(run: str, answer: CitedAnswer) -> Iterable[Unit]:
        n_citations = sum(len(s.citations) for s in answer.sentences)
        for sentence in answer.sentences:
            if sentence.citations:
                support = _support_of(sentence, kind)
                part = (len(sentence.citations) / n_citations if kind == "weighted_precision"
                        else 1 / len(answer.sentences))
                yield (f"{run}/{sentence.sentence_id}", 0.0 if support is None else support, part / answered[run])

    return _answer_population({(a.run_id, a.topic_id): a for a in answers}, units, "shares")


def support_labels(ours: Sequence[CitedAnswer], judged: Sequence[CitedAnswer], kind: str,
                   name: str) -> dict[tuple[str, str], list[float]]:
    """(topic, ``run/sentence id``) -> [support] of each sentence people judged a citation of, in
    ``judged`` (a citation-support file, the track's format), as :func:`_support_of` reads it;
    InputError for a sentence or a citation the judge's file (``ours``) lacks."""
    from exampp.errors import InputError

    cited = {(a.topic_id, a.run_id, s.sentence_id): {c.reference for c in s.citations}
             for a in ours for s in a.sentences}
    labels: dict[tuple[str, str], list[float]] = {}
    for answer in judged:
        for sentence in answer.sentences:
            value = _support_of(sentence, kind)
            if value is None:
                continue
            references = cited.get((answer.topic_id, answer.run_id, sentence.sentence_id))
            unknown = {c.reference for c in sentence.citations} - (references or set())
            if references is None or unknown:
                what = f"sentence {sentence.sentence_id}" if references is None else f"citation of {min(unknown)}"
                raise InputError(name, answer.line, f"topic {answer.topic_id}, run {answer.run_id}: the judge's "
                                                    f"support file has no such {what}")
            labels.setdefault((answer.topic_id, f"{answer.run_id}/{sentence.sentence_id}"), []).append(value)
    return labels
