"""Measures named in ir_measures syntax (``nDCG@20``, ``P(rel=2)@10``, ``AP``, ``RR``).

They are computed by ir_measures itself (its default providers, pytrec_eval first), on the
same rankings trec_eval's measures see (``-M`` applied, ``-c`` missing queries included), and
reported under ``str(measure)``. ``-l`` and ``-J`` do not apply: ir_measures names carry their
own ``rel=`` and ``judged_only=`` parameters.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence


def parse_ir_measure(spec: str):
    """The ir_measures measure named ``spec``; ValueError when ir_measures cannot compute it."""
    import ir_measures

    try:
        measure = ir_measures.parse_measure(spec)
    except (NameError, ValueError, SyntaxError) as exc:
        raise ValueError(f"unknown measure '{spec}': neither a trec_eval measure nor an ir_measures name ({exc})") from None
    if not ir_measures.DefaultPipeline.supports(measure):
        raise ValueError(f"measure '{spec}': no installed ir_measures provider computes {measure}")
    return measure


def ir_per_query(
    measures: Iterable,
    qrels: Mapping[str, Mapping[str, int]],
    rankings: Mapping[str, Sequence[tuple[str, float]]],
) -> dict[tuple[str, str], float]:
    """``{(query_id, str(measure)): value}`` for the queries of ``rankings`` that have judgments."""
    import ir_measures

    run = {qid: {docid: float(score) for docid, score in docs} for qid, docs in rankings.items()}
    judged = {qid: dict(qrels[qid]) for qid in rankings if qid in qrels}
    return {(m.query_id, str(m.measure)): float(m.value) for m in ir_measures.iter_calc(list(measures), judged, run)}


def ir_aggregate(measure, values: Iterable[float]) -> float:
    """Summary over queries the way ir_measures aggregates this measure (mean for most)."""
    aggregator = measure.aggregator()
    for value in values:
        aggregator.add(value)
    return float(aggregator.result())
