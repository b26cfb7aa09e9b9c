"""TREC run files: ``qid Q0 docid rank score runid``.

Rankings are held in trec_eval's order (score descending, ties by docid in descending string
order); the rank column is not trusted. A docid twice in one query is an error, as in trec_eval.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from exampp.collection.ids import check_id, check_query_id, odd_character
from exampp.collection.io import PathLike, atomic_write, display_name, iter_lines
from exampp.errors import InputError

RUN_SUFFIXES = (".gz", ".run", ".txt", ".trec", ".tsv")


class RankedDoc(NamedTuple):
    docid: str
    score: float


@dataclass(frozen=True)
class Run:
    """One system's ranking per query, in trec_eval order."""

    name: str
    rankings: dict[str, list[RankedDoc]]
    path: Path | None = field(default=None, compare=False)
    lines: dict[str, int] = field(default_factory=dict, compare=False)  # query -> first line in the file

    def top(self, query_id: str, k: int | None) -> list[RankedDoc]:
        ranking = self.rankings.get(query_id, [])
        return ranking if k is None else ranking[:k]

    @property
    def query_ids(self) -> list[str]:
        return sorted(self.rankings)


def trec_order(docs: Iterable[RankedDoc]) -> list[RankedDoc]:
    """Sort as trec_eval does: score descending, then docid descending (plain string order)."""
    return sorted(docs, key=lambda d: (d.score, d.docid), reverse=True)


def from_scores(name: str, scores: Mapping[str, Mapping[str, float]]) -> Run:
    """Build a run from ``{qid: {docid: score}}``."""
    return Run(name, {q: trec_order(RankedDoc(d, float(s)) for d, s in docs.items()) for q, docs in scores.items()})


def read_run(path: PathLike, name: str | None = None) -> Run:
    """Read a TREC run file (plain or gzipped; ``#`` lines are comments).

    The run's name is its runid column (the first one seen) unless ``name`` is given.
    """
    path = display_name(path) if isinstance(path, str) and path == "-" else Path(path)
    per_query: dict[str, dict[str, RankedDoc]] = {}
    lines: dict[str, int] = {}
    tag: str | None = None
    for lineno, line in iter_lines(path if isinstance(path, Path) else "-"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        odd = odd_character(line)
        if odd is not None:
            raise InputError(path, lineno, f"{odd}: only spaces and tabs may separate the columns")
        cols = stripped.split()
        if len(cols) < 6:  # trec_eval ignores text after the runid column
            raise InputError(path, lineno, f"expected 6 columns 'qid Q0 docid rank score runid', found {len(cols)}")
        qid, _, docid, _, score_text, runid = cols[:6]
        try:
            score = float(score_text)
        except ValueError:
            raise InputError(path, lineno, f"score {score_text!r} is not a number") from None
        if math.isnan(score):
            raise InputError(path, lineno, "score is NaN")
        docs = per_query.setdefault(qid, {})
        lines.setdefault(qid, lineno)
        if docid in docs:
            raise InputError(path, lineno, f"duplicate docid {docid!r} in query {qid!r}")
        docs[docid] = RankedDoc(docid, score)
        if tag is None:
            tag = runid
    if not per_query:
        raise InputError(path, None, "empty run: no result lines")
    rankings = {q: trec_order(docs.values()) for q, docs in per_query.items()}
    return Run(name or tag or path.name, rankings, path, lines)


def check_judged(runs: Mapping[str, Run], judged: Iterable[str], source: PathLike, strict: bool = False) -> list[str]:
    """Queries a run ranks but ``source`` (qrels) does not judge: an error naming the run's
    file:line when ``strict``, else one warning line per run (they are left out, as by trec_eval)."""
    judged = set(judged)
    warnings = []
    for name in sorted(runs):
        run = runs[name]
        extra = sorted(q for q in run.rankings if q not in judged)
        if not extra:
            continue
        where = f"{run.path or name}:{run.lines[extra[0]]}" if extra[0] in run.lines else str(run.path or name)
        if strict:
            raise InputError(run.path or name, run.lines.get(extra[0]), f"query {extra[0]!r} is not in {source}")
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


def read_runs(source: PathLike | Iterable[PathLike]) -> dict[str, Run]:
    """Read a directory of runs, or a list of run files/directories, keyed by run name.

    Two files with the same runid are an error: the leaderboard would silently merge them.
    """
    paths: list[Path] = []
    sources = [source] if isinstance(source, (str, Path)) else list(source)
    for item in sources:
        item = Path(item)
        paths.extend(run_files(item) if item.is_dir() else [item])
    runs: dict[str, Run] = {}
    for path in paths:
        run = read_run(path)
        if run.name in runs:
            raise InputError(path, None, f"run name {run.name!r} already used by {runs[run.name].path}")
        runs[run.name] = run
    return runs


def write_run(run: Run, path: PathLike, depth: int | None = None) -> None:
    """Write a run in TREC format (ranks 1-based, in trec_eval order), atomically."""
    check_id(run.name, "run name")
    with atomic_write(path) as fh:
        for qid in sorted(run.rankings):
            check_query_id(qid)
            for rank, doc in enumerate(run.top(qid, depth), start=1):
                fh.write(f"{qid} Q0 {check_id(doc.docid, 'docid')} {rank} {float(doc.score)!r} {run.name}\n")
