"""Item and test information of logistic IRT models (1PL/2PL/3PL), after Guinet et al. (2024).

With p = g + (1 − g) σ(a(θ − b)) the item information is

    I(θ) = a² (p − g)² / (1 − g)² · (1 − p) / p,

which is a² p (1 − p) for g = 0. All functions take θ as a 1-d grid and the item parameters
as arrays over items (``g`` may be a scalar); matrices are (n_theta, n_items).
"""
from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Union

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

GroupLabels = Union[Hashable, set[Hashable], frozenset[Hashable], list[Hashable], tuple[Hashable, ...]]
"""Per item: one label, or a set/list/tuple of labels (the item counts in each)."""


def item_information(theta: ArrayLike, a: ArrayLike, b: ArrayLike, g: ArrayLike = 0.0) -> NDArray[np.float64]:
    """Information of each item at each θ, shape (n_theta, n_items)."""
    theta = _theta(theta)
    a, b, g = item_arrays(a, b, g)
    x = a * (theta[:, None] - b)
    # Rewritten with s = σ(x) so nothing over/underflows: p − g = (1−g)s, 1 − p = (1−g)(1−s),
    # p = s(1 + g e^{−x}); hence I = a² (1−g) s(1−s) / (1 + g e^{−x}).
    e = np.exp(-np.abs(x))
    s_1s = e / (1.0 + e) ** 2  # σ(x)(1 − σ(x)), symmetric in x
    guess_term = 1.0 + g * np.exp(np.minimum(-x, 700.0))  # capped: g = 0 must give 1, not 0·inf
    return a**2 * (1.0 - g) * s_1s / guess_term


def test_information(theta: ArrayLike, a: ArrayLike, b: ArrayLike, g: ArrayLike = 0.0) -> NDArray[np.float64]:
    """Test information at each θ: the sum of the item informations, shape (n_theta,)."""
    return item_information(theta, a, b, g).sum(axis=1)


def information_by_group(
    theta: ArrayLike, a: ArrayLike, b: ArrayLike, g: ArrayLike, groups: Sequence[GroupLabels]
) -> pd.DataFrame:
    """Information summed over the items of each group, in long form.

    ``groups[i]`` is item i's label or a set/list/tuple of labels (e.g. several Bloom levels);
    an item counts in each of its groups, and an empty collection puts it in none. Columns:
    ``theta``, ``group``, ``information``, ``n_items``; groups in sorted order (by their str),
    θ ascending as given within each group.
    """
    theta = _theta(theta)
    info = item_information(theta, a, b, g)
    if len(groups) != info.shape[1]:
        raise ValueError(f"groups has {len(groups)} entries for {info.shape[1]} items")
    per_item = [_labels(entry) for entry in groups]
    names = sorted({label for labels in per_item for label in labels}, key=str)
    column = {name: j for j, name in enumerate(names)}
    member = np.zeros((info.shape[1], len(names)))
    for i, labels in enumerate(per_item):
        for label in labels:
            member[i, column[label]] = 1.0
    summed = info @ member  # (n_theta, n_groups)
    return pd.DataFrame({
        "theta": np.tile(theta, len(names)),
        "group": np.repeat(np.array(names, dtype=object), len(theta)),
        "information": summed.T.ravel(),
        "n_items": np.repeat(member.sum(axis=0).astype(int), len(theta)),
    })


def theta_max_information(a: ArrayLike, b: ArrayLike, g: ArrayLike = 0.0) -> NDArray[np.float64]:
    """θ at which each item is most informative: b for g = 0, b + ln((1 + √(1 + 8g))/2)/a (Birnbaum).

    NaN for an item with a = 0, whose information is 0 everywhere.
    """
    a, b, g = item_arrays(a, b, g)
    shift = np.log((1.0 + np.sqrt(1.0 + 8.0 * g)) / 2.0)
    return b + np.divide(shift, a, out=np.full_like(a, np.nan), where=a != 0)


def information_summary(
    theta_grid: ArrayLike, a: ArrayLike, b: ArrayLike, g: ArrayLike, lo: float, hi: float
) -> float:
    """Integral of the test information over [lo, hi] by the trapezoid rule.

    The nodes are the grid points strictly inside (lo, hi) plus lo and hi themselves, so the
    interval is covered exactly whatever grid is given; compare exams on the same grid.
    """
    if not lo < hi:
        raise ValueError(f"need lo < hi, got lo={lo}, hi={hi}")
    grid = _theta(theta_grid)
    nodes = np.unique(np.concatenate([[lo], grid[(grid > lo) & (grid < hi)], [hi]]))
    return float(np.trapezoid(test_information(nodes, a, b, g), nodes))


def _theta(theta: ArrayLike) -> NDArray[np.float64]:
    theta = np.atleast_1d(np.asarray(theta, dtype=float))
    if theta.ndim != 1:
        raise ValueError(f"theta must be a scalar or 1-d array, got shape {theta.shape}")
    return theta


def item_arrays(a: ArrayLike, b: ArrayLike, g: ArrayLike = 0.0) -> tuple[NDArray[np.float64], ...]:
    """a, b, g as equal-length 1-d arrays, checked: a and b finite, 0 ≤ g < 1.

    a may be negative (an item that able systems fail more often; information uses a²).
    """
    a = np.atleast_1d(np.asarray(a, dtype=float))
    b = np.atleast_1d(np.asarray(b, dtype=float))
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"a and b must be 1-d arrays of one length, got shapes {a.shape} and {b.shape}")
    g = np.broadcast_to(np.asarray(g, dtype=float), a.shape)
    # Excluded items (e.g. answered by all systems) must be dropped by the caller, not summed as NaN.
    bad = ~(np.isfinite(a) & np.isfinite(b) & np.isfinite(g) & (g >= 0) & (g < 1))
    if bad.any():
        raise ValueError(f"items {np.flatnonzero(bad)[:10].tolist()} have invalid parameters "
                         "(need finite a and b, 0 <= g < 1)")
    return a, b, g


def _labels(entry: GroupLabels) -> tuple[Hashable, ...]:
    if isinstance(entry, (set, frozenset, list, tuple)):
        return tuple(dict.fromkeys(entry))  # a label listed twice still counts the item once
    return (entry,)
