"""The JSONL that TREC AutoJudge's annotation page (``autojudge-annotate``) exports, read as
people's labels: its "Download JSONL" button and its ``export-db`` command write one annotation
per line, of three kinds:

- a **document** (``docid``): the label of the pair (topic, ``docid``), as a qrels line is;
- a **report** (``run_id`` and ``report``): the label of a whole RAG answer, the pair (topic,
  ``<run_id>/answer``); exampp's other answer pairs are ``<run>/<nugget_id>`` and
  ``<run>/<sentence_id>`` (:mod:`exampp.formats.assessment_sample`), and :data:`ANSWER` names the
  whole answer beside them;
- a **citation** (``citation``): one cited document of one sentence of a report. exampp has no
  pair for it: its support pairs (``<run>/<sentence_id>``) grade a sentence against every
  document it cites together, so these records are skipped.

The rating is the grade: ``Perfect`` 3, ``Mostly Good`` 2, ``So-so`` 1, ``Bad`` 0; ``Not rated``
(a record kept for its spans or comment) gives no label. ``username`` is the assessor (blank:
unknown), ``comment`` the note, ``updated_at`` (else ``created_at``, which ``export-db`` adds) the
time.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from exampp.errors import InputError
from exampp.files.io import excerpt, json_excerpt, json_name

GRADES = {"Perfect": 3, "Mostly Good": 2, "So-so": 1, "Bad": 0}
"""The page's ratings as grades."""
NOT_RATED = "Not rated"
ANSWER = "answer"
"""The last part of a whole answer's key, ``<run_id>/answer``."""


class Annotation(NamedTuple):
    """One rated annotation as a label of a pair (the label store checks its fields)."""

    line: int
    query_id: str
    key: str
    assessor: str
    grade: int
    note: str
    stamp: Any  # updated_at or created_at as given (None: not given)


def read_annotations(records: Iterable[tuple[int, Any]], path: str) -> Iterator[Annotation]:
    """The rated document and report annotations of numbered export records.

    :param records: (line number, JSON value) pairs.
    :param path: The file's name, for messages.
    :raises InputError: A record of no kind the page exports, an unknown rating, a field of the
        wrong type, naming the line.
    """
    for lineno, record in records:
        if not isinstance(record, Mapping):
            raise InputError(path, lineno, f"expected an annotation object, found {json_name(record)}")
        if "citation" in record:
            continue  # no exampp pair: see the module docstring
        if "docid" in record:
            key = _text(record, "docid", path, lineno)
        elif "run_id" in record:
            key = f"{_text(record, 'run_id', path, lineno)}/{ANSWER}"
        else:
            raise InputError(path, lineno, "not an autojudge-annotate record: expected a document (docid), "
                                           "a report (run_id) or a citation annotation")
        rating = record.get("rating")
        if rating == NOT_RATED:
            continue
        if not isinstance(rating, str) or rating not in GRADES:
            raise InputError(path, lineno, f"rating {json_excerpt(rating)} is none of "
                                           f"{', '.join(map(repr, [*GRADES, NOT_RATED]))}")
        topic = record.get("topic_id", record.get("request_id"))
        query_id = str(topic) if isinstance(topic, int) and not isinstance(topic, bool) else topic
        if not isinstance(query_id, str):
            raise InputError(path, lineno, f"topic_id {json_excerpt(topic)} is not a topic id")
        assessor = record.get("username") or ""
        note = record.get("comment") or ""
        for name, value in (("username", assessor), ("comment", note)):
            if not isinstance(value, str):
                raise InputError(path, lineno, f"{name} must be a text, found {json_name(value)}")
        yield Annotation(lineno, query_id, key, assessor, GRADES[rating], note.strip(),
                         record.get("updated_at") or record.get("created_at"))


def _text(record: Mapping[str, Any], name: str, path: str, lineno: int) -> str:
    value = record[name]
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise InputError(path, lineno, f"{name} must be a text, found {json_name(value)}")
    if not value:
        raise InputError(path, lineno, f"{name} {excerpt(value)} is empty")
    return value
