"""One query's ranking joined with its judgments: trec_eval's ``form_res_rels.c``.

Every measure reads this structure, never the raw run, so that ``-M``, ``-J`` and the
relevance level act on all measures alike.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat
from typing import Any

import numpy as np

NONPOOL = -1
"""Relevance of a retrieved document absent from the qrels (trec_eval's RELVALUE_NONPOOL)."""
UNJUDGED = -2
"""Relevance of a retrieved document in the qrels with a negative judgment (RELVALUE_UNJUDGED)."""

BOGUS_DOCID = "ceci_nest_pas_un_docno"
"""With ``-c``, trec_eval evaluates a query missing from the run as this one unjudged document."""


@dataclass(frozen=True)
class Settings:
    """trec_eval's command-line switches that change how a query's ranking is scored."""

    relevance_level: int = 1  # -l: minimum judgment counted relevant by binary measures
    judged_only: bool = False  # -J: drop retrieved documents without a judgment
    num_docs_in_coll: int = 0  # -N: collection size (only utility's fourth coefficient reads it)


@dataclass(frozen=True)
class JudgedRanking:
    """The retrieved documents' relevance in rank order, with the counts measures share."""

    rels: list[int]  # relevance per rank (NONPOOL / UNJUDGED for unjudged documents)
    num_rel: int  # judged documents at or above the relevance level
    num_rel_ret: int
    num_nonpool: int
    num_unjudged_in_pool: int
    rel_levels: list[int]  # rel_levels[g] = number of judged documents with grade g >= 0
    num_rel_levels: int  # 1 + highest grade that occurs (0 when none)
    _memo: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def num_ret(self) -> int:
        return len(self.rels)

    @cached_property
    def rel_array(self) -> np.ndarray:
        """``rels`` as a numpy array (made once, shared by the vectorised measures)."""
        return np.array(self.rels, dtype=np.int64)

    @cached_property
    def pooled(self) -> list[tuple[int, int]]:
        """``(rank index, relevance)`` of each retrieved document in the pool (judged, or with a
        negative judgment), in rank order. A ranking is mostly unpooled documents, which count
        for nothing in most measures: these walk this short list instead of every rank."""
        rels = self.rel_array
        ranks = np.flatnonzero(rels != NONPOOL)
        return list(zip(ranks.tolist(), rels[ranks].tolist()))

    def ranks_at_least(self, level: int) -> list[int]:
        """Rank indices (in order) of the documents whose relevance is at least ``level``
        (unpooled ones too when ``level`` is below 0, as trec_eval compares them)."""
        return self.memo(("ranks_at_least", level), lambda: np.flatnonzero(self.rel_array >= level).tolist())

    def memo(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """``compute()``, once per key for this ranking: what several measures share (their
        parameters are part of the key). Callers must not change what it returns."""
        try:
            return self._memo[key]
        except KeyError:
            value = self._memo[key] = compute()
            return value

    def level_count(self, grade: int) -> int:
        return self.rel_levels[grade] if 0 <= grade < len(self.rel_levels) else 0


def judge(docids: Sequence[str], judgments: Mapping[str, int], settings: Settings) -> JudgedRanking:
    """Join a ranking (in trec_eval order, already cut to ``-M``) with one query's judgments."""
    level = settings.relevance_level
    relevance = {docid: _relevance(grade) for docid, grade in judgments.items()}  # the judged few, once
    rels = list(map(relevance.get, docids, repeat(NONPOOL)))
    if settings.judged_only:
        rels = [r for r in rels if r >= 0]
    rel_levels = [0] * (max(judgments.values(), default=-1) + 1)
    for grade in judgments.values():
        if grade >= 0:
            rel_levels[grade] += 1
    present = [g for g, n in enumerate(rel_levels) if n]
    return JudgedRanking(
        rels=rels,
        num_rel=sum(n for g, n in enumerate(rel_levels) if g >= level),
        num_rel_ret=sum(map(rels.count, {g for g in present if g >= level})),  # a count per grade: C-speed
        num_nonpool=rels.count(NONPOOL),
        num_unjudged_in_pool=rels.count(UNJUDGED),
        rel_levels=rel_levels,
        num_rel_levels=present[-1] + 1 if present else 0,
    )


def _relevance(grade: int | None) -> int:
    if grade is None:
        return NONPOOL
    return grade if grade >= 0 else UNJUDGED
