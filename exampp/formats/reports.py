"""TREC AutoJudge reports and requests (``autojudge_base``'s ``Report`` and ``Request``), read
without importing that package.

A report file is JSONL, one report per line: one run's answer to one topic, as sentences with
their citations. ``metadata`` holds ``team_id``, ``run_id`` and the topic id (``topic_id`` or
``narrative_id``; a number is read as its decimal string). The sentences are ``responses`` or,
when there is none, ``answer``: a list of ``{"text", "citations"?, "metadata"?, "evaldata"?}``
whose citations take one of three shapes, the same in every sentence of a report:

- ``rag24`` (TREC RAG 2024-2026): 0-based integer indices into the report's ``references``;
- ``ragtime`` (RAGTIME): ``{doc_id: confidence}``, cited in descending confidence (ties in the
  order given);
- ``neuclir`` (NeuCLIR, DRAGUN, kiddie): a list of doc ids, in priority order.

A report whose sentences cite nothing (no citations, or only empty lists) is ``neuclir``, as
``autojudge_base`` reads it. Each sentence's citations are resolved to doc ids as
``Report.get_sentences_with_citations()`` does: an index outside ``references`` is left out (and
kept apart, for the intake checks). Where ``autojudge_base`` would coerce a value (``true`` or
``1.0`` as an index, ``"2.5"`` as a confidence), this reader refuses the line instead.

For exampp's own RAG answer files the reader is more lenient than ``autojudge_base``: the run id
and topic id may also sit at the top level of the line (``run_id``; ``topic_id``, ``query_id``,
``qid``, ``narrative_id``), ``metadata`` and ``team_id`` may be absent, and a line without a run
id takes a default (the file's name).

A request (topic) file is JSONL too: ``{"request_id", "title", "problem_statement"?,
"background"?, "original_background"?, "limit"?, "word_limit"?, "collection_ids"?}``.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exampp.errors import InputError
from exampp.files.io import PathLike, display_name, excerpt, is_stdio, iter_json_lines, json_name

QUERY_KEYS = ("topic_id", "query_id", "qid", "narrative_id")
SENTENCE_KEYS = ("responses", "answer")  # Report.responses, else Report.answer
SHAPES = ("rag24", "ragtime", "neuclir")


@dataclass(frozen=True)
class CitedSentence:
    """A sentence of a report with the doc ids it cites, in priority order.

    :param text: The sentence.
    :param citations: The doc ids it cites, resolved (``get_sentences_with_citations``).
    :param unresolved: Indices (``rag24``) that point outside the report's references: left out
        of ``citations``.
    """

    text: str
    citations: tuple[str, ...] = ()
    unresolved: tuple[int, ...] = ()


@dataclass(frozen=True)
class RagReport:
    """One run's report (RAG answer) for one topic.

    :param run_id: The run.
    :param topic_id: The topic (request) it answers.
    :param sentences: Its sentences with their citations.
    :param shape: How the file writes citations: ``rag24``, ``ragtime`` or ``neuclir``.
    :param team_id: The team, where the line names one.
    :param references: The report's references (doc ids), None when it has none.
    :param metadata: The line's ``metadata`` object as given ({} when absent).
    :param key: Where the sentences were: ``responses`` or ``answer``.
    :param line: The line it was read from.
    """

    run_id: str
    topic_id: str
    sentences: tuple[CitedSentence, ...]
    shape: str
    team_id: str | None = None
    references: tuple[str, ...] | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    key: str = "responses"
    line: int | None = None

    @property
    def text(self) -> str:
        """The sentences' texts joined with single spaces (``Report.get_text()``)."""
        return " ".join(s.text for s in self.sentences)


@dataclass(frozen=True)
class Request:
    """A topic as AutoJudge writes it (``autojudge_base.request.Request``).

    :param request_id: The topic's id.
    :param title: The query.
    :param problem_statement: What the report should address, where given.
    :param background: Who asks and why, where given.
    :param original_background: The background before editing, where given.
    :param limit: The report's length limit (RAGTIME: characters), where given.
    :param word_limit: A limit in words, where given.
    :param collection_ids: The collections the topic is for, where given.
    :param line: The line it was read from.
    """

    request_id: str
    title: str
    problem_statement: str | None = None
    background: str | None = None
    original_background: str | None = None
    limit: int | None = None
    word_limit: int | None = None
    collection_ids: tuple[str, ...] | None = None
    line: int | None = None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _id(value: Any) -> Any:
    """An id as AutoJudge reads one: a number is its decimal string."""
    return str(value) if _is_int(value) else value


def line_field(record: Mapping[str, Any], keys: Iterable[str]) -> Any:
    """The first of ``keys`` set in the line's ``metadata``, else at its top level (None when none is).

    :param record: A JSON line (an object).
    :param keys: The names to look for, in order.
    """
    meta = record.get("metadata")
    for source in (meta if isinstance(meta, Mapping) else {}, record):
        for key in keys:
            if source.get(key) is not None:
                return source[key]
    return None


def is_report(record: Any) -> bool:
    """Whether a JSON line is a report: it has ``responses``, or an ``answer`` that is a list of
    sentence objects.

    :param record: The line's JSON value.
    """
    if not isinstance(record, dict):
        return False
    if record.get("responses") is not None:
        return True
    answer = record.get("answer")
    return isinstance(answer, list) and all(isinstance(s, dict) for s in answer)


def _shape(items: list[dict[str, Any]], where: str, name: str, line: int) -> str:
    """The report's citation shape, from every sentence's citations (one shape per report)."""
    kinds: dict[str, int] = {}
    for i, item in enumerate(items):
        citations = item.get("citations")
        if isinstance(citations, dict):
            kind = "ragtime"
        elif isinstance(citations, list) and citations:
            kind = "rag24" if _is_int(citations[0]) else "neuclir"
        elif citations is None or citations == []:
            continue
        else:
            raise InputError(name, line, f"{where}[{i}].citations must be a list or an object, "
                                         f"found {json_name(citations)}")
        kinds.setdefault(kind, i)
    if len(kinds) > 1:
        (a, i), (b, j) = sorted(kinds.items(), key=lambda kv: kv[1])[:2]
        raise InputError(name, line, f"{where}[{i}] cites as {a} and {where}[{j}] as {b}: a report writes "
                                     "its citations one way (indices, {doc: confidence} or doc ids)")
    return next(iter(kinds), "neuclir")


def _sentence(item: dict[str, Any], shape: str, references: tuple[str, ...], where: str, name: str,
              line: int) -> CitedSentence:
    text = item.get("text")
    if not isinstance(text, str):
        raise InputError(name, line, f"{where}.text must be a string, found {json_name(text)}")
    citations = item.get("citations")
    if shape == "ragtime":
        citations = {} if citations is None else citations
        if not isinstance(citations, dict):
            raise InputError(name, line, f"{where}.citations must be an object {{doc_id: confidence}} as in the "
                                         f"report's other sentences, found {json_name(citations)}")
        for doc, confidence in citations.items():
            if not (_is_int(confidence) or isinstance(confidence, float)):
                raise InputError(name, line, f"{where}.citations[{doc!r}] must be a number (a confidence), "
                                             f"found {json_name(confidence)}")
        ranked = sorted(citations.items(), key=lambda kv: kv[1], reverse=True)  # stable: ties as given
        return CitedSentence(text, tuple(doc for doc, _ in ranked))
    citations = citations or ()
    wanted, what = (_is_int, "an integer (an index into references)") if shape == "rag24" else \
        ((lambda c: isinstance(c, str)), "a string (a doc id)")
    for i, citation in enumerate(citations):
        if not wanted(citation):
            raise InputError(name, line, f"{where}.citations[{i}] must be {what}, found {json_name(citation)}")
    if shape == "neuclir":
        return CitedSentence(text, tuple(citations))
    inside = [i for i in citations if 0 <= i < len(references)]
    return CitedSentence(text, tuple(references[i] for i in inside),
                         tuple(i for i in citations if not 0 <= i < len(references)))


def parse_report(record: Any, name: str, line: int, default_run: str | None = None) -> RagReport:
    """One line of a report file.

    :param record: The line's JSON value.
    :param name: The file's name, for messages.
    :param line: The line's number.
    :param default_run: The run id of a line that names none (None: such a line is refused).
    :raises InputError: A malformed line, naming it.
    """
    if not isinstance(record, dict):
        raise InputError(name, line, f"expected a report object, found {json_name(record)}")
    meta = record.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise InputError(name, line, f"'metadata' must be an object, found {json_name(meta)}")
    meta = meta or {}
    topic_id = _id(line_field(record, QUERY_KEYS))
    if not isinstance(topic_id, str) or not topic_id:
        raise InputError(name, line, f"missing topic id: expected a string in metadata or the line, one of "
                                     f"{', '.join(QUERY_KEYS)}")
    if meta.get("topic_id") is not None and meta.get("narrative_id") is not None \
            and _id(meta["topic_id"]) != _id(meta["narrative_id"]):  # as ReportMetaData: two names of one topic
        raise InputError(name, line, f"metadata topic_id {excerpt(str(meta['topic_id']))} and narrative_id "
                                     f"{excerpt(str(meta['narrative_id']))} differ")
    run_id = line_field(record, ("run_id",))
    run_id = default_run if run_id is None else run_id
    if not isinstance(run_id, str) or not run_id:
        raise InputError(name, line, f"'run_id' must be a non-empty string, found {json_name(run_id)}")
    team_id = line_field(record, ("team_id",))
    if team_id is not None and not isinstance(team_id, str):
        raise InputError(name, line, f"'team_id' must be a string, found {json_name(team_id)}")
    references = record.get("references")
    if references is not None:
        if not isinstance(references, list) or not all(isinstance(r, str) for r in references):
            raise InputError(name, line, "'references' must be a list of doc ids (strings)")
        references = tuple(references)
    key = next((k for k in SENTENCE_KEYS if record.get(k) is not None), None)
    if key is None:
        raise InputError(name, line, "missing sentences: expected 'responses' or 'answer', a list of "
                                     "{\"text\", \"citations\"} objects")
    items = record[key]
    if not isinstance(items, list) or not all(isinstance(s, dict) for s in items):
        raise InputError(name, line, f"'{key}' must be a list of {{\"text\", \"citations\"}} objects")
    shape = _shape(items, key, name, line)
    sentences = tuple(_sentence(s, shape, references or (), f"{key}[{i}]", name, line)
                      for i, s in enumerate(items))
    return RagReport(run_id, topic_id, sentences, shape, team_id, references, meta, key, line)


def report_files(source: PathLike) -> list[Path | str]:
    """The files of a reports (or responses) source: a file as it is, a folder's files (hidden ones
    skipped) sorted by name, as ``auto-judge run --rag-responses DIR`` reads them.

    :param source: A file, ``-`` (standard input) or a folder.
    :raises InputError: A folder without files.
    """
    if is_stdio(source) or not os.path.isdir(source):  # False for a name no file can have: its reader says why
        return [source if is_stdio(source) else Path(source)]
    files = sorted(p for p in Path(source).iterdir() if p.is_file() and not p.name.startswith("."))
    if not files:
        raise InputError(source, None, "no files in the folder")
    return list(files)


def read_reports(source: PathLike) -> list[RagReport]:
    """The reports of a file, or of every file of a folder, in order.

    :param source: A report file (JSONL, plain or gzipped), ``-``, or a folder of them.
    :raises InputError: A malformed line, naming the file and line; an empty file.
    """
    reports: list[RagReport] = []
    for path in report_files(source):
        name = display_name(path)
        read = [parse_report(record, name, line) for line, record in iter_json_lines(path)]
        if not read:
            raise InputError(name, None, "no reports: the file is empty")
        reports.extend(read)
    return reports


def _optional(record: Mapping[str, Any], key: str, kind: type, name: str, line: int | None) -> Any:
    value = record.get(key)
    if value is not None and not (isinstance(value, kind) and not isinstance(value, bool)):
        raise InputError(name, line, f"{key!r} must be {'a string' if kind is str else 'an integer'}, "
                                     f"found {json_name(value)}")
    return value


def parse_request(record: Any, name: str, line: int | None) -> Request:
    """One request (topic) object.

    :param record: The JSON value.
    :param name: The file's name, for messages.
    :param line: Its line, where known.
    :raises InputError: A malformed request, naming the line.
    """
    if not isinstance(record, dict):
        raise InputError(name, line, f"expected a request object, found {json_name(record)}")
    request_id = _id(record.get("request_id"))
    if not isinstance(request_id, str) or not request_id:
        raise InputError(name, line, f"'request_id' must be a non-empty string, found "
                                     f"{json_name(record.get('request_id'))}")
    for mirror in ("topic_id", "narrative_id"):  # as Request: mirrors of request_id, never another id
        if record.get(mirror) is not None and str(record[mirror]) != request_id:
            raise InputError(name, line, f"{mirror} {record[mirror]!r} differs from request_id {request_id!r}")
    title = record.get("title")
    if not isinstance(title, str):
        raise InputError(name, line, f"'title' must be a string, found {json_name(title)}")
    collections = record.get("collection_ids")
    if collections is not None and (not isinstance(collections, list)
                                    or not all(isinstance(c, str) for c in collections)):
        raise InputError(name, line, "'collection_ids' must be a list of strings")
    texts = {key: _optional(record, key, str, name, line)
             for key in ("problem_statement", "background", "original_background")}
    limits = {key: _optional(record, key, int, name, line) for key in ("limit", "word_limit")}
    return Request(request_id, title, **texts, **limits,
                   collection_ids=None if collections is None else tuple(collections), line=line)


def read_requests(path: PathLike) -> dict[str, Request]:
    """The requests of a JSONL file, keyed by id, in file order.

    :param path: The requests file.
    :raises InputError: A malformed line or an id twice, naming the line; an empty file.
    """
    name = display_name(path)
    requests: dict[str, Request] = {}
    for line, record in iter_json_lines(path):
        request = parse_request(record, name, line)
        if request.request_id in requests:
            raise InputError(name, line, f"duplicate request id {request.request_id!r} "
                                         f"(line {requests[request.request_id].line})")
        requests[request.request_id] = request
    if not requests:
        raise InputError(name, None, "no requests: the file is empty")
    return requests
