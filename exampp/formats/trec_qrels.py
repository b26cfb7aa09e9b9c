"""TREC qrels files: ``qid iter docid rel``, and intent (diversity) qrels ``qid subtopic docid label``."""
from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal

from exampp.collection.ids import check_id, check_query_id, line_problem
from exampp.collection.qrels import IntentQrels, Label, Qrels, as_label, label_problem
from exampp.errors import InputError
from exampp.files.io import PathLike, atomic_write, display_name, excerpt, iter_lines
from exampp.formats.irds import IRDS_PREFIX, load_ir_dataset


def _python_number(text: str) -> Label | None:
    """The number Python reads in ``text`` (int when integral, so ``2`` and ``2.0`` read alike), or None."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return as_label(float(text))
    except ValueError:
        return None


_C_LONG = (-2**63, 2**63 - 1)
_LEADING_INTEGER = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")


def atol(text: str) -> int:
    """What C's ``atol`` reads in ``text``, as trec_eval reads a qrels relevance: after optional
    whitespace, an optional sign and the ASCII digits that follow; the rest is ignored, and with
    no digits it is 0 (glibc's ``strtol`` holds a number too long at the ends of a long).

    :param text: A qrels relevance column.
    """
    match = _LEADING_INTEGER.match(text)
    return min(max(int(match.group(1)), _C_LONG[0]), _C_LONG[1]) if match else 0


def parse_label(text: str, what: str = "relevance") -> Label:
    """The label a qrels column spells.

    A label is read as a number (:func:`as_label`), and trec_eval reads the same column with
    :func:`atol`. The two readings may differ only by a fraction (``2.5``: exampp's fractional
    label, which trec_eval's measures refuse, see :func:`~exampp.collection.qrels.check_integer_labels`).

    :param text: The column's text.
    :param what: What the column is, for the message.
    :raises ValueError: Why the text is no label: a spelling the two read as different grades
        (``1e1``, ``10e-1``, ``1_0``, a digit outside ASCII) is refused, so that no file means one
        thing to exampp and another to trec_eval.
    """
    value = _python_number(text)
    if value is None:
        raise ValueError(f"{what} {excerpt(text)} is not a number")
    problem = label_problem(value)
    if problem is not None:
        raise ValueError(f"{what} {text[:40]!r} {problem}")
    read_by_c = atol(text)
    if read_by_c != math.trunc(value):
        raise ValueError(f"{what} {excerpt(text)} refused: trec_eval reads it as {read_by_c} (C's atol takes its "
                         f"leading digits), Python as {value!r}; write the grade meant in plain digits")
    return value


def _judgments(source: PathLike, columns: str) -> Iterator[tuple[int, list[str]]]:
    """``(line number, its 4 columns)`` of each judgment line (blank and ``#`` lines skipped); an
    :class:`InputError` naming the line where one is malformed."""
    for lineno, line in iter_lines(source):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        problem = line_problem(line)
        if problem is not None:
            raise InputError(display_name(source), lineno, problem)
        cols = stripped.split()
        if len(cols) != 4:
            raise InputError(display_name(source), lineno,
                             f"expected 4 columns '{columns}', found {len(cols)}{_run_hint(cols)}")
        yield lineno, cols


def _run_hint(cols: list[str]) -> str:
    """What a line of 6 columns with a number as the fifth most likely is: a run given where qrels are asked."""
    if len(cols) == 6 and _python_number(cols[4]) is not None:
        return ": this looks like a run ('qid Q0 docid rank score runid'), not qrels"
    return ""


def read_qrels(source: PathLike) -> Qrels:
    """Read a TREC qrels file (plain or gzipped), or ``irds:<dataset-id>`` through ir_datasets.

    Labels are integers or decimal numbers; each keeps its type (see :data:`Label`).

    :param source: The qrels file, or ``irds:<dataset-id>``.
    :raises InputError: A malformed or duplicate line, or a label trec_eval would read as another
        grade (:func:`parse_label`), naming its line; or no judgments at all.
    """
    if isinstance(source, str) and source.startswith(IRDS_PREFIX):
        return _read_irds_qrels(source)
    path = display_name(source)
    qrels: Qrels = {}
    for lineno, (qid, _, docid, rel_text) in _judgments(source, "qid iter docid rel"):
        try:
            rel = parse_label(rel_text)
        except ValueError as exc:
            raise InputError(path, lineno, str(exc)) from None
        judged = qrels.setdefault(qid, {})
        if docid in judged:
            raise InputError(path, lineno, f"duplicate docid {excerpt(docid)} in query {excerpt(qid)}")
        judged[docid] = rel
    if not qrels:
        raise InputError(path, None, "empty qrels: no judgment lines")
    return qrels


def _read_irds_qrels(source: str) -> Qrels:
    dataset = load_ir_dataset(source)
    if not dataset.has_qrels():
        raise InputError(source, None, "this ir_datasets dataset has no qrels")
    qrels: Qrels = {}
    for qrel in dataset.qrels_iter():
        qrels.setdefault(qrel.query_id, {})[qrel.doc_id] = as_label(qrel.relevance)
    if not qrels:
        raise InputError(source, None, "empty qrels")
    return qrels


def write_qrels(qrels: Mapping[str, Mapping[str, float]], path: PathLike) -> None:
    """Write ``qid 0 docid rel`` lines sorted by query then docid, atomically.

    An integer-valued label is written as an integer (``2``, not ``2.0``), a fractional one as the
    shortest decimal that reads back as the same float, in plain digits (``0.00002``, not ``2e-05``,
    which trec_eval reads as 2).

    :param qrels: ``{query_id: {docid: label}}``.
    :param path: The file to write.
    :raises ValueError: A label trec_eval could not read back, or an id that would not fit a column.
    """
    with atomic_write(path) as fh:
        for qid in sorted(qrels):
            check_query_id(qid)
            for docid in sorted(qrels[qid]):
                rel = as_label(qrels[qid][docid])
                problem = label_problem(rel)
                if problem is not None:
                    raise ValueError(f"relevance {rel} of docid {docid!r} in query {qid!r} {problem}")
                fh.write(f"{qid} 0 {check_id(docid, 'docid')} {format(Decimal(repr(rel)), 'f')}\n")


# --- intent-aware qrels (TREC Web diversity format) -------------------------------------------


def read_intent_qrels(path: PathLike) -> IntentQrels:
    """Read intent-aware qrels: ``qid subtopic docid label`` lines (the TREC Web track's diversity
    qrels; plain or gzipped), the label an integer (read as :func:`parse_label` reads it); a docid
    appears once per subtopic.

    :param path: The qrels file.
    :raises InputError: A malformed or duplicate line, or a label that is not an integer, naming its line.
    """
    name = display_name(path)
    qrels: IntentQrels = {}
    for lineno, (qid, subtopic, docid, rel_text) in _judgments(path, "qid subtopic docid label"):
        try:
            rel = parse_label(rel_text, "label")
        except ValueError as exc:
            raise InputError(name, lineno, str(exc)) from None
        if not isinstance(rel, int):
            raise InputError(name, lineno, f"label {rel_text[:40]!r} is not an integer")
        judged = qrels.setdefault(qid, {}).setdefault(subtopic, {})
        if docid in judged:
            raise InputError(name, lineno, f"duplicate docid {excerpt(docid)} in query {excerpt(qid)} "
                                           f"subtopic {excerpt(subtopic)}")
        judged[docid] = rel
    if not qrels:
        raise InputError(name, None, "empty qrels: no judgment lines")
    return qrels


def write_intent_qrels(qrels: Mapping[str, Mapping[str, Mapping[str, int]]], path: PathLike) -> None:
    """Write ``qid subtopic docid label`` lines sorted by query, subtopic (numerically where it is
    a number) and docid, atomically.

    :param qrels: ``{query_id: {subtopic: {docid: label}}}``.
    :param path: The file to write.
    """

    def subtopic_order(subtopic: str) -> tuple[int, int, str]:
        return (0, int(subtopic), "") if subtopic.isdigit() else (1, 0, subtopic)

    with atomic_write(path) as fh:
        for qid in sorted(qrels):
            check_query_id(qid)
            for subtopic in sorted(qrels[qid], key=subtopic_order):
                check_id(subtopic, "subtopic")
                for docid, rel in sorted(qrels[qid][subtopic].items()):
                    if not isinstance(rel, int) or label_problem(rel) is not None:
                        raise ValueError(f"label {rel!r} of docid {docid!r} in query {qid!r} subtopic {subtopic!r} "
                                         f"is not an integer in range")
                    fh.write(f"{qid} {subtopic} {check_id(docid, 'docid')} {rel}\n")


def write_intent_key(order: Mapping[str, Sequence[str]], path: PathLike,
                     texts: Mapping[str, str] | None = None) -> None:
    """Write which question each subtopic of per-question qrels is: a TSV with a header,
    ``query_id subtopic question_id text``, atomically.

    :param order: Each query's question ids, subtopic 1 first.
    :param path: The file to write.
    :param texts: Question id -> text; the column is empty where unknown.
    """

    texts = texts or {}
    with atomic_write(path) as fh:
        fh.write("query_id\tsubtopic\tquestion_id\ttext\n")
        for qid in sorted(order):
            for subtopic, question in enumerate(order[qid], start=1):
                text = " ".join(texts.get(question, "").split())  # one line, no tabs
                fh.write(f"{qid}\t{subtopic}\t{question}\t{text}\n")
