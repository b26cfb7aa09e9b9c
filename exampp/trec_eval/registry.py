"""All trec_eval measures in trec_eval's own order (measures.c), its nicknames, and ``-m`` parsing.

Measures are computed and printed in this order whatever order ``-m`` names them in. A name
that is neither a trec_eval measure nor a nickname is tried as an ir_measures name
(``nDCG@20``, ``P(rel=2)@10``, ``AP``).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from exampp.trec_eval import (
    average_precision as ap,
    bpref,
    counts,
    dcg,
    interpolated,
    normalized_gain,
    precision,
    rbp,
    set_based,
    unjudged,
)
from exampp.trec_eval.irm import parse_ir_measure
from exampp.trec_eval.measure import Measure, Params

MEASURES: tuple[Measure, ...] = (
    counts.runid,
    counts.num_q,
    counts.num_ret,
    counts.num_rel,
    counts.num_rel_ret,
    ap.map,
    ap.gm_map,
    precision.Rprec,
    bpref.bpref,
    precision.recip_rank,
    interpolated.iprec_at_recall,
    precision.P,
    unjudged.relstring,
    precision.recall,
    ap.infAP,
    bpref.gm_bpref,
    precision.Rprec_mult,
    set_based.utility,
    interpolated.eleven_pt_avg,
    normalized_gain.binG,
    normalized_gain.G,
    dcg.dcg,
    dcg.ideal_dcg,
    dcg.ndcg,
    dcg.ndcg_rel,
    dcg.Rndcg,
    dcg.ndcg_cut,
    ap.map_cut,
    precision.relative_P,
    precision.success,
    set_based.set_P,
    set_based.set_relative_P,
    set_based.set_recall,
    set_based.set_map,
    set_based.set_F,
    counts.num_nonrel_judged_ret,
    # trec_eval's preference and qrels_jg measures (other input formats) are not ported
    rbp.rbp,
    rbp.rbp_resid,
    unjudged.unj,
)
BY_NAME: dict[str, Measure] = {m.name: m for m in MEASURES}

OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
            "recip_rank", "iprec_at_recall", "P")
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": OFFICIAL,
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
    "all_trec": OFFICIAL + ("relstring", "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref", "utility",
                            "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut", "ndcg_cut",
                            "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map",
                            "set_F", "num_nonrel_judged_ret"),
}


@dataclass(frozen=True)
class Selection:
    """What ``-m`` asked for: trec_eval measures with their parameters (in trec_eval's order)
    and ir_measures measures (in the order given)."""

    trec: tuple[tuple[Measure, Params], ...]
    ir: tuple  # ir_measures Measure objects


def select(specs: Iterable[str]) -> Selection:
    """Resolve ``-m`` arguments (``map``, ``P.5,10``, ``all_trec``, ``nDCG@20``); none = ``official``.

    As in trec_eval, the first parameters given for a measure win and a measure named twice is
    computed once. Raises ValueError for a name neither trec_eval nor ir_measures knows.
    """
    marked: set[str] = set()
    texts: dict[str, str] = {}
    ir: list = []
    specs = list(specs) or ["official"]
    for spec in specs:
        name, dot, text = spec.partition(".")
        if name in NICKNAMES:
            marked.update(NICKNAMES[name])
        elif name in BY_NAME:
            marked.add(name)
        else:
            measure = parse_ir_measure(spec)
            if measure not in ir:
                ir.append(measure)
            continue
        if dot:
            if not text:
                raise ValueError(f"improper measure '{spec}': nothing after the '.'")
            texts.setdefault(name, text)
    trec = tuple((m, m.params(texts.get(m.name))) for m in MEASURES if m.name in marked)
    return Selection(trec, tuple(ir))
