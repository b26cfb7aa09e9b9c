"""TREC run files: ``qid Q0 docid rank score runid``.

Rankings are held in trec_eval's order (score descending, ties by docid in descending string
order); the rank column is not trusted. A docid twice among the documents of one query that are
kept (all, or the top ``depth``) is an error, as in trec_eval.

Two ways to read one: :func:`read_run` holds the whole run in memory (:class:`Run`, random
access for pooling and scoring); :class:`RunFile` hands out one query's ranking at a time, so
that evaluating a run of any size needs memory for one query only, when the file is grouped by
query as runs are written (a run that is not, or a pipe that cannot be read again, is held whole).
"""
from __future__ import annotations

import io
import itertools
import math
import operator
import os
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, TypeGuard

from exampp.collection.ids import check_id, check_query_id, line_problem, some_ids
from exampp.collection.runs import RESTART, Block, Ranked, RankedDoc, Ranking, Restart, Run
from exampp.errors import InputError
from exampp.files.io import InputLines, PathLike, atomic_write, decode_line, display_name, excerpt, is_stdio

RUN_SUFFIXES = (".gz", ".run", ".txt", ".trec", ".tsv")


# A result line: (line number, qid, docid, score, runid). A plain tuple: runs have millions.
_Line = tuple[int, str, str, float, str]


def _run_lines(lines: Iterable[tuple[int, str]], name: str) -> Iterator[_Line]:
    """The result lines of a run file, checked (``#`` lines are comments; text after the runid
    column is ignored, as trec_eval does)."""
    for lineno, line in lines:
        parsed = parse_run_line(line, name, lineno)
        if parsed is not None:
            yield lineno, parsed.qid, parsed.docid, parsed.score, parsed.runid


class RunLine(NamedTuple):
    """A result line's columns (the rank as written: trec_eval does not read it)."""

    qid: str
    docid: str
    rank: str
    score: float
    runid: str


def parse_run_line(line: str, name: str, lineno: int) -> RunLine | None:
    """One line of a run file, checked; None for a blank line or a ``#`` comment.

    :param line: The line.
    :param name: The file's name, for messages.
    :param lineno: Its number.
    :raises InputError: A malformed line.
    """
    cols = line.split()
    if not cols or cols[0][0] == "#":
        return None
    problem = line_problem(line)
    if problem is not None:
        raise InputError(name, lineno, problem)
    if len(cols) < 6:
        raise InputError(name, lineno, f"expected 6 columns 'qid Q0 docid rank score runid', found {len(cols)}"
                                       f"{_qrels_hint(cols)}")
    try:
        if "_" in cols[4]:  # float() reads 1_0 as 10, trec_eval's atof as 1: neither is meant
            raise ValueError
        score = float(cols[4])
    except ValueError:
        raise InputError(name, lineno, f"score {excerpt(cols[4])} is not a number") from None
    if score != score:
        raise InputError(name, lineno, "score is NaN")
    return RunLine(cols[0], cols[2], cols[3], score, cols[5])


def _qrels_hint(cols: list[str]) -> str:
    """What a line of 4 columns ending in a whole number most likely is: qrels given where a run is asked."""
    if len(cols) == 4 and cols[3].lstrip("-").isdigit():
        return ": this looks like qrels ('qid iter docid rel'), not a run"
    return ""


class _Lines(NamedTuple):
    """Consecutive result lines of a run file, column by column."""

    linenos: Sequence[int]
    qids: list[str]
    docids: list[str]
    scores: list[float]
    runids: list[str]


# Bytes a piece of a run file may hold to be read the fast way (:func:`_fast_lines`): printable
# ASCII but '#' (a comment line), the space, the tab and the newline. Anything else goes the
# plain way, line by line, so that what is read, and each error's message and line, stay the same.
_FAST_BYTES = bytes(range(0x20, 0x7F)).replace(b"#", b"") + b"\t\n"
_END = "\x00"  # a token no fast piece holds: put at the end of each line, it shows where lines end
_BATCH = 1 << 16  # result lines handed on together by the plain way
_CHUNK = 1 << 22  # bytes of a run file parsed at a time


def _result_lines(source: InputLines, name: str) -> Iterator[_Lines]:
    """The result lines of a run file in pieces: a regular file (not gzipped) a piece at a time
    with :func:`_fast_lines`, each piece it cannot vouch for (comments, blank lines, other
    bytes, a missing, extra or bad column) and every other input with :func:`_run_lines`."""
    if not source.plain_file:
        yield from _batches(_run_lines(source, name))
        return
    for first, data in source.chunks(_CHUNK):
        fast = _fast_lines(data, first)
        if fast is not None:
            yield fast
        else:
            # lines end at \n only, as iterating reads them
            lines = (decode_line(line, name, n) for n, line in enumerate(io.BytesIO(data).readlines(), first))
            yield from _batches(_run_lines(enumerate(lines, first), name))


def _fast_lines(data: bytes, first: int) -> _Lines | None:
    """Result lines of ``data`` (whole lines, the first numbered ``first``) read as
    :func:`_run_lines` reads them, or None when that cannot be vouched for: every line must
    hold exactly six columns (``str.split`` of the whole piece, a sentinel token ending each
    line) and a score ``float`` reads (without ``_``), not NaN."""
    if data.translate(None, _FAST_BYTES):
        return None
    text = data.decode("ascii")
    if not text.endswith("\n"):  # the file's last line
        text += "\n"
    count = text.count("\n")
    tokens = text.replace("\n", f" {_END}\n").split()
    if len(tokens) != 7 * count or tokens[6::7].count(_END) != count:  # a line of another length
        return None
    column = tokens[4::7]
    if "_" in text and "_" in "".join(column):  # the plain way refuses it (docids may hold "_")
        return None
    try:
        scores = list(map(float, column))  # exactly as the plain way converts them
    except ValueError:
        return None
    if any(map(math.isnan, scores)):
        return None
    return _Lines(range(first, first + count), tokens[0::7], tokens[2::7], scores, tokens[5::7])


def _batches(lines: Iterable[_Line]) -> Iterator[_Lines]:
    """Lines in :class:`_Lines` pieces; the lines before an error are handed on before it is raised."""
    batch: list[_Line] = []
    try:
        for line in lines:
            batch.append(line)
            if len(batch) >= _BATCH:
                yield _columns(batch)
                batch = []
    except InputError:
        if batch:
            yield _columns(batch)
        raise
    if batch:
        yield _columns(batch)


def _columns(batch: list[_Line]) -> _Lines:
    linenos, qids, docids, scores, runids = zip(*batch)
    return _Lines(linenos, list(qids), list(docids), list(scores), list(runids))


def _segments(qids: list[str]) -> Iterator[tuple[str, int, int]]:
    """``(qid, start, end)`` of each run of equal consecutive query ids."""
    start = 0
    for qid, same in itertools.groupby(qids):
        end = start + sum(1 for _ in same)
        yield qid, start, end
        start = end


_first, _second = operator.itemgetter(0), operator.itemgetter(1)


class _Docs:
    """One query's documents as they are read, with their lines (for a duplicate's message)."""

    def __init__(self) -> None:
        self.docids: list[str] = []
        self.scores: list[float] = []
        self.linenos: list[int] = []

    def __bool__(self) -> bool:
        return bool(self.docids)

    def add(self, lines: _Lines, start: int, end: int) -> None:
        self.docids += lines.docids[start:end]
        self.scores += lines.scores[start:end]
        self.linenos += lines.linenos[start:end]

    def ranking(self, qid: str, name: str, depth: int | None = None, unique: bool = True) -> Ranking:
        """trec_eval's order (as :func:`~exampp.collection.runs.trec_order`): score descending, then equal scores by
        docid descending; the first ``depth`` documents only, when given.

        With ``unique``, a docid twice among the documents kept is an error naming the later
        line; as in trec_eval (form_res_rels.c), one beyond ``depth`` is not looked at."""
        pairs = sorted(zip(self.scores, self.docids), reverse=True)[:depth]  # C's tuple order: fast
        docids = list(map(_second, pairs))
        if unique and len(set(docids)) != len(docids):  # which lines? (a docid twice has one key twice)
            order = sorted(range(len(self.docids)), key=lambda i: (self.scores[i], self.docids[i]), reverse=True)
            self._check_unique(order[:depth], qid, name)
        return Ranking(docids, list(map(_first, pairs)))

    def _check_unique(self, kept: Iterable[int], qid: str, name: str) -> None:
        """The error for the first docid (in file order) seen twice among the lines ``kept``."""
        seen: set[str] = set()
        for i in sorted(kept):  # in file order: the second line of a docid is the one named
            if self.docids[i] in seen:
                raise InputError(name, self.linenos[i], f"duplicate docid {self.docids[i]!r} in query {qid!r}")
            seen.add(self.docids[i])


def read_run(path: PathLike, name: str | None = None, depth: int | None = None) -> Run:
    """Read a TREC run file (plain or gzipped, ``-`` for standard input; ``#`` lines are comments).

    :param path: The run file.
    :param name: The run's name; by default its runid column (the first one seen).
    :param depth: Keep each query's top-``depth`` documents only (all by default). A run file
        grouped by query is then read in the memory of one query plus what is kept.
    :raises InputError: A malformed line, naming the file and line.
    """
    source = RunFile(path)
    rankings: dict[str, list[RankedDoc]] = {}
    for block in source.blocks(depth=depth):
        if isinstance(block, Restart):
            rankings.clear()
        else:
            rankings[block[0]] = list(block[1])
    run_name = name or source.name
    assert run_name is not None  # blocks() raised for a run without result lines
    return Run(run_name, rankings, source.path, source.lines)


class RunFile:
    """A run file read one query at a time (see the module docstring); each :meth:`blocks` call
    reads the file once.

    ``name`` (the first runid) and ``lines`` (query -> its first line) are known once reading
    has begun; ``lines`` names every query of the file, and ``runid`` is the last line's runid
    (the one trec_eval prints), when reading has ended.
    """

    def __init__(self, path: PathLike):
        self._source = path
        self.stdin = is_stdio(path)
        self.path: Path | str = display_name(path) if self.stdin else Path(path)  # as messages name it
        self.name: str | None = None
        self.runid: str | None = None
        self.lines: dict[str, int] = {}

    @property
    def query_ids(self) -> list[str]:
        return sorted(self.lines)

    def blocks(self, queries: Collection[str] | None = None, depth: int | None = None,
               unique: bool = True) -> Iterator[Block | Restart]:
        """Each query's ranking in trec_eval order (only those in ``queries`` when given; its
        top ``depth`` only, when given), as soon as the file moves on to another query;
        :data:`RESTART` when it comes back to a query it had left, after which every ranking
        follows again, whole. ``unique``: a docid twice in a ranking handed out is an error."""
        shown = display_name(self._source)
        with InputLines(self._source) as source:
            hold = not source.rewind()  # a pipe: a ranking is only known complete at the end
            while True:
                self.lines = {}
                try:
                    yield from self._read(source, shown, queries, hold, depth, unique)
                    break
                except _Ungrouped:
                    source.rewind()
                    hold = True
                    yield RESTART
        if self.name is None:
            raise InputError(shown, None, "empty run: no result lines")

    def _read(self, source: InputLines, shown: str, queries: Collection[str] | None,
              hold: bool, depth: int | None, unique: bool) -> Iterator[Block]:
        # Every query's lines are read and checked; only the wanted queries are handed out, and
        # only their kept documents are checked for a docid twice (trec_eval's form_res_rels.c).
        # Streaming, a docid twice is only known to be an error once the file is known to be
        # grouped (the query's lines do not come back, and a later line might push one of the
        # two beyond ``depth``): the first is raised at the end, and nothing is handed out after it.
        held: dict[str, _Docs] = {}
        current: str | None = None
        docs = _Docs()
        pending: InputError | None = None

        def wanted(qid: str | None, docs: _Docs) -> TypeGuard[str]:
            return qid is not None and bool(docs) and (queries is None or qid in queries)

        def streamed(qid: str, docs: _Docs) -> Iterator[Block]:
            nonlocal pending
            if pending is None:
                try:
                    ranking = docs.ranking(qid, shown, depth, unique)
                except InputError as error:
                    pending = error
                else:
                    yield qid, ranking

        for lines in _result_lines(source, shown):
            if self.name is None:
                self.name = lines.runids[0]
            self.runid = lines.runids[-1]
            for qid, start, end in _segments(lines.qids):
                if qid != current:
                    if qid in self.lines and not hold:
                        raise _Ungrouped
                    if not hold and wanted(current, docs):
                        yield from streamed(current, docs)
                    current, docs = qid, held.setdefault(qid, _Docs()) if hold else _Docs()
                    self.lines.setdefault(qid, lines.linenos[start])
                docs.add(lines, start, end)
        if hold:
            for qid in list(held):  # each query's documents go as its ranking is handed out
                docs = held.pop(qid)
                if wanted(qid, docs):
                    yield qid, docs.ranking(qid, shown, depth, unique)
            return
        if wanted(current, docs):
            yield from streamed(current, docs)
        if pending is not None:
            raise pending


class _Ungrouped(Exception):
    """A query's lines came back after another query's: the file is not grouped by query."""


def check_judged(runs: Mapping[str, Run] | Iterable[Run | RunFile], judged: Iterable[str], source: PathLike,
                 strict: bool = False) -> list[str]:
    """Queries a run ranks but the qrels do not judge: they are left out, as by trec_eval.

    :param runs: The runs. A :class:`RunFile` is checked on the queries its last read found.
    :param judged: The query ids judged.
    :param source: Where they were judged (the qrels), for the messages.
    :param strict: Raise an :class:`InputError` naming the run's file:line instead of warning.
    :returns: One warning line per run that ranks such queries.
    """
    judged = set(judged)
    judged_shown = ""  # some_ids(judged), made once, when a run first needs it
    warnings = []
    items = runs.values() if isinstance(runs, Mapping) else runs
    for run in sorted(items, key=lambda r: str(r.name)):
        query_ids = run.query_ids  # sorted at each read
        extra = [q for q in query_ids if q not in judged]
        if not extra:
            continue
        where = f"{run.path or run.name}:{run.lines[extra[0]]}" if extra[0] in run.lines else str(run.path or run.name)
        if strict:
            raise InputError(run.path or run.name, run.lines.get(extra[0]), f"query {extra[0]!r} is not in {source}")
        if len(extra) == len(query_ids):  # nothing in common: the two likely number queries differently
            judged_shown = judged_shown or some_ids(judged)
            warnings.append(f"{where}: warning: none of its queries ({some_ids(extra)}) is in {source}, whose queries "
                            f"are {judged_shown}: all left out")
            continue
        more = f" and {len(extra) - 1} more" if len(extra) > 1 else ""
        warnings.append(f"{where}: warning: query {extra[0]!r}{more} not in {source}, left out")
    return warnings


def run_files(directory: PathLike) -> list[Path]:
    """The run files of a directory (hidden files skipped), sorted by name.

    :param directory: The folder.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(directory, None, "not a directory of runs")
    files = sorted(p for p in directory.iterdir() if p.is_file() and not p.name.startswith("."))
    if not files:
        raise InputError(directory, None, "no run files in directory")
    return files


def run_paths(source: PathLike | Iterable[PathLike]) -> list[Path | str]:
    """The run files named.

    :param source: Files, given as they are (``-`` is standard input), and folders, expanded by
        :func:`run_files`.
    :raises InputError: Standard input named twice.
    """
    sources = [source] if isinstance(source, (str, os.PathLike)) else list(source)
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
    """Read a directory of runs, or a list of run files/directories, keyed by run name.

    :param source: A directory of runs, or a list of run files and directories.
    :param depth: Keep each query's top-``depth`` documents only (all by default; see :func:`read_run`).
    :raises InputError: Two files with the same runid (the leaderboard would silently merge them), or a
        malformed line.
    """
    runs: dict[str, Run] = {}
    for path in run_paths(source):
        run = read_run(path, depth=depth)
        check_unique_name(runs, run)
        runs[run.name] = run
    return runs


def check_unique_name(seen: Mapping[str, Ranked], run: Ranked) -> None:
    """Two run files with the same runid are an error: their results would merge.

    :param seen: The runs read before, by name.
    :param run: A run that has been read (its name is known).
    :raises InputError: ``run``'s name is among ``seen``.
    """

    assert run.name is not None
    if run.name in seen:
        raise InputError(run.path if run.path is not None else run.name, None,
                         f"run name {run.name!r} already used by {seen[run.name].path}")


def write_run(run: Run, path: PathLike, depth: int | None = None) -> None:
    """Write a run in TREC format (ranks 1-based, in trec_eval order), atomically.

    :param run: The run to write.
    :param path: The file to write.
    :param depth: Write each query's top-``depth`` documents only (all by default).
    :raises ValueError: A score is NaN (no reader takes it back), or an id would not fit a run file's columns.

    """

    check_id(run.name, "run name")
    with atomic_write(path) as fh:
        for qid in sorted(run.rankings):
            check_query_id(qid)
            for rank, doc in enumerate(run.top(qid, depth), start=1):
                if math.isnan(doc.score):  # no reader takes it back: trec_eval's order is undefined
                    raise ValueError(f"docid {doc.docid!r} in query {qid!r} has score NaN")
                fh.write(f"{qid} Q0 {check_id(doc.docid, 'docid')} {rank} {float(doc.score)!r} {run.name}\n")
