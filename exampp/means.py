"""Means that do not depend on the order of their values, so that equal scores tie exactly.

Scoring (:mod:`exampp.scoring`) and the reader of per-query leaderboards
(:mod:`exampp.formats.leaderboard`) both average per-query scores into a system's score; the
mean is here, below both, so that the reader need not import scoring.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

# Means are rounded before ranking: two systems with the same per-query values in another
# order must tie exactly, and float summation order would otherwise break such ties.
SCORE_DECIMALS = 12


def exact_mean(values: Iterable[float]) -> float:
    """Mean with an order-independent (correctly rounded) sum, rounded to SCORE_DECIMALS."""
    values = list(values)
    return round(math.fsum(values) / len(values), SCORE_DECIMALS) if values else 0.0
