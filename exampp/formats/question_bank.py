"""Question banks: exam questions (or nuggets) per query, with optional facets, answer keys and choices.

exampp's own format is JSONL with one question per line::

    {"query_id", "question_id", "text", "facet_id"?, "facet_text"?, "query_text"?,
     "answers"?: [..], "choices"?: [..], "correct_choice"?: int, "source"?: "generated:<model>"|"manual"|...,
     "info"?: {..}, "disabled"?: true}

``question_id`` defaults to ``<query_id>/<md5 of text>``, the EXAM++ reference tool's scheme.
``info`` holds what is known of a question's making: for a generated one its provenance (``model``,
``prompt`` id and version, ``temperature``, ``date``), for an exam question its source document,
Bloom levels and question word. A ``disabled`` question stays in the bank (and its history) but
is left out when the bank is read for grading and scoring.
The reference tool's formats are read and written by :mod:`exampp.formats.reference_bank`,
hand-written banks by :mod:`~exampp.formats.tsv_bank` (``query_id<TAB>question[<TAB>answer...]``)
and :mod:`~exampp.formats.choice_bank` (multiple choice with answer keys), textbook exams by
:mod:`~exampp.formats.tqa_bank` (TQA's JSON), nugget banks with their importance by
:mod:`~exampp.formats.nugget_bank` (the ``nuggetizer`` package's, and the TREC RAG track's
assignment files), TREC AutoJudge's nugget banks by :mod:`~exampp.formats.autojudge_nuggets`.
"""
from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from exampp.collection.questions import BankFile, QuestionBank
from exampp.errors import InputError
from exampp.files.io import PathLike, atomic_write, display_name, first_nonblank, iter_lines, json_lines
from exampp.formats import autojudge_nuggets, choice_bank, nugget_bank, reference_bank, tqa_bank, tsv_bank
from exampp.formats.exampp_bank import exampp_record, read_question_records

WRITE_FORMATS = ("exampp", "reference", "reference-nuggets", "nuggetizer", "autojudge", "car", "choices", "tsv",
                 "tqa")
READ_FORMATS = ("auto", *WRITE_FORMATS)


def read_question_bank(path: PathLike, format: str = "auto", *, disabled: bool = False) -> QuestionBank:
    """Read a question bank (gz or plain).

    :param path: The bank file.
    :param format: One of :data:`READ_FORMATS`: ``exampp`` (one question per line), ``reference`` /
        ``reference-nuggets`` (the reference tool's bank: one line per query or query facet holding
        ``questions`` or ``items``), ``nuggetizer`` (one line per topic with ``qid``, ``query`` and
        ``nuggets``: the ``nuggetizer`` package's nugget banks and the TREC RAG track's assignment
        files), ``autojudge`` (TREC AutoJudge's ``NuggetBanks``: one ``NuggetBank`` per line with
        ``query_id`` and ``nugget_bank``/``claim_bank``), ``car`` (one question per line with ``qid``,
        ``question``, ``choices``, ``correctKey``, ``correct``), ``choices`` (one question per line
        with ``query_id``, ``question``, ``choices``, ``correct_key``), ``tsv``
        (``query_id<TAB>question[<TAB>answer...]``), ``tqa`` (the TQA dataset's JSON list of
        lessons). ``auto`` recognises them from the first non-blank line: a JSON object is one of
        the JSONL formats (by its fields), ``[`` starts TQA's JSON, anything else is TSV.
    :param disabled: Keep the disabled questions too (by default they are left out).
    :raises InputError: An empty or malformed file, naming the line.
    :raises ValueError: An unknown format.
    """
    bank = load_question_bank(path, format).bank
    return bank if disabled else bank.enabled()


def load_question_bank(path: PathLike, format: str = "auto") -> BankFile:
    """Read a question bank with its disabled questions, keeping each question's line number
    (for messages about it) and the format read.

    :param path: The bank file.
    :param format: One of :data:`READ_FORMATS`, as :func:`read_question_bank` takes it.
    :raises InputError: An empty or malformed file, naming the line.
    :raises ValueError: An unknown format.
    """
    if format not in READ_FORMATS:
        raise ValueError(f"unknown question bank format {format!r}; expected one of {', '.join(READ_FORMATS)}")
    name = display_name(path)
    first, lines = first_nonblank(iter_lines(path))
    if first is None:
        raise InputError(name, None, "empty question bank")
    start = first.lstrip()
    if format == "auto" and not start.startswith("{"):
        format = "tqa" if start.startswith("[") else "tsv"
    formats = _formats()
    if format != "auto" and not formats[format].jsonl:
        return replace(formats[format].read(lines, name), format=format)
    records = json_lines(lines, name)
    if format == "auto":  # a JSON object: its fields say which of the JSONL formats
        lineno, record = next(records)
        format = detect_format(record, name, lineno)
        records = itertools.chain([(lineno, record)], records)
    return replace(formats[format].read(records, name), format=format)


def write_question_bank(bank: QuestionBank, path: PathLike, format: str = "exampp") -> None:
    """Write a question bank atomically.

    :param bank: The bank to write.
    :param path: The file to write; gzipped when it ends in .gz.
    :param format: One of :data:`WRITE_FORMATS`. ``reference`` writes one line per (query, facet)
        with ``items`` (questions) and ``reference-nuggets`` the same with nugget fields; fields those
        formats lack are kept in each item's ``info`` so that reading the file back gives the same
        bank. ``car`` leaves out ``source`` and cannot hold more than one answer. ``choices`` holds
        every field. ``tsv`` and ``tqa`` hold less (see their modules).
    :raises ValueError: An unknown format, or a question that would read back as another (a
        different id, lost choices); nothing is written then.
    """

    if format not in WRITE_FORMATS:
        raise ValueError(f"unknown question bank format {format!r}; expected one of {', '.join(WRITE_FORMATS)}")
    written = _formats()[format]
    chunks = written.write(bank)
    if written.jsonl:
        chunks = (json.dumps(record, ensure_ascii=False) + "\n" for record in chunks)
    with atomic_write(path) as fh:
        for chunk in chunks:
            fh.write(chunk)


@dataclass(frozen=True)
class _Format:
    """How a format is read and written. A JSONL format (``jsonl``) reads numbered JSON records
    and writes records, one a line; the others read numbered lines and write text."""

    read: Callable[[Iterable[tuple[int, Any]], str], BankFile]
    write: Callable[[QuestionBank], Iterable[Any]]
    jsonl: bool = True


def _formats() -> dict[str, _Format]:
    """Every format of :data:`WRITE_FORMATS` by name."""
    return {
        "exampp": _Format(read_question_records,
                          lambda bank: (exampp_record(q, bank.query_texts.get(q.query_id)) for q in bank)),
        "reference": _Format(reference_bank.read_reference_records, reference_bank.reference_records),
        "reference-nuggets": _Format(reference_bank.read_reference_records,
                                     functools.partial(reference_bank.reference_records, nuggets=True)),
        "nuggetizer": _Format(nugget_bank.read_nuggetizer_records, nugget_bank.nuggetizer_records),
        "autojudge": _Format(autojudge_nuggets.read_nugget_banks_records, autojudge_nuggets.nugget_banks_records),
        "car": _Format(reference_bank.read_car_records, reference_bank.car_records),
        "choices": _Format(choice_bank.read_choice_records, choice_bank.choice_records),
        "tsv": _Format(tsv_bank.read_tsv, tsv_bank.tsv_lines, jsonl=False),
        "tqa": _Format(tqa_bank.read_tqa, lambda bank: [tqa_bank.tqa_document(bank)], jsonl=False),
    }


def detect_format(record: Any, path: str, lineno: int) -> str:
    """Which JSONL bank format a line is in, by its fields.

    :param record: The first line's JSON value.
    :param path: The file's name, for the message.
    :param lineno: The line's number, for the message.
    :raises InputError: The line is in no bank format.
    """
    if isinstance(record, dict):

        if "questions" in record or "items" in record:
            return "reference"
        if "nugget_bank" in record or "claim_bank" in record:
            return "autojudge"
        if "qid" in record and "nuggets" in record:
            return "nuggetizer"
        if "qid" in record and "question" in record:
            return "car"
        if "query_id" in record and "question" in record:
            return "choices"
        if "query_id" in record and "text" in record:
            return "exampp"
    raise InputError(path, lineno, "not a question bank: expected an exampp question {\"query_id\", \"text\"}, "
                                   "a reference bank line with \"questions\"/\"items\", a nuggetizer line "
                                   "{\"qid\", \"nuggets\"}, a TREC AutoJudge NuggetBank {\"query_id\", "
                                   "\"nugget_bank\"}, a CAR question "
                                   "{\"qid\", \"question\"}, or a multiple-choice question "
                                   "{\"query_id\", \"question\", \"choices\", \"correct_key\"}")
