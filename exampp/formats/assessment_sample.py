"""An assessment sample: the pairs that people are asked to judge, each with the probability with
which it was drawn, so that estimates from their labels stay unbiased.

The file is TSV with a header line. Three kinds of pair:

- a passage of a query (runs' pooled passages)::

      query_id  doc_id  inclusion_probability  stratum  priority

- a nugget of a topic against one run's answer (RAG nugget assignment)::

      query_id  run  nugget_id  inclusion_probability  stratum  priority

- a sentence of one run's answer to a topic, with every segment it cites (RAG citation support)::

      query_id  run  sentence_id  inclusion_probability  stratum  priority

``inclusion_probability`` is in (0, 1]; ``stratum`` names the group the design drew the pair in
(the judge's grade, say); ``priority`` is the pair's place in the draw (sequential Poisson
sampling: the pairs of smallest priority are drawn), so that a larger budget drawn with the same
seed holds every pair of a smaller one. Rows come in priority order: the order to judge them in.
Other columns (texts added by ``exampp assess export``) are kept but not read. A pair's ``key``
names it in the assessors' label store and in qrels: its ``doc_id``, ``run/nugget_id`` or
``run/sentence_id``.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from exampp.collection.ids import check_id, id_problem
from exampp.errors import InputError
from exampp.files.io import PathLike, atomic_write, display_name, iter_lines

PASSAGE_COLUMNS = ("query_id", "doc_id", "inclusion_probability", "stratum", "priority")
NUGGET_COLUMNS = ("query_id", "run", "nugget_id", "inclusion_probability", "stratum", "priority")
SENTENCE_COLUMNS = ("query_id", "run", "sentence_id", "inclusion_probability", "stratum", "priority")
# a kind's id columns, from the column that names it
_IDS = {"passage": PASSAGE_COLUMNS[:2], "nugget": NUGGET_COLUMNS[:3], "sentence": SENTENCE_COLUMNS[:3]}


@dataclass(frozen=True)
class SamplePair:
    """One pair to judge: a passage of a query; with ``run`` and ``nugget_id`` set, a nugget of a
    topic against that run's answer; with ``run`` and ``sentence_id``, a sentence of that answer."""

    query_id: str
    doc_id: str | None
    inclusion_probability: float
    stratum: str = ""
    priority: float = 0.0
    run: str | None = None
    nugget_id: str | None = None
    sentence_id: str | None = None

    @classmethod
    def of(cls, kind: str, ids: Sequence[str], probability: float, stratum: str = "",
           priority: float = 0.0) -> SamplePair:
        """A pair of ``kind`` from the values of its id columns (:attr:`ids`)."""
        if kind == "passage":
            return cls(ids[0], ids[1], probability, stratum, priority)
        item = {"nugget_id" if kind == "nugget" else "sentence_id": ids[2]}
        return cls(ids[0], None, probability, stratum, priority, run=ids[1], **item)

    @property
    def kind(self) -> str:
        """``passage``, ``nugget`` or ``sentence``."""
        return "nugget" if self.nugget_id is not None else "sentence" if self.sentence_id is not None else "passage"

    @property
    def is_nugget(self) -> bool:
        return self.kind == "nugget"

    @property
    def ids(self) -> list[str]:
        """The values of the kind's id columns."""
        if self.kind == "passage":
            return [self.query_id, str(self.doc_id)]
        return [self.query_id, str(self.run), str(self.nugget_id if self.kind == "nugget" else self.sentence_id)]

    @property
    def key(self) -> str:
        """The pair's name within its query: the passage id, ``run/nugget_id`` or ``run/sentence_id``."""
        return "/".join(self.ids[1:])


def write_sample(pairs: Sequence[SamplePair], path: PathLike) -> int:
    """Write ``pairs`` (all of one kind) as an assessment sample TSV, atomically; returns their number."""
    kind = pairs[0].kind if pairs else "passage"
    if any(pair.kind != kind for pair in pairs):
        raise ValueError("a sample holds pairs of one kind: passages, nuggets or sentences")
    with atomic_write(path) as out:
        out.write("\t".join([*_IDS[kind], *PASSAGE_COLUMNS[2:]]) + "\n")
        for pair in pairs:
            ids = pair.ids
            for value in ids:
                check_id(str(value), "id")
            out.write("\t".join([*map(str, ids), repr(float(pair.inclusion_probability)), pair.stratum,
                                 repr(float(pair.priority))]) + "\n")
    return len(pairs)


def read_sample(source: PathLike) -> list[SamplePair]:
    """The pairs of an assessment sample TSV, in file order; :class:`InputError` names the file, the line
    and what is wrong (a missing column, a probability outside (0, 1], a pair twice)."""
    name = display_name(source)
    lines = iter(iter_lines(source))
    header = next(((n, line) for n, line in lines if line.strip()), None)
    if header is None:
        raise InputError(name, None, "empty sample: expected a header line "
                                     f"({' '.join(PASSAGE_COLUMNS[:3])} ...)")
    columns = header[1].rstrip("\r").split("\t")
    kind = "nugget" if "nugget_id" in columns else "sentence" if "sentence_id" in columns else "passage"
    id_columns = _IDS[kind]
    required = (*id_columns, "inclusion_probability")
    missing = [c for c in required if c not in columns]
    if missing:
        raise InputError(name, header[0], f"the header lacks the column(s) {', '.join(missing)} "
                                          f"(found: {', '.join(columns)})")
    at = {column: i for i, column in enumerate(columns)}
    pairs: list[SamplePair] = []
    seen: set[tuple[str, str]] = set()
    for lineno, line in lines:
        if not line.strip():
            continue
        cells = line.rstrip("\r").split("\t")
        if len(cells) < len(columns):
            raise InputError(name, lineno, f"{len(cells)} column(s), the header names {len(columns)}")
        get = lambda column: cells[at[column]] if column in at else ""  # noqa: E731
        ids = [get(c) for c in id_columns]
        for column, value in zip(id_columns, ids):
            problem = id_problem(value, first_column=column == "query_id")
            if problem:
                raise InputError(name, lineno, f"{column} {value!r} {problem}")
        probability = _number(get("inclusion_probability"), "inclusion_probability", name, lineno)
        if not 0 < probability <= 1:
            raise InputError(name, lineno, f"inclusion_probability must be in (0, 1], found {probability!r}")
        priority = _number(get("priority"), "priority", name, lineno) if get("priority") else float(len(pairs))
        pair = SamplePair.of(kind, ids, probability, get("stratum"), priority)
        if (pair.query_id, pair.key) in seen:
            raise InputError(name, lineno, f"the pair {pair.query_id} {pair.key} is in the sample twice")
        seen.add((pair.query_id, pair.key))
        pairs.append(pair)
    return pairs


def _number(text: str, column: str, name: str, lineno: int) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(name, lineno, f"{column} must be a number, found {text!r}") from None
    if not math.isfinite(value):
        raise InputError(name, lineno, f"{column} must be finite, found {text!r}")
    return value


def sample_keys(pairs: Iterable[SamplePair]) -> set[tuple[str, str]]:
    """(query_id, key) of every pair."""
    return {(pair.query_id, pair.key) for pair in pairs}
