"""The population a human sample is drawn from: every (query, passage) pair in the top-k of some run,
with the judge's label of each, laid out for the measures (:class:`exampp.assess.measures.Layout`)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from exampp.assess.measures import Layout
from exampp.collection.runs import Run


@dataclass(frozen=True)
class Population:
    """The pool's pairs: ``query_ids[d]``, ``keys[d]`` (the passage id), the judge's grade ``judge[d]``,
    and ``layout`` for the measures."""

    query_ids: tuple[str, ...]
    keys: tuple[str, ...]
    judge: np.ndarray
    layout: Layout

    def index(self) -> dict[tuple[str, str], int]:
        """(query id, key) -> pair index."""
        return {pair: d for d, pair in enumerate(zip(self.query_ids, self.keys))}


def passage_population(runs: Mapping[str, Run], depth: int, judge: Mapping[tuple[str, str], float]) -> Population:
    """The top-``depth`` pool of ``runs`` (queries: those some run ranks a passage for), each pair with
    its grade in ``judge`` ((query id, passage id) -> grade). KeyError names the first pair ``judge``
    lacks, so that the caller can say what to grade."""
    names = sorted(runs)
    queries = sorted({q for run in runs.values() for q, docs in run.rankings.items() if docs[:depth]})
    at = {q: i for i, q in enumerate(queries)}
    index: dict[tuple[str, str], int] = {}
    rankings = []
    for name in names:
        per_query = []
        for q in queries:
            ranked = []
            for doc in runs[name].top(q, depth):
                pair = (q, doc.docid)
                if pair not in index:
                    index[pair] = len(index)
                ranked.append(index[pair])
            per_query.append(np.array(ranked, dtype=int))
        rankings.append(tuple(per_query))
    pairs = list(index)
    missing = [pair for pair in pairs if pair not in judge]
    if missing:
        raise KeyError(missing[0], len(missing))
    layout = Layout(tuple(names), tuple(queries), np.array([at[q] for q, _ in pairs], dtype=int), tuple(rankings))
    return Population(tuple(q for q, _ in pairs), tuple(k for _, k in pairs),
                      np.array([float(judge[pair]) for pair in pairs]), layout)
