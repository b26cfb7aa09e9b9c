"""Gain per relevance grade for the graded measures (trec_eval's ``gain_init.c``).

By default a grade's gain is the grade itself; ``-m ndcg.1=3.5,2=9`` overrides some. The
levels are kept sorted by increasing gain, with how many judged documents hold each, which
is what the measures walk (from the top) to build the ideal ranking.

A graded measure's sums change only at the ranks of documents with a gain and along the ideal
ranking, so they walk those (:class:`Gains`) rather than every rank; each sum is still added up
in trec_eval's order, so values are the same to the last bit.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from exampp.trec_eval.judged import NONPOOL, JudgedRanking
from exampp.trec_eval.measure import c_int

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
    return _glibc_qsort(levels, lambda a, b: c_int(a.gain - b.gain))


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


def gain_table(levels: Sequence[Level]) -> dict[int, float]:
    """Grade -> gain (trec_eval looks a grade up among the levels in order: the first one counts)."""
    table: dict[int, float] = {}
    for level in levels:
        table.setdefault(level.grade, level.gain)
    return table


def ranked_gains(judged: JudgedRanking, table: Mapping[int, float]) -> list[tuple[int, float]]:
    """``(rank index, gain)`` of each retrieved document whose gain is not 0, in rank order: the
    only ranks where a graded measure's sums change."""
    if table.get(NONPOOL, 0.0) != 0:  # a gain map for grade -1 gives every unpooled document a gain
        candidates: Iterable[tuple[int, int]] = enumerate(judged.rels)
    else:
        candidates = judged.pooled
    get = table.get
    return [(i, gain) for i, rel in candidates if (gain := get(rel, 0.0)) != 0]


def ideal_walk(levels: Sequence[Level]) -> list[float]:
    """The ideal ranking's gain rank by rank, as trec_eval's ``cur_level`` / ``num_at_level``
    bookkeeping steps through the levels from the top: each level as often as it is judged, up
    to and including the first gain that is not positive (0 once the levels are used up). Empty
    when the top level's gain is not positive: trec_eval then never steps."""
    if not levels or not levels[-1].gain > 0.0:
        return []
    walk: list[float] = []
    for level in reversed(levels):
        if level.count == 0:  # stepped over, its gain never seen
            continue
        if not level.gain > 0.0:
            walk.append(level.gain)
            return walk
        walk.extend([level.gain] * level.count)
    walk.append(0.0)
    return walk


@dataclass(frozen=True)
class Gains:
    """One query's gains under one gain map: what the graded measures walk."""

    levels: list[Level]  # sorted as trec_eval sorts them
    walk: list[float]  # :func:`ideal_walk`
    ranked: list[tuple[int, float]]  # :func:`ranked_gains`

    @property
    def top(self) -> float:
        """The top level's gain: trec_eval's ideal gain before its first step."""
        return self.levels[-1].gain if self.levels else 0.0

    @property
    def ideal(self) -> list[float]:
        """The ideal ranking's positive gains, rank by rank."""
        return self.walk[:-1]


def gains(judged: JudgedRanking, pairs: tuple[tuple[str, float], ...] = ()) -> Gains:
    """:class:`Gains` under the gain map ``pairs`` (a measure's parameters), made once per
    ranking and map and shared by the measures that use it."""
    def compute() -> Gains:
        levels = setup_gains(pairs, judged)
        return Gains(levels, ideal_walk(levels), ranked_gains(judged, gain_table(levels)))

    return judged.memo(("gains", pairs), compute)
