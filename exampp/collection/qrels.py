"""TREC qrels files: ``qid iter docid rel``."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from exampp.collection.ids import check_id, check_query_id, line_problem
from exampp.collection.io import PathLike, atomic_write, display_name, iter_lines
from exampp.collection.irds import IRDS_PREFIX, load_ir_dataset
from exampp.errors import InputError

Qrels = dict[str, dict[str, int]]
"""``{query_id: {docid: relevance}}``; relevance is an integer grade (negative = judged, unusable)."""

# Measures keep one entry per grade from 0 to the highest (as trec_eval does), and pytrec_eval
# holds a grade in a C long: a grade far beyond any judging scale would exhaust memory or crash.
MAX_GRADE = 10_000


def read_qrels(source: PathLike) -> Qrels:
    """Read a TREC qrels file (plain or gzipped), or ``irds:<dataset-id>`` through ir_datasets."""
    if isinstance(source, str) and source.startswith(IRDS_PREFIX):
        return _read_irds_qrels(source)
    path = display_name(source)
    qrels: Qrels = {}
    for lineno, line in iter_lines(source):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        problem = line_problem(line)
        if problem is not None:
            raise InputError(path, lineno, problem)
        cols = stripped.split()
        if len(cols) != 4:
            raise InputError(path, lineno, f"expected 4 columns 'qid iter docid rel', found {len(cols)}")
        qid, _, docid, rel_text = cols
        try:
            rel = int(rel_text)
        except ValueError:
            raise InputError(path, lineno, f"relevance {rel_text!r} is not an integer") from None
        if abs(rel) > MAX_GRADE:
            raise InputError(path, lineno, f"relevance {rel_text[:40]!r} is out of range "
                                           f"(-{MAX_GRADE} to {MAX_GRADE})")
        judged = qrels.setdefault(qid, {})
        if docid in judged:
            raise InputError(path, lineno, f"duplicate docid {docid!r} in query {qid!r}")
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
        qrels.setdefault(qrel.query_id, {})[qrel.doc_id] = int(qrel.relevance)
    if not qrels:
        raise InputError(source, None, "empty qrels")
    return qrels


def write_qrels(qrels: Mapping[str, Mapping[str, int]], path: PathLike) -> None:
    """Write ``qid 0 docid rel`` lines sorted by query then docid, atomically."""
    with atomic_write(path) as fh:
        for qid in sorted(qrels):
            check_query_id(qid)
            for docid in sorted(qrels[qid]):
                rel = int(qrels[qid][docid])
                if abs(rel) > MAX_GRADE:
                    raise ValueError(f"relevance {rel} of docid {docid!r} in query {qid!r} is out of range "
                                     f"(-{MAX_GRADE} to {MAX_GRADE})")
                fh.write(f"{qid} 0 {check_id(docid, 'docid')} {rel}\n")
