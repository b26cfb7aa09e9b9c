"""Topic files: queries (:class:`~exampp.collection.topics.Topic`), with their subtopics, description
and narrative where the file gives them.

Read from a JSON map ``{query_id: text}``, a JSON list or JSONL of topic objects, a TSV file
``query_id<TAB>text``, or ``irds:<dataset-id>`` (ir_datasets); written as exampp JSONL. A topic
object with a ``request_id`` is a TREC AutoJudge request (:mod:`exampp.formats.reports`): its
``title`` is the query, its ``problem_statement`` the description and its ``background`` the
narrative.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from exampp.collection.ids import check_id, check_query_id
from exampp.collection.topics import Subtopic, Topic
from exampp.errors import InputError
from exampp.files.io import (
    PathLike,
    atomic_write,
    display_name,
    first_nonblank,
    held_lines,
    iter_lines,
    json_lines,
    parse_json,
)
from exampp.formats.irds import IRDS_PREFIX, load_ir_dataset
from exampp.formats.reports import parse_request

_ID_KEYS = ("query_id", "qid")
_TEXT_KEYS = ("text", "title", "query_text")
_FACET_TEXT_KEYS = ("text", "facet_text")
_GUIDANCE_KEYS = ("description", "narrative")  # optional fields of a topic object, as ir_datasets names them


def read_topics(source: str | PathLike) -> dict[str, Topic]:
    """Topics keyed by query id, in file order; the format is recognised from the content.

    A file is read once (JSON is held whole, within the bounds of
    :func:`~exampp.files.io.held_lines`; TSV is read line by line).

    :param source: A topics file (a JSON list, JSONL or a ``{query_id: text}`` object, or TSV),
        ``-`` for standard input, or ``irds:<dataset-id>``.
    :raises InputError: An empty file, a malformed record or a query id twice, naming the line.
    """
    if isinstance(source, str) and source.startswith(IRDS_PREFIX):
        return _read_irds_topics(source)
    name = display_name(source)
    first, lines = first_nonblank(iter_lines(source))
    if first is None:
        raise InputError(name, None, "empty topics file")
    first = first.lstrip()
    if first.startswith("["):
        whole = parse_json("\n".join(line for _, line in held_lines(lines, name)), name)
        if not isinstance(whole, list):
            raise InputError(name, None, "expected a JSON list of topic objects")
        records: list[tuple[int | None, Topic]] = [(None, _topic_from_object(obj, name, None)) for obj in whole]
    elif first.startswith("{"):
        records = _object_records(held_lines(lines, name), name)
    else:
        records = _tsv_records(lines, name)
    topics: dict[str, Topic] = {}
    for lineno, topic in records:
        if topic.query_id in topics:
            raise InputError(name, lineno, f"duplicate query id {topic.query_id!r}")
        topics[topic.query_id] = topic
    return topics


def write_topics(topics: Iterable[Topic] | Mapping[str, Topic], path: PathLike) -> None:
    """Write exampp JSONL ``{"query_id", "text", "subtopics"?: [{"facet_id", "text"}], "description"?,
    "narrative"?}``, atomically.

    :param topics: The topics, as a list or keyed by query id.
    :param path: The file to write.
    """

    items = topics.values() if isinstance(topics, Mapping) else topics
    with atomic_write(path) as fh:
        for topic in items:
            check_query_id(topic.query_id)
            record: dict[str, Any] = {"query_id": topic.query_id, "text": topic.text}
            if topic.subtopics:
                record["subtopics"] = [{"facet_id": check_id(s.facet_id, "facet id"), "text": s.text}
                                       for s in topic.subtopics]
            record.update({key: getattr(topic, key) for key in _GUIDANCE_KEYS if getattr(topic, key)})
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")


def _object_records(lines: list[tuple[int, str]], name: str) -> list[tuple[int | None, Topic]]:
    """A ``{query_id: text}`` map, or JSONL with one topic object per line."""
    pairs: list[tuple[str, Any]] = []  # the pairs of the last object parsed: the document's own, when it is one

    def keep_pairs(read: list[tuple[str, Any]]) -> dict[str, Any]:  # a dict keeps a repeated key's last value
        pairs[:] = read
        return dict(read)

    try:
        whole = parse_json("\n".join(line for _, line in lines), name, object_pairs_hook=keep_pairs)
    except InputError:
        whole = None  # several JSON values: JSONL (whose reader reports any real error by line)
    if isinstance(whole, dict) and not any(key in whole for key in _ID_KEYS):
        records: list[tuple[int | None, Topic]] = []
        for query_id, text in pairs:  # a repeated query id is refused as such, not overwritten
            if not isinstance(text, str) or not text.strip():
                raise InputError(name, None, f"query {query_id!r}: text must be a non-empty string")
            records.append((None, Topic(_query_id(query_id, name, None), text.strip())))
        return records
    del whole  # JSONL, whose lines were read as one document: not held while they are read again
    pairs.clear()
    return [(lineno, _topic_from_object(obj, name, lineno)) for lineno, obj in json_lines(lines, name)]


def _query_id(value: object, name: str, lineno: int | None) -> str:
    try:
        return check_query_id(value)
    except ValueError as exc:
        raise InputError(name, lineno, str(exc)) from None


def _topic_from_object(obj: Any, path: str, lineno: int | None) -> Topic:
    if not isinstance(obj, dict):
        raise InputError(path, lineno, f"expected a topic object, found {type(obj).__name__}")
    if "request_id" in obj:
        return _topic_from_request(obj, path, lineno)
    query_id = _first(obj, _ID_KEYS, "query id", path, lineno)
    if isinstance(query_id, int) and not isinstance(query_id, bool):
        query_id = str(query_id)
    if not isinstance(query_id, str) or not query_id:
        raise InputError(path, lineno, "'query_id' must be a non-empty string")
    query_id = _query_id(query_id, path, lineno)
    text = _nonblank(_first(obj, _TEXT_KEYS, "text", path, lineno), "text", path, lineno)
    subtopics = obj.get("subtopics") or []
    if not isinstance(subtopics, list):
        raise InputError(path, lineno, "'subtopics' must be a list of {\"facet_id\", \"text\"} objects")
    facets: list[Subtopic] = []
    for sub in subtopics:
        if not isinstance(sub, dict):
            raise InputError(path, lineno, "'subtopics' must be a list of {\"facet_id\", \"text\"} objects")
        facet_id = _nonblank(sub.get("facet_id"), "facet_id", path, lineno)
        try:  # facets become qrels queries <query_id>/<facet_id>
            check_id(facet_id, "facet id")
        except ValueError as exc:
            raise InputError(path, lineno, str(exc)) from None
        if any(f.facet_id == facet_id for f in facets):
            raise InputError(path, lineno, f"duplicate facet id {facet_id!r} in query {query_id!r}")
        facets.append(Subtopic(facet_id, _nonblank(_first(sub, _FACET_TEXT_KEYS, "facet text", path, lineno),
                                                   "facet text", path, lineno)))
    guidance = {key: _optional_text(obj.get(key), key, path, lineno) for key in _GUIDANCE_KEYS}
    return Topic(query_id, text, tuple(facets), **guidance)


def _topic_from_request(obj: dict[str, Any], path: str, lineno: int | None) -> Topic:
    """An AutoJudge request as a topic: the problem statement says what the query means (TREC's
    description), the background who asks and why, which guides judging as a narrative does."""
    request = parse_request(obj, path, lineno)
    return Topic(_query_id(request.request_id, path, lineno), _nonblank(request.title, "title", path, lineno),
                 description=_optional_text(request.problem_statement, "problem_statement", path, lineno),
                 narrative=_optional_text(request.background, "background", path, lineno))


def _optional_text(value: Any, name: str, path: str, lineno: int | None) -> str | None:
    """An optional text field: None when absent, null or blank."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(path, lineno, f"{name!r} must be a string")
    return value.strip() or None


def _first(obj: dict, keys: tuple[str, ...], what: str, path: str, lineno: int | None) -> Any:
    for key in keys:
        if key in obj:
            return obj[key]
    raise InputError(path, lineno, f"missing {what}: expected one of the fields {', '.join(map(repr, keys))}")


def _nonblank(value: Any, name: str, path: str, lineno: int | None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(path, lineno, f"{name!r} must be a non-empty string")
    return value.strip()


def _tsv_records(lines: Iterable[tuple[int, str]], name: str) -> list[tuple[int | None, Topic]]:
    records: list[tuple[int | None, Topic]] = []
    for lineno, line in lines:
        if not line.strip():
            continue
        query_id, tab, text = line.partition("\t")
        if not tab or not query_id.strip() or not text.strip():
            raise InputError(name, lineno, "expected 'query_id<TAB>text'")
        records.append((lineno, Topic(_query_id(query_id.strip(), name, lineno), text.strip())))
    return records


def _read_irds_topics(source: str) -> dict[str, Topic]:
    dataset = load_ir_dataset(source)
    if not dataset.has_queries():
        raise InputError(source, None, "this ir_datasets dataset has no queries")
    return {q.query_id: Topic(q.query_id, q.default_text(), description=_irds_text(q, "description"),
                              narrative=_irds_text(q, "narrative"))
            for q in dataset.queries_iter()}


def _irds_text(query: Any, field: str) -> str | None:
    """A TREC query's description or narrative (ir_datasets' TrecQuery), None for queries without one."""
    value = getattr(query, field, None)
    return (value.strip() or None) if isinstance(value, str) else None
