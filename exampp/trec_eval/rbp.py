"""Rank-biased precision (Moffat & Zobel, TOIS 2008) and its residual from unjudged documents."""
from __future__ import annotations

from exampp.trec_eval.gains import gain_of, setup_gains
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


def _rbp(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    persistence = _persistence(p)
    levels = setup_gains(p.values, j)
    # gains outside [0, 1] are rescaled to it (min-max over the levels)
    gains = [level.gain for level in levels]
    low, high = min(gains, default=0.0), max(gains, default=0.0)
    if low < 0 or high > 1:
        for level in levels:
            level.gain = ratio(level.gain - low, high - low)
    total = 0.0
    weight = 1.0
    for rel in j.rels:
        gain = gain_of(rel, levels)
        if gain != 0:
            total += gain * weight
        weight *= persistence
    return [(1.0 - persistence) * total]


def _rbp_resid(j: JudgedRanking, p: Params, s: Settings) -> list[float]:
    """The most RBP could still grow if every unjudged document (and every rank below) were relevant.
    Only ``p=`` of its parameters counts (gains do not)."""
    persistence = _persistence(p)
    unjudged = 0
    total = 0.0
    weight = 1.0
    for rel in j.rels:
        if rel < 0:
            unjudged += 1
            total += weight
        weight *= persistence
    return [weight + (1 - persistence) * total if unjudged else 0.0]


rbp = Measure("rbp", _rbp, ParamKind.PAIR_PARAMS)
rbp_resid = Measure("rbp_resid", _rbp_resid, ParamKind.PAIR_PARAMS)
