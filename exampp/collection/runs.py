"""TREC run files: ``qid Q0 docid rank score runid``.

Rankings are held in trec_eval's order (score descending, ties by docid in descending string
order); the rank column is not trusted. A docid twice in one query is an error, as in trec_eval.

Two ways to read one: :func:`read_run` holds the whole run in memory (:class:`Run`, random
access for pooling and scoring); :class:`RunFile` hands out one query's ranking at a time, so
that evaluating a run of any size needs memory for one query only, when the file is grouped by
query as runs are written (a run that is not, or a pipe that cannot be read again, is held whole).
"""
from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, Protocol

from exampp.collection.ids import check_id, check_query_id, line_problem
from exampp.collection.io import InputLines, PathLike, atomic_write, display_name, is_stdio
from exampp.errors import InputError

RUN_SUFFIXES = (".gz", ".run", ".txt", ".trec", ".tsv")


class RankedDoc(NamedTuple):
    docid: str
    score: float


class Restart:
    """Marks, in a stream of rankings, that everything handed out so far is void and every
    ranking follows again, complete (a run file turned out not to be grouped by query)."""


RESTART = Restart()
Block = tuple[str, list[RankedDoc]]  # a query id and its ranking in trec_eval order


class Ranked(Protocol):
    """A run as the measures read it: a name and its rankings, one query at a time."""

    @property
    def name(self) -> str | None: ...

    def blocks(self, queries: Collection[str] | None = None) -> Iterator[Block | Restart]: ...


@dataclass(frozen=True)
class Run:
    """One system's ranking per query, in trec_eval order."""

    name: str
    rankings: dict[str, list[RankedDoc]]
    path: Path | str | None = field(default=None, compare=False)
    lines: dict[str, int] = field(default_factory=dict, compare=False)  # query -> first line in the file

    def top(self, query_id: str, k: int | None) -> list[RankedDoc]:
        ranking = self.rankings.get(query_id, [])
        return ranking if k is None else ranking[:k]

    @property
    def query_ids(self) -> list[str]:
        return sorted(self.rankings)

    def blocks(self, queries: Collection[str] | None = None) -> Iterator[Block]:
        """Each query's ranking that has documents (only those in ``queries`` when given)."""
        return ((q, docs) for q, docs in self.rankings.items() if docs and (queries is None or q in queries))


def trec_order(docs: Iterable[RankedDoc]) -> list[RankedDoc]:
    """Sort as trec_eval does: score descending, then docid descending (plain string order)."""
    return sorted(docs, key=lambda d: (d.score, d.docid), reverse=True)


def from_scores(name: str, scores: Mapping[str, Mapping[str, float]]) -> Run:
    """Build a run from ``{qid: {docid: score}}``."""
    return Run(name, {q: trec_order(RankedDoc(d, float(s)) for d, s in docs.items()) for q, docs in scores.items()})


# A result line: (line number, qid, docid, score, runid). A plain tuple: runs have millions.
_Line = tuple[int, str, str, float, str]


def _run_lines(lines: Iterable[tuple[int, str]], name: str) -> Iterator[_Line]:
    """The result lines of a run file, checked (``#`` lines are comments; text after the runid
    column is ignored, as trec_eval does)."""
    for lineno, line in lines:
        cols = line.split()
        if not cols or cols[0][0] == "#":
            continue
        problem = line_problem(line)
        if problem is not None:
            raise InputError(name, lineno, problem)
        if len(cols) < 6:
            raise InputError(name, lineno, f"expected 6 columns 'qid Q0 docid rank score runid', found {len(cols)}")
        try:
            score = float(cols[4])
        except ValueError:
            raise InputError(name, lineno, f"score {cols[4]!r} is not a number") from None
        if score != score:
            raise InputError(name, lineno, "score is NaN")
        yield lineno, cols[0], cols[2], score, cols[5]


def _add(docs: dict[str, float], line: _Line, name: str) -> None:
    lineno, qid, docid, score, _ = line
    if docid in docs:
        raise InputError(name, lineno, f"duplicate docid {docid!r} in query {qid!r}")
    docs[docid] = score


def _ranking(docs: Mapping[str, float]) -> list[RankedDoc]:
    return trec_order(RankedDoc(docid, score) for docid, score in docs.items())


def read_run(path: PathLike, name: str | None = None, depth: int | None = None) -> Run:
    """Read a TREC run file (plain or gzipped, ``-`` for standard input; ``#`` lines are comments).

    The run's name is its runid column (the first one seen) unless ``name`` is given. ``depth``
    keeps each query's top-``depth`` documents only: a run file grouped by query is then read
    in the memory of one query plus what is kept.
    """
    source = RunFile(path)
    rankings: dict[str, list[RankedDoc]] = {}
    for block in source.blocks():
        if isinstance(block, Restart):
            rankings.clear()
        else:
            rankings[block[0]] = block[1][:depth]
    return Run(name or source.name, rankings, source.path, source.lines)


class RunFile:
    """A run file read one query at a time (see the module docstring); each :meth:`blocks` call
    reads the file once.

    ``name`` (the first runid) and ``lines`` (query -> its first line) are known once reading
    has begun; ``lines`` names every query of the file when reading has ended.
    """

    def __init__(self, path: PathLike):
        self._source = path
        self.path: Path | str = display_name(path) if is_stdio(path) else Path(path)  # as messages name it
        self.name: str | None = None
        self.lines: dict[str, int] = {}

    @property
    def query_ids(self) -> list[str]:
        return sorted(self.lines)

    def blocks(self, queries: Collection[str] | None = None) -> Iterator[Block | Restart]:
        """Each query's ranking in trec_eval order (only those in ``queries`` when given), as
        soon as the file moves on to another query; :data:`RESTART` when it comes back to a
        query it had left, after which every ranking follows again, whole."""
        shown = display_name(self._source)
        with InputLines(self._source) as source:
            hold = not source.rewind()  # a pipe: a ranking is only known complete at the end
            while True:
                self.lines = {}
                try:
                    yield from self._read(source, shown, queries, hold)
                    break
                except _Ungrouped:
                    source.rewind()
                    hold = True
                    yield RESTART
        if self.name is None:
            raise InputError(shown, None, "empty run: no result lines")

    def _read(self, source: InputLines, shown: str, queries: Collection[str] | None,
              hold: bool) -> Iterator[Block]:
        # Every query's documents are read and checked (a repeated docid is an error, as in
        # read_run); only the wanted ones are handed out.
        held: dict[str, dict[str, float]] = {}
        current: str | None = None
        docs: dict[str, float] = {}

        def wanted(qid: str | None, docs: dict[str, float]) -> bool:
            return qid is not None and bool(docs) and (queries is None or qid in queries)

        for line in _run_lines(source, shown):
            lineno, qid, _, _, runid = line
            if self.name is None:
                self.name = runid
            if qid != current:
                if qid in self.lines and not hold:
                    raise _Ungrouped
                if not hold and wanted(current, docs):
                    yield current, _ranking(docs)
                current, docs = qid, held.setdefault(qid, {}) if hold else {}
                self.lines.setdefault(qid, lineno)
            _add(docs, line, shown)
        if hold:
            for qid in list(held):  # each query's documents go as its ranking is handed out
                docs = held.pop(qid)
                if wanted(qid, docs):
                    yield qid, _ranking(docs)
        elif wanted(current, docs):
            yield current, _ranking(docs)


class _Ungrouped(Exception):
    """A query's lines came back after another query's: the file is not grouped by query."""


def check_judged(runs: Mapping[str, Run] | Iterable[Run | RunFile], judged: Iterable[str], source: PathLike,
                 strict: bool = False) -> list[str]:
    """Queries a run ranks but ``source`` (qrels) does not judge: an error naming the run's
    file:line when ``strict``, else one warning line per run (they are left out, as by trec_eval).
    A :class:`RunFile` is checked on the queries its last read found."""
    judged = set(judged)
    warnings = []
    items = runs.values() if isinstance(runs, Mapping) else runs
    for run in sorted(items, key=lambda r: str(r.name)):
        extra = [q for q in run.query_ids if q not in judged]
        if not extra:
            continue
        where = f"{run.path or run.name}:{run.lines[extra[0]]}" if extra[0] in run.lines else str(run.path or run.name)
        if strict:
            raise InputError(run.path or run.name, run.lines.get(extra[0]), f"query {extra[0]!r} is not in {source}")
        more = f" and {len(extra) - 1} more" if len(extra) > 1 else ""
        warnings.append(f"{where}: warning: query {extra[0]!r}{more} not in {source}, left out")
    return warnings


def run_files(directory: PathLike) -> list[Path]:
    """The run files of a directory (hidden files skipped), sorted by name."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(directory, None, "not a directory of runs")
    files = sorted(p for p in directory.iterdir() if p.is_file() and not p.name.startswith("."))
    if not files:
        raise InputError(directory, None, "no run files in directory")
    return files


def run_paths(source: PathLike | Iterable[PathLike]) -> list[Path | str]:
    """The run files named: files as given (``-`` is standard input), folders expanded by :func:`run_files`."""
    sources = [source] if isinstance(source, (str, Path)) else list(source)
    paths: list[Path | str] = []
    for item in sources:
        if is_stdio(item):
            paths.append(item)
        else:
            paths.extend(run_files(item) if Path(item).is_dir() else [Path(item)])
    if sum(map(is_stdio, paths)) > 1:
        raise InputError(display_name("-"), None, "standard input can be read only once")
    return paths


def read_runs(source: PathLike | Iterable[PathLike], depth: int | None = None) -> dict[str, Run]:
    """Read a directory of runs, or a list of run files/directories, keyed by run name (each
    query's top-``depth`` documents only, when given: see :func:`read_run`).

    Two files with the same runid are an error: the leaderboard would silently merge them.
    """
    runs: dict[str, Run] = {}
    for path in run_paths(source):
        run = read_run(path, depth=depth)
        check_unique_name(runs, run)
        runs[run.name] = run
    return runs


def check_unique_name(seen: Mapping[str, Run | RunFile], run: Run | RunFile) -> None:
    """Two run files with the same runid are an error: their results would merge."""
    if run.name in seen:
        raise InputError(run.path if run.path is not None else run.name, None,
                         f"run name {run.name!r} already used by {seen[run.name].path}")


def write_run(run: Run, path: PathLike, depth: int | None = None) -> None:
    """Write a run in TREC format (ranks 1-based, in trec_eval order), atomically."""
    check_id(run.name, "run name")
    with atomic_write(path) as fh:
        for qid in sorted(run.rankings):
            check_query_id(qid)
            for rank, doc in enumerate(run.top(qid, depth), start=1):
                if math.isnan(doc.score):  # no reader takes it back: trec_eval's order is undefined
                    raise ValueError(f"docid {doc.docid!r} in query {qid!r} has score NaN")
                fh.write(f"{qid} Q0 {check_id(doc.docid, 'docid')} {rank} {float(doc.score)!r} {run.name}\n")
