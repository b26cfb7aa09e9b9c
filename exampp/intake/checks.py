"""Intake checks: what a track checks when runs are submitted, as findings per run.

Each check has a name, a default severity (``error`` refuses the run, ``warning`` reports it) and a
track spec (:mod:`exampp.formats.track_spec`) may set another, or ``off``. Where
``autojudge_base``'s ``ReportVerification`` has the same check, it has the same name and finds the
same reports: ``empty_answer`` (which stops the other checks of that answer, as there),
``blank_sentence``, ``citation_count``, ``reference_index``, ``docid_pattern`` (matched from the id's
start, as there), ``references_missing``, ``references_duplicate``, ``references_undeclared``,
``references_max``, ``metadata``, ``length``, ``missing_topics``, ``new_topics``,
``duplicate_topics``.
"""
from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass

from exampp.collection.ids import some_ids
from exampp.collection.runs import RankedDoc, trec_order
from exampp.formats.track_spec import TrackSpec
from exampp.intake.submissions import Answer, Ranked

# check -> (default severity, what it finds)
CHECKS: dict[str, tuple[str, str]] = {
    "format": ("error", "a line that cannot be read"),
    "missing_topics": ("error", "topics of the topics file the run does not answer"),
    "new_topics": ("error", "topics the run answers that are not in the topics file"),
    "duplicate_topics": ("error", "a topic answered twice"),
    "duplicate_docs": ("error", "a document twice in one topic's ranking"),
    "run_tag": ("error", "a run tag in two files, or several tags in one run file"),
    "file_name": ("warning", "a run file not named after its run tag"),
    "unknown_docs": ("error", "doc ids not in the corpus (--corpus)"),
    "docid_pattern": ("error", "doc ids that do not match the spec's pattern"),
    "depth": ("error", "more ranked documents for a topic than the spec allows"),
    "length": ("error", "an answer longer than the spec allows"),
    "citation_count": ("error", "a sentence with more citations than the spec allows"),
    "reference_index": ("error", "a citation index outside the report's references"),
    "references_missing": ("error", "a report without references where the spec requires them"),
    "references_duplicate": ("warning", "a document twice in a report's references"),
    "references_undeclared": ("error", "a cited document not in the report's references"),
    "references_max": ("error", "more references than the spec allows"),
    "citation_not_retrieved": ("error", "a cited document not in the run's own ranking (its top-k)"),
    "metadata": ("error", "a mandatory metadata field missing or blank"),
    "empty_answer": ("warning", "an empty answer"),
    "blank_sentence": ("warning", "a sentence without text"),
    "same_answer": ("warning", "one answer given to many topics"),
    "rank_order": ("warning", "ranks out of order, or scores rising with rank"),
}
_TOPIC_KEYS = ("topic_id", "narrative_id", "request_id")  # one topic id, which AutoJudge mirrors into each


@dataclass(frozen=True)
class Finding:
    """What a check found in a run.

    :param run_id: The run.
    :param check: The check's name (:data:`CHECKS`).
    :param severity: ``error`` or ``warning``.
    :param message: What is wrong.
    :param topic: The topic, where it is about one.
    :param where: ``file:line``, where it is about one line.
    :param items: Every id it is about, where the message names only some (the topics missing, the
        doc ids not in the corpus...), sorted.
    """

    run_id: str
    check: str
    severity: str
    message: str
    topic: str | None = None
    where: str | None = None
    items: tuple[str, ...] = ()


class Findings:
    """Collects a run's findings at the severities the spec gives.

    :param run_id: The run.
    :param spec: The track spec.
    """

    def __init__(self, run_id: str, spec: TrackSpec):
        self.run_id = run_id
        self.spec = spec
        self.found: list[Finding] = []

    def add(self, check: str, message: str, topic: str | None = None, file: str | None = None,
            line: int | None = None, items: Iterable[str] = ()) -> None:
        """Add a finding of ``check`` (unless the spec turns it off).

        :param check: The check's name.
        :param message: What is wrong.
        :param topic: The topic, if any.
        :param file: The file, if any.
        :param line: The line, if any.
        :param items: Every id it is about, where the message names only some.
        """
        severity = self.spec.severity.get(check, CHECKS[check][0])
        if severity != "off":
            where = None if file is None else file if line is None else f"{file}:{line}"
            self.found.append(Finding(self.run_id, check, severity, message, topic, where, tuple(sorted(set(items)))))


def length_of(texts: Iterable[str], unit: str) -> int:
    """An answer's length as ``autojudge_base`` counts it: the texts joined with single spaces, then
    whitespace tokens (``words``) or NFKC characters (``chars``).

    :param texts: The sentences' texts (or the one text).
    :param unit: ``words`` or ``chars``.
    """
    joined = " ".join(texts)
    return len(joined.split()) if unit == "words" else len(unicodedata.normalize("NFKC", joined))


def check_coverage(found: Findings, answered: list[str], topics: Collection[str] | None) -> None:
    """Missing, new and twice-answered topics of one run.

    :param found: Where the findings go.
    :param answered: The topic of each answer (ranking) of the run, in order.
    :param topics: The topics the track asks for (None: not checked).
    """
    counts: dict[str, int] = defaultdict(int)
    for topic in answered:
        counts[topic] += 1
    twice = [t for t, n in counts.items() if n > 1]
    if twice:
        found.add("duplicate_topics", f"{len(twice)} topic(s) answered more than once: {some_ids(twice, 10)}",
                  items=twice)
    if topics is None:
        return
    missing = [t for t in topics if t not in counts]
    if missing:
        found.add("missing_topics", f"{len(missing)} of {len(topics)} topics not answered: {some_ids(missing, 10)}",
                  items=missing)
    new = [t for t in counts if t not in topics]
    if new:
        found.add("new_topics", f"{len(new)} topic(s) not in the topics file: {some_ids(new, 10)}", items=new)


def _present(answer: Answer, key: str) -> bool:
    if key in _TOPIC_KEYS:
        return True
    if key == "run_id":
        return bool(answer.run_id.strip())
    value = answer.metadata.get(key)
    return value is not None and not (isinstance(value, str) and not value.strip())


def check_answer(found: Findings, answer: Answer, retrieved: Mapping[str, list[str]] | None = None,
                 limits: Mapping[str, int | None] | None = None) -> set[str]:
    """The per-answer checks; the doc ids it names (cited and referenced), for the corpus check.

    :param found: Where the findings go.
    :param answer: The answer.
    :param retrieved: The run's own ranking (topic -> doc ids, best first), when the run also
        submitted one: citations must point into it (its top ``citation_top_k``).
    :param limits: Each topic's length limit, from its request (spec ``length_limit_request_field``;
        a topic without one is not checked, as ``autojudge_base`` does).
    """
    spec, topic, add = found.spec, answer.topic_id, found.add

    def here(check: str, message: str, items: Iterable[str] = ()) -> None:
        add(check, message, topic, answer.file, answer.line, items)

    texts = [s.text for s in answer.sentences] if answer.sentences else [answer.text]
    if not any(t.strip() for t in texts):
        here("empty_answer", "the answer is empty")
        return set()
    for key in spec.mandatory_metadata:
        if not _present(answer, key):
            here("metadata", f"metadata.{key} is mandatory but missing or blank")
    pattern = re.compile(spec.docid_pattern) if spec.docid_pattern else None
    cited: list[str] = []
    for i, sentence in enumerate(answer.sentences):
        if not sentence.text.strip():
            here("blank_sentence", f"sentence {i} has no text")
        count = len(sentence.citations) + len(sentence.unresolved)
        if spec.max_citations_per_sentence is not None and count > spec.max_citations_per_sentence:
            here("citation_count", f"sentence {i} has {count} citations (at most {spec.max_citations_per_sentence})")
        for index in sentence.unresolved:
            here("reference_index", f"sentence {i} cites reference {index}, outside the "
                                    f"{len(answer.references or ())} references")
        cited.extend(sentence.citations)
    refs = answer.references
    named = list(dict.fromkeys(cited + list(refs or ())))
    if pattern is not None:
        bad = [d for d in named if not pattern.match(d)]
        if bad:
            here("docid_pattern", f"{len(bad)} doc id(s) do not match {spec.docid_pattern}: {some_ids(bad)}", bad)
    if answer.shape in ("rag24", "ragtime", "neuclir"):
        if refs is None:
            if spec.references_required:
                here("references_missing", "the report lists no references")
        else:
            if len(set(refs)) != len(refs):
                here("references_duplicate", "the references list a document more than once")
            undeclared = sorted(set(cited) - set(refs))
            if undeclared:
                here("references_undeclared", f"{len(undeclared)} cited doc id(s) not in the references: "
                                              f"{some_ids(undeclared)}", undeclared)
            if spec.references_max is not None and len(refs) > spec.references_max:
                here("references_max", f"{len(refs)} references (at most {spec.references_max})")
    limit = spec.length_limit if spec.length_limit is not None else (limits or {}).get(topic)
    if limit is not None:
        length = length_of(texts, spec.length_unit)
        if length > limit:
            here("length", f"the answer is {length} {spec.length_unit} long (at most {limit})")
    if retrieved is not None and cited:
        ranking = retrieved.get(topic, [])[:spec.citation_top_k]
        outside = sorted(set(cited) - set(ranking))
        top = f"top {spec.citation_top_k} of its" if spec.citation_top_k else "its"
        if outside:
            here("citation_not_retrieved", f"{len(outside)} cited doc id(s) not in the {top} ranking for the "
                                           f"topic: {some_ids(outside)}", outside)
    return set(named)


def check_same_answers(found: Findings, answers: list[Answer]) -> None:
    """The smell of one answer given to many topics (spec ``same_answer_topics``).

    :param found: Where the findings go.
    :param answers: The run's answers.
    """
    topics: dict[str, list[str]] = defaultdict(list)
    for answer in answers:
        text = " ".join(answer.text.split())
        if text:
            topics[text].append(answer.topic_id)
    for text, same in topics.items():
        if len(set(same)) >= found.spec.same_answer_topics:
            shown = text if len(text) <= 60 else text[:57] + "..."
            found.add("same_answer", f"the same answer for {len(set(same))} topics ({some_ids(same, 10)}): {shown!r}",
                      items=same)


def check_ranking(found: Findings, results: list[Ranked]) -> dict[str, list[str]]:
    """The checks of a ranked run; its rankings (topic -> doc ids in trec_eval's order).

    :param found: Where the findings go.
    :param results: The run's result lines, in file order.
    """
    spec = found.spec
    by_topic: dict[str, list[Ranked]] = defaultdict(list)
    for result in results:
        by_topic[result.result.qid].append(result)
    out_of_order: list[str] = []
    unmatched: dict[str, list[str]] = defaultdict(list)  # doc id -> the topics ranking it
    rankings: dict[str, list[str]] = {}
    pattern = re.compile(spec.docid_pattern) if spec.docid_pattern else None
    for topic, lines in by_topic.items():
        seen: dict[str, Ranked] = {}
        for r in lines:
            if r.result.docid in seen:
                found.add("duplicate_docs", f"document {r.result.docid!r} twice (line {seen[r.result.docid].line})",
                          topic, r.file, r.line)
            seen.setdefault(r.result.docid, r)
        if spec.depth is not None and len(seen) > spec.depth:
            found.add("depth", f"{len(seen)} documents ranked (at most {spec.depth})", topic, lines[0].file)
        if pattern is not None:
            for docid in seen:
                if not pattern.match(docid):
                    unmatched[docid].append(topic)
        if not _in_order(lines):
            out_of_order.append(topic)
        ranked = trec_order(RankedDoc(r.result.docid, r.result.score) for r in seen.values())
        rankings[topic] = [d.docid for d in ranked]
    if unmatched:
        topics = {t for ts in unmatched.values() for t in ts}
        found.add("docid_pattern", f"{len(unmatched)} doc id(s) in {len(topics)} topic(s) do not match "
                                   f"{spec.docid_pattern}: {some_ids(unmatched)}", items=unmatched)
    if out_of_order:
        found.add("rank_order", f"{len(out_of_order)} topic(s) whose ranks do not rise by line or whose scores rise "
                                f"with rank: {some_ids(out_of_order, 10)}", items=out_of_order)
    return rankings


def _in_order(lines: list[Ranked]) -> bool:
    """Ranks rise line by line and scores do not rise with rank."""
    try:
        ranks = [int(r.result.rank) for r in lines]
    except ValueError:
        return False
    pairs = list(zip(ranks, (r.result.score for r in lines)))
    return all(r1 < r2 and s1 >= s2 for (r1, s1), (r2, s2) in zip(pairs, pairs[1:]))


def check_doc_ids(found: Findings, named: Iterable[str], known: Callable[[set[str]], set[str]]) -> None:
    """Doc ids the corpus does not hold.

    :param found: Where the findings go.
    :param named: The doc ids the run names.
    :param known: Which of a set of ids the corpus holds.
    """
    ids = set(named)
    unknown = ids - known(ids)
    if unknown:
        found.add("unknown_docs", f"{len(unknown)} of {len(ids)} doc ids not in the corpus: {some_ids(unknown)}",
                  items=unknown)
