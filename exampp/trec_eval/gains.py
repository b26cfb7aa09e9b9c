"""Gain per relevance grade for the graded measures (trec_eval's ``gain_init.c``).

By default a grade's gain is the grade itself; ``-m ndcg.1=3.5,2=9`` overrides some. The
levels are kept sorted by increasing gain, with how many judged documents hold each, which
is what the measures walk (from the top) to build the ideal ranking.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from exampp.trec_eval.judged import JudgedRanking

_INTEGER = re.compile(r"[-+]?[0-9]+")


@dataclass
class Level:
    grade: int
    gain: float
    count: int  # judged documents with this grade


def setup_gains(pairs: Sequence[tuple[str, float]], judged: JudgedRanking) -> list[Level]:
    """Levels sorted by increasing gain; pairs whose name is not an integer (rbp's p) are skipped."""
    levels = [Level(int(name), value, 0) for name, value in pairs if _INTEGER.fullmatch(name)]
    for grade in range(judged.num_rel_levels):
        given = next((lv for lv in levels if lv.grade == grade), None)
        if given is not None:
            given.count = judged.rel_levels[grade]
        else:
            levels.append(Level(grade, float(grade), judged.rel_levels[grade]))
    # trec_eval compares gains through an int cast, so gains less than 1 apart tie and the order is
    # not transitive (1.5 = 2.25 = 3 but 1.5 < 3): the result depends on the sort, glibc's
    return _glibc_qsort(levels, lambda a, b: int(a.gain - b.gain))


def _glibc_qsort(items: list, compare) -> list:
    """glibc's ``qsort`` (msort.c up to glibc 2.36): a top-down merge sort, the left half
    ``n // 2`` long, a tie taken from the left. Python's sort differs once ``compare`` is not
    transitive."""
    if len(items) <= 1:
        return list(items)
    half = len(items) // 2
    left, right = _glibc_qsort(items[:half], compare), _glibc_qsort(items[half:], compare)
    merged = []
    i = j = 0
    while i < len(left) and j < len(right):
        if compare(left[i], right[j]) <= 0:
            merged.append(left[i])
            i += 1
        else:
            merged.append(right[j])
            j += 1
    return merged + left[i:] + right[j:]


def gain_of(grade: int, levels: Sequence[Level]) -> float:
    for level in levels:
        if level.grade == grade:
            return level.gain
    return 0.0


class IdealWalk:
    """The ideal ranking's gains, rank by rank: highest gain first, each level as often as judged.

    Mirrors the ``cur_level`` / ``num_at_level`` bookkeeping the graded measures share; ``gain``
    is the ideal gain at the current rank, 0 once every level is used up.
    """

    def __init__(self, levels: Sequence[Level]):
        self._levels = levels
        self._cur = len(levels) - 1
        self._num_at_level = 0
        self.gain = levels[self._cur].gain if self._cur >= 0 else 0.0

    def step(self) -> float:
        self._num_at_level += 1
        while self._cur >= 0 and self._num_at_level > self._levels[self._cur].count:
            self._num_at_level = 1
            self._cur -= 1
            self.gain = self._levels[self._cur].gain if self._cur >= 0 else 0.0
        return self.gain
