"""The judgment pool: the top-k passages of every run per query, with their texts.

A passage enters the pool of a query when some run ranks it within its top ``depth`` for that
query. Passages are listed per query in passage-id order (so the pool does not depend on the
order runs are given in), and each remembers which runs contributed it. Passages whose text no
corpus holds are left out and reported (:attr:`Pool.missing`); with ``strict`` they are an error.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from exampp.collection.corpus import Corpus
from exampp.collection.runs import Run
from exampp.defaults import DEPTH as DEFAULT_DEPTH
from exampp.errors import InputError

_SHOWN_IDS = 5  # ids named in a warning


def id_list(pairs: Iterable[tuple[str, str]]) -> str:
    """``query_id:text_id`` of the first :data:`_SHOWN_IDS` pairs, comma-separated, and how many more
    there are (`` and N more``) when there are more: the list a warning about some texts ends with."""
    ids = [f"{query_id}:{text_id}" for query_id, text_id in pairs]
    more = f" and {len(ids) - _SHOWN_IDS} more" if len(ids) > _SHOWN_IDS else ""
    return f"{', '.join(ids[:_SHOWN_IDS])}{more}"


@dataclass(frozen=True)
class Pool:
    """Pooled passages per query.

    :param depth: How many of each run's top passages were pooled (None: all).
    :param passages: ``{query_id: {passage_id: text}}``, queries and passages in id order.
    :param contributors: ``{query_id: {passage_id: (run names, sorted)}}`` for pooled passages.
    :param missing: ``{query_id: [passage ids]}`` that runs rank but no corpus holds (left out).
    """

    depth: int | None
    passages: dict[str, dict[str, str]]
    contributors: dict[str, dict[str, tuple[str, ...]]]
    missing: dict[str, list[str]]

    @property
    def query_ids(self) -> list[str]:
        return list(self.passages)

    def __len__(self) -> int:
        """Number of pooled (query, passage) entries."""
        return sum(len(texts) for texts in self.passages.values())

    @property
    def missing_count(self) -> int:
        return sum(len(ids) for ids in self.missing.values())

    def warnings(self) -> list[str]:
        """One warning line about passages left out for lack of text (none when all were found)."""
        if not self.missing:
            return []
        return [f"warning: {self.missing_count} pooled passages have no text in the corpus and are skipped: "
                f"{id_list((qid, pid) for qid, pids in self.missing.items() for pid in pids)}"]


class _Corpora:
    """Several passage sources asked in turn: the first that holds a passage gives its text."""

    def __init__(self, corpora: Sequence[Corpus]):
        self.corpora = corpora

    def get_many(self, docids: Iterable[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        todo = list(docids)
        for corpus in self.corpora:
            if not todo:
                break
            found.update(corpus.get_many(todo))
            todo = [d for d in todo if d not in found]
        return found


def pool_ids(runs: Iterable[Run], depth: int | None = DEFAULT_DEPTH,
             query_ids: Iterable[str] | None = None) -> dict[str, dict[str, tuple[str, ...]]]:
    """``{query_id: {passage_id: contributing run names}}`` of the top-``depth`` of every run."""
    wanted = None if query_ids is None else set(query_ids)
    found: dict[str, dict[str, set[str]]] = {}
    for run in runs:
        for qid in run.rankings:
            if wanted is not None and qid not in wanted:
                continue
            docs = found.setdefault(qid, {})
            for doc in run.top(qid, depth):
                docs.setdefault(doc.docid, set()).add(run.name)
    return {qid: {pid: tuple(sorted(found[qid][pid])) for pid in sorted(found[qid])} for qid in sorted(found)}


def build_pool(
    runs: Mapping[str, Run] | Iterable[Run],
    corpus: Corpus | list[Corpus] | tuple[Corpus, ...],
    depth: int | None = DEFAULT_DEPTH,
    *,
    query_ids: Iterable[str] | None = None,
    strict: bool = False,
) -> Pool:
    """Pool the top-``depth`` passages of ``runs`` and fetch their texts from a corpus.

    A passage no corpus holds is left out and listed in :attr:`Pool.missing`.

    :param runs: The runs, as a list or by name.
    :param corpus: The passage source, or several, asked in order.
    :param depth: How many of each run's top passages to pool (None: all).
    :param query_ids: Pool these queries only (all by default).
    :param strict: A passage no corpus holds is an :class:`InputError` naming the first run file
        (and query line) that ranks it.
    """

    run_list = list(runs.values()) if isinstance(runs, Mapping) else list(runs)
    source = _Corpora(list(corpus)) if isinstance(corpus, (list, tuple)) else corpus
    ids = pool_ids(run_list, depth, query_ids)
    texts = source.get_many(dict.fromkeys(pid for docs in ids.values() for pid in docs))
    passages: dict[str, dict[str, str]] = {}
    contributors: dict[str, dict[str, tuple[str, ...]]] = {}
    missing: dict[str, list[str]] = {}
    for qid, docs in ids.items():
        for pid, names in docs.items():
            if pid in texts:
                passages.setdefault(qid, {})[pid] = texts[pid]
                contributors.setdefault(qid, {})[pid] = names
            else:
                missing.setdefault(qid, []).append(pid)
    if strict and missing:
        qid, pids = next(iter(missing.items()))
        run = next(r for r in run_list if r.name == ids[qid][pids[0]][0])
        total = sum(len(p) for p in missing.values())
        raise InputError(run.path or run.name, run.lines.get(qid),
                         f"passage {pids[0]!r} of query {qid!r} is not in the corpus "
                         f"({total} pooled passages lack text)")
    return Pool(depth, passages, contributors, missing)
