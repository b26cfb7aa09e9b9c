"""Measures named in ir_measures syntax (``nDCG@20``, ``P(rel=2)@10``, ``AP``, ``RR``).

They are computed by ir_measures itself (its default providers, pytrec_eval first), on the
same rankings trec_eval's measures see (``-M`` applied, ``-c`` missing queries included), and
reported under ``str(measure)``. ``-l`` and ``-J`` do not apply: ir_measures names carry their
own ``rel=`` and ``judged_only=`` parameters.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from exampp.collection.qrels import Label

_UNSET_PARAM = re.compile(r"invalid param (\w+)=<object object at")


def parse_ir_measure(spec: str):
    """The ir_measures measure named ``spec``; ValueError when ir_measures cannot compute it
    (for an unknown name, with close names that it can)."""
    try:
        return _parse(spec)
    except _Unknown as exc:
        close = [name for name in close_measure_names(spec) if name != spec]
        hint = f"; did you mean {' or '.join(close)}?" if close else f" ({exc})"
        raise ValueError(f"unknown measure '{spec}': neither a trec_eval measure nor an ir_measures name{hint}") from None


class _Unknown(ValueError):
    """ir_measures does not know the name (or cannot parse it)."""


def _parse(spec: str):
    """:func:`parse_ir_measure` without suggestions (which are themselves checked with it)."""
    import ir_measures

    try:
        measure = ir_measures.parse_measure(spec)
        supported = ir_measures.DefaultPipeline.supports(measure)
    except (NameError, ValueError, SyntaxError) as exc:
        raise _Unknown(str(exc)) from None
    except AssertionError as exc:  # ir_measures checks a measure's parameters with assert
        missing = _UNSET_PARAM.match(str(exc))  # an unset required parameter shows as a bare object()
        reason = f"it needs the parameter {missing.group(1)}" if missing else str(exc)
        raise ValueError(f"measure '{spec}': {reason}") from None
    if not supported:
        raise ValueError(f"measure '{spec}': no installed ir_measures provider computes {measure}")
    return measure


def _split(spec: str) -> tuple[str, str]:
    """``nDCG(rel=2)@10`` -> (``nDCG``, ``(rel=2)@10``): the measure's name and its parameters."""
    cut = min((i for i in (spec.find("("), spec.find("@")) if i >= 0), default=len(spec))
    return spec[:cut], spec[cut:]


def close_measure_names(spec: str) -> list[str]:
    """Computable ir_measures spellings close to ``spec``, parameters kept: the same name in
    another case (``ndcg@10`` -> ``nDCG@10``), else up to 3 look-alikes."""
    import difflib

    import ir_measures

    base, rest = _split(spec)
    canonical = {name.lower(): measure.NAME for name, measure in ir_measures.measures.registry.items()}
    if base.lower() in canonical:
        names = [canonical[base.lower()]]
    else:
        names = [canonical[m] for m in difflib.get_close_matches(base.lower(), list(canonical), n=3, cutoff=0.6)]
    return [spelled for spelled in dict.fromkeys(name + rest for name in names) if _computable(spelled)]


def is_ir_measure_name(spec: str) -> bool:
    """Whether ``spec`` names an ir_measures measure (whatever its parameters)."""
    import ir_measures

    return _split(spec)[0] in ir_measures.measures.registry


def _computable(spec: str) -> bool:
    try:
        _parse(spec)
    except ValueError:
        return False
    return True


# What check_integer_labels names when ir_measures' measures meet a fractional label.
IR_MEASURES = "ir_measures' measures (pytrec_eval)"


class IrBatches:
    """ir_measures' per-query values of rankings given one query at a time, as
    ``values[(measure, query_id)]``. Rankings go to ir_measures in batches of about
    :attr:`BATCH_DOCS` documents, so that a run read query by query is never held whole.
    The qrels' labels must be integers (the caller checks them once: ``check_integer_labels``)."""

    BATCH_DOCS = 200_000

    def __init__(self, measures: Iterable, qrels: Mapping[str, Mapping[str, Label]]):
        self.measures = list(measures)
        self.qrels = qrels
        self.values: dict[tuple[Any, str], float] = {}
        self._pending: dict[str, dict[str, float]] = {}
        self._docs = 0

    def add(self, query_id: str, ranking: Iterable[tuple[str, float]]) -> None:
        if not self.measures:
            return
        docs = {docid: float(score) for docid, score in ranking}
        self._pending[query_id] = docs
        self._docs += len(docs)
        if self._docs >= self.BATCH_DOCS:
            self.flush()

    def flush(self) -> None:
        """Compute what is pending (call once more after the last ranking)."""
        if self._pending:
            import ir_measures  # only when there is something to compute: trec_eval measures alone never load it

            judged = {qid: self.qrels[qid] for qid in self._pending if qid in self.qrels}
            for metric in ir_measures.iter_calc(self.measures, judged, self._pending):
                self.values[(metric.measure, metric.query_id)] = float(metric.value)
        self._pending, self._docs = {}, 0

    def clear(self) -> None:
        """Forget everything (the run starts again: a RESTART)."""
        self.values.clear()
        self._pending, self._docs = {}, 0


def ir_aggregate(measure, values: Iterable[float]) -> float:
    """Summary over queries the way ir_measures aggregates this measure (mean for most)."""
    aggregator = measure.aggregator()
    for value in values:
        aggregator.add(value)
    return float(aggregator.result())
