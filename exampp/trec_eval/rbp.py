"""Rank-biased precision (Moffat & Zobel, TOIS 2008) and its residual from unjudged documents."""
from __future__ import annotations

import numpy as np

from exampp.trec_eval.gains import gain_table, ranked_gains, setup_gains
from exampp.trec_eval.judged import JudgedRanking, Settings
from exampp.trec_eval.measure import Measure, ParamKind, Params, ratio

PERSISTENCE = 0.9


def _persistence(p: Params) -> float:
    """The ``p=`` parameter (the last one given wins, as in m_rbp.c), else 0.9."""
    persistence = PERSISTENCE
    for name, value in p.values:
        if name == "p":
            persistence = value
    return persistence


def _weights(persistence: float, ranks: int) -> tuple[list[float], np.ndarray]:
    """``w[i]``: the weight of rank ``i`` (0 <= i <= ranks), ``persistence ** i`` multiplied up
    one rank at a time as m_rbp.c does (a power would differ in the last bits); as a list and an
    array. The products are the same for every ranking: the longest made so far is kept and cut."""
    weights = _WEIGHTS.get(persistence)
    if weights is None or len(weights[0]) <= ranks:
        steps = np.full(max(ranks + 1, 1024), persistence)
        steps[0] = 1.0
        with np.errstate(all="ignore"):  # p > 1 overflows to inf, as in C, without a word
            array = np.multiply.accumulate(steps)  # left to right, one product at a time
        weights = (array.tolist(), array)
        if persistence == persistence:  # a NaN key is never found again
            _WEIGHTS[persistence] = weights
    return weights


_WEIGHTS: dict[float, tuple[list[float], np.ndarray]] = {}  # persistence -> weights of ranks 0, 1, 2, ...


def _rbp(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    persistence = _persistence(p)
    levels = setup_gains(p.values, j)
    table = gain_table(levels)
    # gains outside [0, 1] are rescaled to it (min-max over the levels, a grade's unused ones too)
    low = min((level.gain for level in levels), default=0.0)
    high = max((level.gain for level in levels), default=0.0)
    if low < 0 or high > 1:
        table = {grade: ratio(gain - low, high - low) for grade, gain in table.items()}
    weights = _weights(persistence, j.num_ret)[0]
    total = 0.0
    for i, gain in ranked_gains(j, table):  # the ranks with a gain, in order: as the C loop adds
        total += gain * weights[i]
    return [(1.0 - persistence) * total]


def _rbp_resid(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    """The most RBP could still grow if every unjudged document (and every rank below) were relevant.
    Only ``p=`` of its parameters counts (gains do not)."""
    persistence = _persistence(p)
    weights, array = _weights(persistence, j.num_ret)
    unjudged = j.rel_array < 0
    if not unjudged.any():
        return [0.0]
    with np.errstate(all="ignore"):
        total = float(np.cumsum(array[: j.num_ret][unjudged])[-1])  # cumsum adds in order, as the C loop
    return [weights[j.num_ret] + (1 - persistence) * total]


rbp = Measure("rbp", _rbp, ParamKind.PAIR_PARAMS)
rbp_resid = Measure("rbp_resid", _rbp_resid, ParamKind.PAIR_PARAMS)
