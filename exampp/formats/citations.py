"""Citation-support judgments of RAG answers: does the segment a sentence cites support it?

The TREC 2024 RAG track's files are JSONL, one answer per line, its sentences in order, each
with the segments it cites and their support::

    {"topic_id": id, "run_id": "team.run",
     "sentences": [{"sentenceID": int, "text": text,
                    "citations": [{"citationID": int, "reference": segment id,
                                   "support": "2"|"1"|"0"|"-1"}]}]}

``support``: "2" full, "1" partial, "0" none, "-1" not judged (strings, as the track writes them;
integers are read too). The assessors' file spells the ids ``sentenceId`` and ``citationId``
and adds ``verification_worthy`` and ``citationsCombibed``; the reader takes either spelling
(and leaves those two fields out). :func:`write_citations` writes the predictions file's
spelling (``sentenceID``, ``citationID``): the one the track used for a model's judgments, which
is what ``exampp support assess`` writes. A sentence's text may be empty (the predictions file
writes an empty text as ``NaN``, read as ""); such a sentence cannot be judged by a model.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from exampp.collection.ids import check_id, check_query_id
from exampp.errors import InputError
from exampp.files.io import (
    Kept,
    PathLike,
    display_name,
    excerpt,
    iter_json_lines,
    json_excerpt,
    json_name,
    write_json_lines,
)

SUPPORT_LABELS = ("0", "1", "2")  # the track's support values: grade 0 none, 1 partial, 2 full
NOT_JUDGED = "-1"
# The id keys of each spelling: the predictions file's first (the one written), then the assessors'.
SENTENCE_IDS = ("sentenceID", "sentenceId")
CITATION_IDS = ("citationID", "citationId")


@dataclass(frozen=True)
class Citation:
    """A segment cited by a sentence; ``support`` 0 none, 1 partial, 2 full, None not judged."""

    citation_id: int
    reference: str  # the segment's id (MS MARCO v2.1 segmented for the track)
    support: int | None = None


@dataclass(frozen=True)
class Sentence:
    sentence_id: int
    text: str
    citations: tuple[Citation, ...] = ()


@dataclass(frozen=True)
class CitedAnswer:
    """One run's answer to one topic, sentence by sentence with the segments each cites."""

    topic_id: str
    run_id: str
    sentences: tuple[Sentence, ...]
    line: int | None = None  # where it was read from


def _id_field(record: Mapping[str, Any], keys: tuple[str, str], where: str, name: str, line: int) -> int:
    present = [key for key in keys if key in record]
    if len(present) != 1:
        found = "both" if present else "neither"
        raise InputError(name, line, f"{where} needs one of {keys[0]!r} or {keys[1]!r}, found {found}")
    value = record[present[0]]
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InputError(name, line, f"{where}.{present[0]} must be a non-negative integer, "
                                     f"found {excerpt(json.dumps(value))}")
    return value


def _support(value: Any, where: str, name: str, line: int) -> int | None:
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if text == NOT_JUDGED:
        return None
    if text not in SUPPORT_LABELS:
        raise InputError(name, line, f"{where}.support is {json_excerpt(text)}, not one of "
                                     '"2" (full), "1" (partial), "0" (none), "-1" (not judged)')
    return int(text)


def _citation(item: Any, where: str, name: str, line: int) -> Citation:
    if not isinstance(item, dict):
        raise InputError(name, line, f"{where} must be an object, found {json_name(item)}")
    citation_id = _id_field(item, CITATION_IDS, where, name, line)
    reference = item.get("reference")
    if not isinstance(reference, str):
        raise InputError(name, line, f"{where}.reference must be a string, found {json_name(reference)}")
    try:
        check_id(reference, f"{where}.reference")
    except ValueError as exc:
        raise InputError(name, line, str(exc)) from None
    if "support" not in item:
        raise InputError(name, line, f"{where} has no 'support'")
    return Citation(citation_id, reference, _support(item["support"], where, name, line))


def _sentence(item: Any, where: str, name: str, line: int) -> Sentence:
    if not isinstance(item, dict):
        raise InputError(name, line, f"{where} must be an object, found {json_name(item)}")
    sentence_id = _id_field(item, SENTENCE_IDS, where, name, line)
    text = item.get("text")
    if isinstance(text, float) and math.isnan(text):  # how the predictions file writes an empty text
        text = ""
    if not isinstance(text, str):
        raise InputError(name, line, f"{where}.text must be a string, found {json_name(text)}")
    citations = item.get("citations")
    if not isinstance(citations, list):
        raise InputError(name, line, f"{where}.citations must be a list, found {json_name(citations)}")
    parsed = tuple(_citation(c, f"{where}.citations[{i}]", name, line) for i, c in enumerate(citations))
    seen: set[str] = set()
    for citation in parsed:  # a (sentence, segment) pair is what is judged: once
        if citation.reference in seen:
            raise InputError(name, line, f"{where} cites {excerpt(citation.reference)} twice")
        seen.add(citation.reference)
    return Sentence(sentence_id, text, parsed)


def parse_cited_answer(record: Any, name: str, line: int) -> CitedAnswer:
    """One line of a citation-judgment file (either spelling).

    :param record: The line's JSON value.
    :param name: The file's name, for messages.
    :param line: The line's number, for messages.
    :raises InputError: A malformed line.
    """
    if not isinstance(record, dict):
        raise InputError(name, line, f"expected an answer object, found {json_name(record)}")
    topic_id, run_id = record.get("topic_id"), record.get("run_id")
    if isinstance(topic_id, int) and not isinstance(topic_id, bool):
        topic_id = str(topic_id)  # numeric topic ids, as some tracks write them
    if not isinstance(topic_id, str):
        raise InputError(name, line, f"'topic_id' must be a string, found {json_name(topic_id)}")
    if not isinstance(run_id, str):
        raise InputError(name, line, f"'run_id' must be a string, found {json_name(run_id)}")
    try:
        check_query_id(topic_id, "topic_id")
        check_id(run_id, "run_id")
    except ValueError as exc:
        raise InputError(name, line, str(exc)) from None
    sentences = record.get("sentences")
    if not isinstance(sentences, list):
        raise InputError(name, line, f"'sentences' must be a list, found {json_name(sentences)}")
    parsed = tuple(_sentence(s, f"sentences[{i}]", name, line) for i, s in enumerate(sentences))
    ids: set[int] = set()
    for sentence in parsed:
        if sentence.sentence_id in ids:
            raise InputError(name, line, f"sentence id {sentence.sentence_id} is used twice")
        ids.add(sentence.sentence_id)
    return CitedAnswer(topic_id, run_id, parsed, line)


def read_citations(path: PathLike, *, texts: bool = True) -> list[CitedAnswer]:
    """The answers of a citation-judgment file, in file order. What is kept is bounded
    (:class:`~exampp.files.io.Kept`).

    :param path: The judgment file.
    :param texts: Keep the sentences' texts; without, they are left out (""): the measures read only
        the citations.
    :raises InputError: A (topic, run) twice or a malformed line, naming the line; or an empty file.

    """
    name = display_name(path)
    answers: list[CitedAnswer] = []
    seen: dict[tuple[str, str], int] = {}
    kept = Kept(name)
    for line, record in iter_json_lines(path):
        answer = parse_cited_answer(record, name, line)
        key = (answer.run_id, answer.topic_id)
        if key in seen:
            raise InputError(name, line, f"run {key[0]!r} already answered topic {key[1]!r} (line {seen[key]})")
        seen[key] = line
        if not texts:
            answer = CitedAnswer(answer.topic_id, answer.run_id,
                                 tuple(Sentence(s.sentence_id, "", s.citations) for s in answer.sentences), line)
        citations = [c for s in answer.sentences for c in s.citations]
        kept.add(line, answer.run_id, *(s.text for s in answer.sentences), *(c.reference for c in citations),
                 records=1 + len(answer.sentences) + len(citations))
        answers.append(answer)
    if not answers:
        raise InputError(name, None, "no answers: the file is empty")
    return answers


def citation_record(answer: CitedAnswer) -> dict[str, Any]:
    """An answer as a line of the track's predictions file (``sentenceID``, ``citationID``).

    :param answer: The answer with its citations.
    """

    return {"topic_id": answer.topic_id, "run_id": answer.run_id, "sentences": [
        {SENTENCE_IDS[0]: s.sentence_id, "text": s.text, "citations": [
            {CITATION_IDS[0]: c.citation_id, "reference": c.reference,
             "support": NOT_JUDGED if c.support is None else str(c.support)}
            for c in s.citations]}
        for s in answer.sentences]}


def write_citations(answers: Iterable[CitedAnswer], path: PathLike) -> int:
    """Write answers in the predictions file's spelling, atomically.

    :param answers: The answers with their citations.
    :param path: The file to write; gzipped when it ends in .gz.
    :returns: The number written.
    """

    return write_json_lines(map(citation_record, answers), path)
