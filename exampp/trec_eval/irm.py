"""Measures named in ir_measures syntax (``nDCG@20``, ``P(rel=2)@10``, ``AP``, ``RR``).

They are computed by ir_measures itself (its default providers, pytrec_eval first), on the
same rankings trec_eval's measures see (``-M`` applied, ``-c`` missing queries included), and
reported under ``str(measure)``. ``-l`` and ``-J`` do not apply: ir_measures names carry their
own ``rel=`` and ``judged_only=`` parameters.

Intent-aware measures (``alpha_nDCG@k``, ``ERR_IA@k``...: those of ir_measures' pyndeval provider,
NTCIR/TREC Web's ndeval) need intent qrels (:data:`~exampp.collection.qrels.IntentQrels`); the
other measures then see every document at its best label over the query's subtopics.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from exampp.collection.qrels import IntentQrels, Label
from exampp.errors import ExamppError

_UNSET_PARAM = re.compile(r"invalid param (\w+)=<object object at")


def parse_ir_measure(spec: str):
    """The ir_measures measure named ``spec``; ValueError when ir_measures cannot compute it
    (for an unknown name, with close names that it can)."""
    try:
        return _parse(spec)
    except _Unknown as exc:
        close = [name for name in close_measure_names(spec) if name != spec]
        hint = f"; did you mean {' or '.join(close)}?" if close else f" ({exc})"
        raise ValueError(f"unknown measure '{spec}': neither a trec_eval measure nor an ir_measures "
                         f"name{hint}") from None


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
    if is_intent_aware(measure) and "cutoff" in measure.SUPPORTED_PARAMS:
        cutoff = measure.params.get("cutoff")
        if cutoff is None or cutoff > NDEVAL_DEPTH:
            raise ValueError(f"measure '{spec}': ndeval computes intent-aware measures at a cutoff of "
                             f"{NDEVAL_DEPTH} at most: give one, e.g. {measure.NAME}@{NDEVAL_DEPTH}")
    return measure


NDEVAL_DEPTH = 20  # ndeval (pyndeval) evaluates rankings to this depth only


def is_intent_aware(measure) -> bool:
    """Whether ``measure`` is intent-aware (computed per subtopic by pyndeval: alpha_nDCG, ERR_IA...)."""
    import ir_measures

    provider = ir_measures.providers.registry.get("pyndeval")
    return provider is not None and any(m.NAME == measure.NAME for m in provider.SUPPORTED_MEASURES)


def _split(spec: str) -> tuple[str, str]:
    """``nDCG(rel=2)@10`` -> (``nDCG``, ``(rel=2)@10``): the measure's name and its parameters."""
    cut = min((i for i in (spec.find("("), spec.find("@")) if i >= 0), default=len(spec))
    return spec[:cut], spec[cut:]


_TREC_CUTOFF = re.compile(r"([A-Za-z][A-Za-z_]*?)[_@]?(\d[\d,]*)")  # ndcg_cut10, P_10, P@10 ...


def close_measure_names(spec: str) -> list[str]:
    """Computable spellings close to ``spec``: a trec_eval name missing its dot (``ndcg_cut10`` ->
    ``ndcg_cut.10``); else ir_measures names with the parameters kept, the same name in another
    case (``ndcg@10`` -> ``nDCG@10``), else up to 3 look-alikes."""
    import difflib

    import ir_measures

    cutoff = _TREC_CUTOFF.fullmatch(spec)
    if cutoff:
        dotted = f"{cutoff[1]}.{cutoff[2]}"
        try:
            ir_measures.parse_trec_measure(dotted)
        except ValueError:
            pass
        else:
            return [dotted]
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


class IntentQrelsNeeded(ExamppError, ValueError):
    """An intent-aware measure given plain qrels."""

    def __init__(self, measure: Any):
        super().__init__(f"{measure} is intent-aware: it needs intent qrels ('qid subtopic docid label', "
                         f"e.g. from `exampp qrels --per-question`), read as such (`exampp leaderboard --qrels`)")


class IrBatches:
    """ir_measures' per-query values of rankings given one query at a time, as
    ``values[(measure, query_id)]``. Rankings go to ir_measures in batches of about
    :attr:`BATCH_DOCS` documents, so that a run read query by query is never held whole.
    The qrels' labels must be integers (the caller checks them once: ``check_integer_labels``).
    Intent-aware measures (:func:`is_intent_aware`) are computed on ``intent`` qrels, which they need.

    ``evaluators``: ir_measures' evaluators by measures and queries, shared by the batches of runs
    scored on the same qrels (:func:`exampp.scoring.per_query_measures`): an evaluator reads its
    qrels once (pyndeval's intent-aware ones take most of a run's time) and scores every run."""

    BATCH_DOCS = 200_000

    def __init__(self, measures: Iterable, qrels: Mapping[str, Mapping[str, Label]],
                 intent: IntentQrels | None = None, evaluators: dict | None = None):
        measures = list(measures)
        self.measures = [m for m in measures if not is_intent_aware(m)]
        self.intent_measures = [m for m in measures if is_intent_aware(m)]
        if self.intent_measures and intent is None:
            raise IntentQrelsNeeded(self.intent_measures[0])
        self.qrels = qrels
        self.intent = intent
        self.evaluators = {} if evaluators is None else evaluators
        self.values: dict[tuple[Any, str], float] = {}
        self._pending: dict[str, dict[str, float]] = {}
        self._docs = 0

    def add(self, query_id: str, ranking: Iterable[tuple[str, float]]) -> None:
        if not self.measures and not self.intent_measures:
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

            if self.measures:
                judged = frozenset(qid for qid in self._pending if qid in self.qrels)
                self._calc(self.measures, judged, lambda: {qid: self.qrels[qid] for qid in judged}, self._pending)
            if self.intent_measures:
                # pyndeval takes the subtopic from a qrel's iteration; it breaks score ties by
                # docid ascending where trec_eval goes descending: it gets the ranks instead.
                # ndeval's measures see only relevant judgments (a query without any scores 0
                # either way), so the zeros, most of a per-question qrels, are not handed over.
                pending = frozenset(self._pending)
                intent = self.intent
                assert intent is not None  # __init__ refuses intent-aware measures without intent qrels
                ranks = {qid: {docid: float(len(docs) - i) for i, docid in enumerate(docs)}
                         for qid, docs in self._pending.items()}
                self._calc(self.intent_measures, pending, lambda: [
                    ir_measures.Qrel(qid, docid, rel, subtopic) for qid in pending
                    for subtopic, docs in intent.get(qid, {}).items() for docid, rel in docs.items()
                    if rel > 0], ranks)
        self._pending, self._docs = {}, 0

    def _calc(self, measures: list, queries: frozenset[str], qrels: Callable[[], Any],
              run: Mapping[str, Mapping[str, float]]) -> None:
        """Score ``run`` with the evaluator of ``measures`` on the ``qrels()`` of ``queries``, made once
        (none where those qrels are empty: nothing to score)."""
        import ir_measures

        key = (frozenset(measures), queries)
        if key not in self.evaluators:
            judged = qrels()
            self.evaluators[key] = ir_measures.evaluator(measures, judged) if judged else None
        if self.evaluators[key] is not None:
            for metric in self.evaluators[key].iter_calc(run):
                self.values[(metric.measure, metric.query_id)] = float(metric.value)

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
