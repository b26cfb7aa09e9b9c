"""Measures named in ir_measures syntax (``nDCG@20``, ``P(rel=2)@10``, ``AP``, ``RR``).

They are computed by ir_measures itself (its default providers, pytrec_eval first), on the
same rankings trec_eval's measures see (``-M`` applied, ``-c`` missing queries included), and
reported under ``str(measure)``. ``-l`` and ``-J`` do not apply: ir_measures names carry their
own ``rel=`` and ``judged_only=`` parameters.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

_UNSET_PARAM = re.compile(r"invalid param (\w+)=<object object at")


def parse_ir_measure(spec: str):
    """The ir_measures measure named ``spec``; ValueError when ir_measures cannot compute it."""
    import ir_measures

    try:
        measure = ir_measures.parse_measure(spec)
        supported = ir_measures.DefaultPipeline.supports(measure)
    except (NameError, ValueError, SyntaxError) as exc:
        close = close_measure_names(spec)
        hint = f"; did you mean {' or '.join(close)}?" if close else f" ({exc})"
        raise ValueError(f"unknown measure '{spec}': neither a trec_eval measure nor an ir_measures name{hint}") from None
    except AssertionError as exc:  # ir_measures checks a measure's parameters with assert
        missing = _UNSET_PARAM.match(str(exc))  # an unset required parameter shows as a bare object()
        reason = f"it needs the parameter {missing.group(1)}" if missing else str(exc)
        raise ValueError(f"measure '{spec}': {reason}") from None
    if not supported:
        raise ValueError(f"measure '{spec}': no installed ir_measures provider computes {measure}")
    return measure


def close_measure_names(spec: str) -> list[str]:
    """Computable ir_measures spellings close to ``spec``, parameters kept: the same name in
    another case (``ndcg@10`` -> ``nDCG@10``), else up to 3 look-alikes."""
    import difflib

    import ir_measures

    cut = min((i for i in (spec.find("("), spec.find("@")) if i >= 0), default=len(spec))
    base, rest = spec[:cut], spec[cut:]
    canonical = {name.lower(): measure.NAME for name, measure in ir_measures.measures.registry.items()}
    if base.lower() in canonical:
        names = [canonical[base.lower()]]
    else:
        names = [canonical[m] for m in difflib.get_close_matches(base.lower(), list(canonical), n=3, cutoff=0.6)]
    return [spelled for spelled in dict.fromkeys(name + rest for name in names) if _computable(spelled)]


def is_ir_measure_name(spec: str) -> bool:
    """Whether ``spec`` names an ir_measures measure (whatever its parameters)."""
    import ir_measures

    cut = min((i for i in (spec.find("("), spec.find("@")) if i >= 0), default=len(spec))
    return spec[:cut] in ir_measures.measures.registry


def _computable(spec: str) -> bool:
    try:
        parse_ir_measure(spec)
    except ValueError:
        return False
    return True


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
