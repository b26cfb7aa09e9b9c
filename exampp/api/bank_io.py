"""Importing and exporting question banks: banks written by hand or taken from elsewhere (TSV,
multiple choice with answer keys, TQA, the reference tool's), checked against the topics,
merged, and written in any format (:data:`~exampp.formats.question_bank.WRITE_FORMATS`).

Import is stricter than reading a bank for grading, which takes any well-formed question: an
imported question with choices must have an answer key naming one of 2 or more non-blank
choices, and with topics, its query (and facet, where the topics list the query's subtopics)
must be in them. Each problem is an :class:`~exampp.errors.InputError` naming the file and the
line of the question.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from exampp.api import Warn, python_warning
from exampp.collection.questions import Question, QuestionBank
from exampp.collection.topics import Topic
from exampp.errors import InputError, OutputError
from exampp.files.io import PathLike, display_name
from exampp.formats import nugget_bank, tqa_bank, tsv_bank
from exampp.formats.choice_bank import choice_problem
from exampp.formats.question_bank import load_question_bank, write_question_bank
from exampp.formats.topic_files import read_topics


def _car_left_out(question: Question) -> list[str]:
    return ["source"] if question.source is not None else []


# Per output format, the fields of a question it leaves out (a format not named holds them all).
_LEFT_OUT: dict[str, Callable[[Question], list[str]]] = {
    "tsv": tsv_bank.left_out, "tqa": tqa_bank.left_out, "car": _car_left_out, "nuggetizer": nugget_bank.left_out}
_HOLDS_DISABLED = ("exampp", "reference", "reference-nuggets", "choices", "autojudge")
_HOLDS_QUERY_TEXTS = ("exampp", "reference", "reference-nuggets", "nuggetizer", "autojudge", "car", "choices", "tqa")


@dataclass(frozen=True)
class ImportedFile:
    """One file of an import: the format read and how many questions it gave."""

    path: str
    format: str
    questions: int
    dropped: int  # left out on reading: blank questions, exact repeats, TQA's questions without a fitting key


@dataclass(frozen=True)
class BankImport:
    """An imported bank and what each file gave."""

    bank: QuestionBank
    files: tuple[ImportedFile, ...]
    repeats: int = 0  # questions that an earlier file held exactly so (kept once)

    @property
    def dropped(self) -> int:
        return sum(f.dropped for f in self.files) + self.repeats


@dataclass(frozen=True)
class BankWrite:
    """What writing a bank in a format kept and left out."""

    format: str
    questions: int
    queries: int
    disabled_left_out: int = 0  # disabled questions, left out where the format cannot mark them
    fields_left_out: Mapping[str, int] | None = None  # field -> questions that lose it


def import_banks(
    sources: Sequence[tuple[PathLike, str]],
    topics: PathLike | Mapping[str, Topic] | None = None,
    *,
    source: str | None = None,
    query_prefix: str = "",
    output: PathLike | None = None,
    output_format: str = "exampp",
    warn: Warn = python_warning,
) -> BankImport:
    """Read banks, check them and merge them in order (``exampp bank import``). A question id in two
    files is kept once when the questions are the same, an error otherwise.

    :param sources: (path, format) pairs; format ``auto`` recognises it.
    :param topics: A topics file or the topics read: checks query and facet ids, and gives queries
        and facets without a text theirs.
    :param source: Recorded for questions that name none (``manual``, ``tqa``...).
    :param query_prefix: Goes before every query id, and before question ids that start with their
        query id and a slash (``<query_id>/<md5>`` ids stay the ids of their texts): TQA's lesson
        ``L_0002`` is TREC CAR Y3's query ``tqa2:L_0002``.
    :param output: Write the merged bank there; nothing is written when None.
    :param output_format: The format to write it in (:data:`~exampp.formats.question_bank.WRITE_FORMATS`).
    :param warn: Takes each warning line (default: a Python warning).
    :raises InputError: A question that breaks the import's checks, naming the file and line.
    """
    if topics is None or isinstance(topics, Mapping):
        known, topics_name = topics, "given"
    else:
        known, topics_name = read_topics(topics), display_name(topics)
    bank = QuestionBank()
    where: dict[str, str] = {}  # question id -> "file:line" it was imported from
    files: list[ImportedFile] = []
    repeats = 0
    for path, format in sources:
        name = display_name(path)
        read = load_question_bank(path, format)
        for question in read.bank:
            line = read.lines.get(question.question_id)
            try:
                question = _imported(question, source, query_prefix)
                _check_choices(question)
                if known is not None:
                    question = _with_topic(question, known, topics_name)
            except ValueError as exc:
                raise InputError(name, line, str(exc)) from None
            first = where.get(question.question_id)
            if first is not None:
                if bank[question.question_id] != question:
                    raise InputError(name, line, f"question id {question.question_id!r} is also on {first}, "
                                                 "for a different question")
                repeats += 1
                continue
            bank.add(question)
            where[question.question_id] = name if line is None else f"{name}:{line}"
        for query_id, text in read.bank.query_texts.items():
            bank.query_texts.setdefault(query_prefix + query_id, text)
        files.append(ImportedFile(name, read.format, len(read.bank), read.dropped))
    for query_id in bank.query_ids():
        if known is not None and query_id not in bank.query_texts:
            bank.query_texts[query_id] = known[query_id].text
    if output is not None:
        write_bank(bank, output, output_format, warn=warn)
    return BankImport(bank, tuple(files), repeats)


def export_bank(bank: PathLike, format: str, output: PathLike, *, input_format: str = "auto",
                warn: Warn = python_warning) -> BankWrite:
    """Write a bank file in another format (``exampp bank export``), disabled questions included
    where the format can mark them; what it has no place for is left out with a warning.

    :param bank: The bank file.
    :param format: The format to write (:data:`~exampp.formats.question_bank.WRITE_FORMATS`).
    :param output: The file to write.
    :param input_format: The bank file's format (``auto`` recognises it).
    :param warn: Takes each warning line (default: a Python warning).
    """

    return write_bank(load_question_bank(bank, input_format).bank, output, format, warn=warn)


def write_bank(bank: QuestionBank, output: PathLike, format: str, *, warn: Warn = python_warning) -> BankWrite:
    """Write a bank in a format; what the format has no place for is left out, with a warning:
    disabled questions (which would read back enabled), and fields such as facets or ``source``.

    :param bank: The bank.
    :param output: The file to write.
    :param format: One of :data:`~exampp.formats.question_bank.WRITE_FORMATS`.
    :param warn: Takes each warning line (default: a Python warning).
    :raises OutputError: A question would read back as another one; nothing is written then.
    """

    disabled = 0
    if format not in _HOLDS_DISABLED:
        disabled = sum(q.disabled for q in bank)
        bank = bank.enabled()
    left_out = _LEFT_OUT.get(format)
    lost = Counter(name for q in bank for name in left_out(q)) if left_out else Counter()
    if format not in _HOLDS_QUERY_TEXTS:
        lost.update("query_text" for q in bank if q.query_id in bank.query_texts)
    try:
        write_question_bank(bank, output, format)
    except ValueError as exc:  # a question the format cannot hold: the user's to choose another format
        raise OutputError(output, str(exc)) from None
    if disabled:  # said once written: a refused write leaves nothing out
        warn(f"warning: left out {disabled} disabled questions: the {format} format cannot mark a question "
             "disabled")
    if lost:
        warn(f"warning: the {format} format leaves out " +
             ", ".join(f"{name} ({count} questions)" for name, count in lost.items()))
    return BankWrite(format, len(bank), len(bank.query_ids()), disabled, dict(lost))


def _imported(question: Question, source: str | None, query_prefix: str) -> Question:
    changes: dict[str, Any] = {}  # Question's fields (str ones)
    if source is not None and question.source is None:
        changes["source"] = source
    if query_prefix:
        changes["query_id"] = query_prefix + question.query_id
        if question.question_id.startswith(f"{question.query_id}/"):
            changes["question_id"] = query_prefix + question.question_id
    return replace(question, **changes) if changes else question


def _check_choices(question: Question) -> None:
    """ValueError for choices unfit for multiple-choice grading."""
    problem = choice_problem(question)
    if problem is not None:
        raise ValueError(f"question {question.question_id!r} {problem}")


def _with_topic(question: Question, topics: Mapping[str, Topic], topics_name: str) -> Question:
    """``question`` with its facet's text from the topics where it has none; ValueError for a
    query or facet the topics lack."""
    topic = topics.get(question.query_id)
    if topic is None:
        raise ValueError(f"unknown query {question.query_id!r}: not in the topics ({topics_name})"
                         + _prefix_hint(question.query_id, topics))
    if question.facet_id is None or not topic.subtopics:
        return question
    facets = {s.facet_id: s.text for s in topic.subtopics}
    if question.facet_id not in facets:
        raise ValueError(f"unknown facet {question.facet_id!r} of query {question.query_id!r}: the topics "
                         f"list {', '.join(facets)}")
    return question if question.facet_text is not None else replace(question, facet_text=facets[question.facet_id])


def _prefix_hint(query_id: str, topics: Mapping[str, Topic]) -> str:
    """A hint when exactly one topic's id is the query id with a prefix (TQA's L_0002, CAR's tqa2:L_0002)."""
    longer = [known for known in topics if known.endswith(query_id) and known != query_id]
    if len(longer) != 1:
        return ""
    return f"; the topics have {longer[0]!r}: import with the query prefix {longer[0][: -len(query_id)]!r}"
