"""Which pairs two assessors judge: with overlap ``f``, the ``round(f * n)`` pairs of a sample of
``n`` whose seeded hash is smallest need a second label from another assessor, for inter-assessor
agreement. The choice depends only on the pairs, the fraction and the seed: a restarted server, or
another process serving the same sample, doubles the same pairs."""
from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

from exampp.formats.assessment_sample import SamplePair


def double_judged(pairs: Sequence[SamplePair], overlap: float, seed: int = 0) -> set[tuple[str, str]]:
    """The (query_id, key) of the pairs to judge twice."""
    if not 0 <= overlap <= 1:
        raise ValueError(f"overlap must be in [0, 1], found {overlap!r}")
    count = math.floor(overlap * len(pairs) + 0.5)

    def rank(pair: SamplePair) -> bytes:
        return hashlib.sha256(f"{seed}\t{pair.query_id}\t{pair.key}".encode()).digest()

    return {(pair.query_id, pair.key) for pair in sorted(pairs, key=rank)[:count]}


def labels_needed(pairs: Sequence[SamplePair], overlap: float = 0.0, seed: int = 0) -> list[tuple[str, str, int]]:
    """``(query_id, key, labels needed)`` of each pair in sample order: 2 for a pair judged twice, else 1
    (what :meth:`exampp.stores.assessments.AssessmentStore.claim_next` takes)."""
    double = double_judged(pairs, overlap, seed)
    return [(pair.query_id, pair.key, 2 if (pair.query_id, pair.key) in double else 1) for pair in pairs]
