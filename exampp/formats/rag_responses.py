"""Generated responses (RAG answers) files, read into one :class:`Response` per (run, query).

Input (plain or gzipped; a file, or a folder whose files are read in name order), recognised
from the first non-blank line of each file:

- JSONL, one response per line. The query id is the first of ``topic_id``, ``query_id``,
  ``qid``, ``narrative_id``; the run id is ``run_id``; either may also sit in a ``metadata``
  object (TREC RAG 2024). A line with ``responses``, or with an ``answer`` that is a list of
  ``{"text", "citations"}`` sentences, is an AutoJudge report (:mod:`exampp.formats.reports`:
  any of its three citation shapes): its text is its sentences' texts, stripped and joined with
  spaces, and the response keeps the sentences with the doc ids they cite. Otherwise the text is
  ``answer`` (a string or a list of strings), ``response``, ``text`` or ``answer_text`` (a string:
  the TREC RAG track's nugget assignment files, :mod:`exampp.formats.nugget_assignments`, read as
  their answers). A line without a run id takes the file's name (without suffixes) as run id.
- TSV, ``query_id<TAB>text`` per line; the run id is the file's name without suffixes.

A run answers a query at most once. :mod:`exampp.segment` splits the responses into passages.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exampp.collection.ids import id_problem
from exampp.errors import InputError
from exampp.files.io import PathLike, display_name, first_nonblank, is_stdio, iter_lines, json_lines
from exampp.formats.reports import QUERY_KEYS, CitedSentence, is_report, line_field, parse_report, report_files

TEXT_KEYS = ("answer", "response", "text", "answer_text")


@dataclass(frozen=True)
class Response:
    """One system's generated response (RAG answer) to one query.

    :param run_id: The system (run) that gave it.
    :param query_id: The query it answers.
    :param text: The response's text.
    :param line: The line it was read from, for messages.
    :param sentences: Its sentences with the doc ids each cites, for a response read from a report
        (empty otherwise).
    """

    run_id: str
    query_id: str
    text: str
    line: int | None = None
    sentences: tuple[CitedSentence, ...] = ()


def read_responses(path: PathLike) -> list[Response]:
    """Responses from a JSONL or TSV file, or from every file of a folder (see the module
    docstring); one per (run, query).

    :param path: The responses file or folder; ``-`` reads standard input (the run id of a line
        without one is then ``stdin``).
    :raises InputError: A malformed line, or a run answering a query twice, naming the line.
    """

    responses: list[Response] = []
    seen: dict[tuple[str, str], tuple[str, int | None]] = {}
    for source in report_files(path):
        name = display_name(source)
        for response in _file_responses(source, name):
            key = (response.run_id, response.query_id)
            if key in seen:
                where, line = seen[key]
                earlier = f"line {line}" if where == name else f"{where}:{line}"
                raise InputError(name, response.line, f"run {key[0]!r} already answered query {key[1]!r} "
                                                      f"({earlier})")
            seen[key] = (name, response.line)
            responses.append(response)
    return responses


def _file_responses(path: PathLike, name: str) -> Iterator[Response]:
    first, lines = first_nonblank(iter_lines(path))
    if first is None:
        raise InputError(name, None, "empty responses file")
    default_run = "stdin" if is_stdio(path) else Path(path).name.split(".")[0]
    if first.lstrip().startswith("{"):
        return _jsonl_responses(lines, name, default_run)
    return _tsv_responses(lines, name, default_run)


def _answer_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [s.get("text") if isinstance(s, Mapping) else s for s in value]
        texts = [p for p in parts if isinstance(p, str)]
        if len(texts) == len(parts):
            return " ".join(p.strip() for p in texts)
    return None


def response_id(value: str, what: str, name: str, lineno: int, *, first_column: bool = False) -> str:
    """An id that goes into the passage ids and runs built from responses (checked here, where
    the line is known).

    :param value: The id.
    :param what: What it is (``query id``, ``run_id``), for the message.
    :param name: The file's name, for the message.
    :param lineno: The line, for the message.
    :param first_column: The id is a qrels line's first column (no ``#`` at its start).
    :raises InputError: An id the passage ids cannot hold.
    """
    problem = id_problem(value, first_column=first_column)
    if problem is None and ":" in value:
        problem = "contains ':', which separates the parts of a response passage id"
    if problem is not None:
        raise InputError(name, lineno, f"{what} {value!r} {problem}")
    return value


def _jsonl_responses(lines: Iterator[tuple[int, str]], name: str, default_run: str) -> Iterator[Response]:
    for lineno, record in json_lines(lines, name):
        yield parse_response(record, name, lineno, default_run)


def parse_response(record: Any, name: str, lineno: int, default_run: str) -> Response:
    """One JSONL line of a responses file (see the module docstring).

    :param record: The line's JSON value.
    :param name: The file's name, for messages.
    :param lineno: The line's number.
    :param default_run: The run id of a line that names none.
    :raises InputError: A malformed line.
    """
    if not isinstance(record, dict):
        raise InputError(name, lineno, f"expected a response object, found {type(record).__name__}")
    if is_report(record):
        return _report_response(record, name, lineno, default_run)
    query_id = line_field(record, QUERY_KEYS)
    if isinstance(query_id, int) and not isinstance(query_id, bool):
        query_id = str(query_id)
    if not isinstance(query_id, str):
        raise InputError(name, lineno, f"missing query id: expected a string in one of {', '.join(QUERY_KEYS)}")
    query_id = response_id(query_id, "query id", name, lineno, first_column=True)
    run_id = line_field(record, ("run_id",))
    run_id = default_run if run_id is None else run_id
    if not isinstance(run_id, str):
        raise InputError(name, lineno, f"run_id {run_id!r} must be a string")
    run_id = response_id(run_id, "run_id", name, lineno)
    key = next((k for k in TEXT_KEYS if record.get(k) is not None), None)
    text = None if key is None else _answer_text(record[key])
    if text is None:
        raise InputError(name, lineno, "missing text: expected 'answer' (a list of {\"text\"} sentences or "
                                       "a string), 'response', 'text' or 'answer_text'")
    return Response(run_id, query_id, text, lineno)


def _report_response(record: dict[str, Any], name: str, lineno: int, default_run: str) -> Response:
    report = parse_report(record, name, lineno, default_run)
    query_id = response_id(report.topic_id, "query id", name, lineno, first_column=True)
    run_id = response_id(report.run_id, "run_id", name, lineno)
    return Response(run_id, query_id, " ".join(s.text.strip() for s in report.sentences), lineno,
                    report.sentences)


def _tsv_responses(lines: Iterator[tuple[int, str]], name: str, run_id: str) -> Iterator[Response]:
    checked = False  # the run id (the file's name) is checked once, at the first response
    for lineno, line in lines:
        if not line.strip():
            continue
        if not checked:
            run_id, checked = response_id(run_id, "run id (the file's name)", name, lineno), True
        yield parse_tsv_response(line, name, lineno, run_id)


def parse_tsv_response(line: str, name: str, lineno: int, run_id: str) -> Response:
    """One line ``query_id<TAB>text`` of a TSV responses file.

    :param line: The line.
    :param name: The file's name, for messages.
    :param lineno: The line's number.
    :param run_id: The file's run id (its name), checked by the caller.
    :raises InputError: A line without a tab or a query id, or a query id passage ids cannot hold.
    """
    query_id, tab, text = line.partition("\t")
    if not tab or not query_id.strip():
        raise InputError(name, lineno, "expected 'query_id<TAB>text' (or a JSONL response per line)")
    return Response(run_id, response_id(query_id.strip(), "query id", name, lineno, first_column=True), text, lineno)
