"""Runs as data: one system's ranking of documents per query, in trec_eval's order (score descending,
ties by docid in descending string order), and the protocol the measures read a run through.

The TREC run file format, its readers and writer, are :mod:`exampp.formats.trec_run`.
"""
from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, NamedTuple, Protocol


class RankedDoc(NamedTuple):
    """One document of a ranking.

    :ivar docid: The document's id.
    :ivar score: The run's score for it (higher ranks first).
    """

    docid: str
    score: float


class Restart:
    """Marks, in a stream of rankings, that everything handed out so far is void and every
    ranking follows again, complete (a run file turned out not to be grouped by query)."""


RESTART = Restart()


class Ranking(Sequence[RankedDoc]):
    """A ranking read from a run file: its documents as :class:`RankedDoc`, held as two lists
    (``docids``, ``scores``) so that a million-line run makes no tuple per document unless one
    is asked for. Compares equal to a list of the same ``(docid, score)`` pairs."""

    __slots__ = ("docids", "scores")

    def __init__(self, docids: list[str], scores: list[float]):
        self.docids = docids
        self.scores = scores

    @classmethod
    def of(cls, docs: Iterable[tuple[str, float]]) -> Ranking:
        """A ranking of these ``(docid, score)`` pairs, in the order given."""
        docs = list(docs)
        return cls([docid for docid, _ in docs], [score for _, score in docs])

    def __len__(self) -> int:
        return len(self.docids)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return Ranking(self.docids[index], self.scores[index])
        return RankedDoc(self.docids[index], self.scores[index])

    def __iter__(self) -> Iterator[RankedDoc]:
        return map(_ranked_doc, zip(self.docids, self.scores))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Ranking):
            return self.docids == other.docids and self.scores == other.scores
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # a list's equality, a list's unhashability

    def __repr__(self) -> str:
        return f"Ranking({list(self)!r})"


Block = tuple[str, Ranking]  # a query id and its ranking in trec_eval order


class Ranked(Protocol):
    """A run as the measures read it: a name and its rankings, one query at a time."""

    @property
    def name(self) -> str | None: ...

    @property
    def runid(self) -> str | None: ...

    @property
    def stdin(self) -> bool:
        """Read from standard input (so only in this process: a worker's is closed)."""
        ...

    @property
    def path(self) -> Path | str | None:
        """Where it was read from, as messages name it (None: made in memory)."""
        ...

    @property
    def query_ids(self) -> list[str]:
        """Its queries, sorted (a run file's: those its last read found)."""
        ...

    def blocks(self, queries: Collection[str] | None = None, depth: int | None = None,
               unique: bool = True) -> Iterator[Block | Restart]: ...


@dataclass(frozen=True)
class Run:
    """One system's ranking per query, in trec_eval order.

    :param name: The run's name (its runid).
    :param rankings: Each query's ranking, by query id.
    :param path: The file it was read from, if any.
    :param lines: Each query's first line in that file, for messages.
    """

    name: str
    rankings: dict[str, list[RankedDoc]]
    path: Path | str | None = field(default=None, compare=False)
    lines: dict[str, int] = field(default_factory=dict, compare=False)  # query -> first line in the file
    stdin: ClassVar[bool] = False  # held in memory, whatever it was read from

    @property
    def runid(self) -> str:
        return self.name

    def top(self, query_id: str, k: int | None) -> list[RankedDoc]:
        ranking = self.rankings.get(query_id, [])
        return ranking if k is None else ranking[:k]

    @property
    def query_ids(self) -> list[str]:
        return sorted(self.rankings)

    def blocks(self, queries: Collection[str] | None = None, depth: int | None = None,
               unique: bool = True) -> Iterator[Block]:
        """Each query's ranking that has documents (only those in ``queries`` when given; its
        top ``depth`` only, when given). Its docids were checked when it was read."""
        return ((q, Ranking.of(docs[:depth])) for q, docs in self.rankings.items()
                if docs and (queries is None or q in queries))


def ranked_pairs(runs: Mapping[str, Run]) -> set[tuple[str, str]]:
    """Every (query id, document id) some run ranks, at any depth.

    :param runs: The runs, by name.
    """
    return {(query_id, doc.docid) for run in runs.values() for query_id, docs in run.rankings.items() for doc in docs}


def trec_order(docs: Iterable[RankedDoc]) -> list[RankedDoc]:
    """Sort as trec_eval does: score descending, then docid descending (plain string order).

    :param docs: The documents of one ranking.
    """
    return sorted(docs, key=lambda d: (d.score, d.docid), reverse=True)


def from_scores(name: str, scores: Mapping[str, Mapping[str, float]]) -> Run:
    """Build a run from scores, each query's documents in trec_eval order.

    :param name: The run's name.
    :param scores: ``{qid: {docid: score}}``.
    """
    return Run(name, {q: trec_order(RankedDoc(d, float(s)) for d, s in docs.items()) for q, docs in scores.items()})


_ranked_doc = functools.partial(tuple.__new__, RankedDoc)  # RankedDoc((docid, score)) without Python-level __new__
