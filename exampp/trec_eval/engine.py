"""Evaluate a run against qrels the way trec_eval's main loop does (trec_eval.c).

Queries are taken from the qrels in trec_eval's order (query id as a plain string); a query
the run lacks is skipped, or with ``complete`` evaluated as a ranking of one unjudged
document, trec_eval's own device, after which the values that document would distort
(num_ret, utility, relstring, unj, rbp_resid) are reset. Queries only in the run are ignored.

The run is read one query at a time (:meth:`~exampp.formats.trec_run.RunFile.blocks`) and only
each query's values are kept, so a run file of any size is evaluated in the memory of one query.
"""
from __future__ import annotations

import gc
import math
import multiprocessing
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import NamedTuple, cast

from exampp.collection.ids import some_ids
from exampp.collection.qrels import Qrels, check_integer_labels
from exampp.collection.runs import Ranked, Ranking, Restart
from exampp.errors import InputError
from exampp.formats.trec_run import check_unique_name
from exampp.trec_eval.irm import IR_MEASURES, IrBatches, ir_aggregate
from exampp.trec_eval.judged import BOGUS_DOCID, Settings, judge
from exampp.trec_eval.measure import Averaging, Measure, Value
from exampp.trec_eval.registry import select


class Score(NamedTuple):
    """One line of trec_eval output: measure, query id (or ``all``), value and its printf conversion."""

    measure: str
    query: str
    value: Value
    fmt: str = "%6.4f"


def evaluate(
    qrels: Qrels,
    run: Ranked,
    measures: Iterable[str] = (),
    *,
    per_query: bool = False,
    complete: bool = False,
    max_retrieved: int | None = None,
    rel_level: int = 1,
    judged_only: bool = False,
    num_docs_in_coll: int = 0,
) -> list[Score]:
    """trec_eval's output for one run, line by line: per-query lines (if ``per_query``), then ``all``.

    The keyword arguments are trec_eval's options.

    :param qrels: The judgments.
    :param run: A :class:`~exampp.collection.runs.Run` or a :class:`~exampp.formats.trec_run.RunFile`
        (read as it is evaluated).
    :param measures: ``-m`` arguments (trec_eval names, parameters, nicknames or ir_measures names);
        none means trec_eval's default, ``official``.
    :param per_query: ``-q``: each query's lines too.
    :param complete: ``-c``: a query the run lacks counts (see the module docstring).
    :param max_retrieved: ``-M``: evaluate each query's top ``max_retrieved`` documents only.
    :param rel_level: ``-l``: the lowest label that counts as relevant.
    :param judged_only: ``-J``: leave out the run's unjudged documents.
    :param num_docs_in_coll: ``-N``: the collection's size, for the measures that need it.
    :raises ValueError: An unknown measure.
    :raises InputError: The run shares no query with the qrels.
    :raises FractionalLabelError: A fractional label (trec_eval's grades are integers).
    """
    settings = Settings(rel_level, judged_only, num_docs_in_coll)
    selection = select(measures)
    if selection.trec or selection.ir:
        check_integer_labels(qrels, "trec_eval measures" if selection.trec else IR_MEASURES)
    trec = [(m, params, m.value_names(params)) for m, params in selection.trec]
    cut = None if max_retrieved is None else max(max_retrieved, 0)

    values: dict[str, list[Sequence[Value]]] = {}  # per query, per measure, per value name
    ir = IrBatches(selection.ir, qrels)

    def add(qid: str, docs: Ranking) -> None:
        ranking = docs[:cut]  # blocks come cut already; -c's bogus document is cut here (-M0)
        judged = judge(ranking.docids, cast("dict[str, int]", qrels[qid]), settings)  # checked integers above
        values[qid] = [m.calc(judged, params, settings) for m, params, _ in trec]
        ir.add(qid, ranking)

    unique = bool(selection.ir) or any(m.reads_ranking for m, _ in selection.trec)
    with _no_cycle_collection():
        for block in run.blocks(qrels, cut, unique):
            if isinstance(block, Restart):
                values.clear()
                ir.clear()
            else:
                add(*block)
    if complete:
        for qid in qrels:
            if qid not in values:
                add(qid, Ranking([BOGUS_DOCID], [1.0]))
                _reset_bogus_values(trec, values[qid])
    ir.flush()
    if not values:
        raise InputError(getattr(run, "path", None) or run.name, None,
                         f"no queries with both results and relevance judgments (the run's: "
                         f"{some_ids(run.query_ids)}; the qrels': {some_ids(qrels)})")

    query_order = sorted(values)  # trec_eval's: query ids as plain strings
    scores: list[Score] = []
    if per_query:
        for qid in query_order:
            for (m, _, names), vals in zip(trec, values[qid]):
                if m.per_query:
                    scores.extend(Score(name, qid, v, m.fmt) for name, v in zip(names, vals))
            scores.extend(Score(str(m), qid, ir.values[m, qid]) for m in selection.ir if (m, qid) in ir.values)
    for index, (m, _, names) in enumerate(trec):
        if m.averaging is Averaging.RUN_NAME:
            assert run.runid is not None  # known once the run is read
            scores.append(Score(names[0], "all", run.runid, m.fmt))
        elif m.averaging is Averaging.QRELS_SUM and complete:
            scores.append(Score(names[0], "all", sum(g > 0 for js in qrels.values() for g in js.values()), m.fmt))
        elif m.summary:
            for i, name in enumerate(names):
                scores.append(Score(name, "all", _summary(m, [values[qid][index][i] for qid in query_order]), m.fmt))
    for measure in selection.ir:
        column = [ir.values[measure, qid] for qid in query_order if (measure, qid) in ir.values]
        scores.append(Score(str(measure), "all", ir_aggregate(measure, column)))
    return scores


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector paused: reading a run makes millions of small objects, none in a
    cycle, and the collector's passes over them (and over every live object) took a sixth of
    eval's time. Whatever state it was in comes back afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def unreachable_level(qrels: Qrels, rel_level: int) -> str | None:
    """Why ``rel_level`` (-l) leaves nothing relevant, when the qrels' grades all stay below it (a
    4-point scale's level given for 0-3 grades): every binary measure is then 0, which reads as a
    bad run rather than a bad flag. None where some grade reaches it."""
    top = max((label for judged in qrels.values() for label in judged.values()), default=None)
    if top is None or top >= rel_level:
        return None
    return (f"warning: -l {rel_level}, but the qrels' grades stop at {top:g}: no document counts as "
            "relevant, so the binary measures (map, P, recall, ...) are 0 for every run")


def evaluate_runs(qrels: Qrels, runs: Iterable[Ranked], measures: Iterable[str] = (), *, jobs: int | None = 1,
                  **options) -> dict[str, list[Score]]:
    """:func:`evaluate` for several runs, keyed by run name (in the order given); two runs of one
    name are an error.

    :param qrels: The judgments.
    :param runs: The runs (:class:`~exampp.collection.runs.Run` or
        :class:`~exampp.formats.trec_run.RunFile`).
    :param measures: ``-m`` arguments, as :func:`evaluate` takes them.
    :param jobs: Evaluate up to this many runs at once (None: :func:`available_cpus`), each in a
        worker process forked from this one (see :func:`_evaluated` for when); results, and the first
        error in run order, are what one process gives.
    :param options: :func:`evaluate`'s keyword arguments (trec_eval's options).
    """

    measures = list(measures)
    runs = list(runs)
    jobs = available_cpus() if jobs is None else jobs
    results: dict[str, list[Score]] = {}
    seen: dict[str, Ranked] = {}
    for run, scores in _evaluated(qrels, runs, measures, jobs, options):
        check_unique_name(seen, run)
        assert run.name is not None  # known once the run is read
        seen[run.name] = run
        results[run.name] = scores
    return results


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity where the platform tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _evaluated(qrels: Qrels, runs: list[Ranked], measures: list[str], jobs: int,
               options: dict) -> Iterator[tuple[Ranked, list[Score]]]:
    """Each run (as it was after its reading: its name known) with its scores, in order.

    Workers are forked from this process, so they share the qrels without a copy; only where
    that is safe: the platform forks, and no other thread runs (it could hold a lock the child
    would inherit locked). Otherwise, and for a run read from standard input (a worker's is
    closed), runs are evaluated here."""
    forked = [r for r in runs if not r.stdin]
    workers = min(jobs, len(forked))
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods() or threading.active_count() > 1:
        for run in runs:
            yield run, evaluate(qrels, run, measures, **options)
        return
    context = multiprocessing.get_context("fork")
    with context.Pool(workers, initializer=_take_work, initargs=((qrels, measures, options),)) as pool:
        done = pool.imap(_evaluate_one, forked)  # in order; a worker's error is raised at its run
        for run in runs:
            yield (run, evaluate(qrels, run, measures, **options)) if run.stdin else next(done)


_WORK: tuple[Qrels, list[str], dict] | None = None  # a worker's qrels, measures and options


def _take_work(work: tuple[Qrels, list[str], dict]) -> None:
    global _WORK
    _WORK = work


def _evaluate_one(run: Ranked) -> tuple[Ranked, list[Score]]:
    assert _WORK is not None  # each worker took its work when it started
    qrels, measures, options = _WORK
    return run, evaluate(qrels, run, measures, **options)


def _summary(measure: Measure, values: Sequence[Value]) -> Value:
    """The ``all`` value from the per-query values (summed in query order, as trec_eval does)."""
    if measure.averaging is Averaging.NUM_Q:
        return len(values)
    numbers = cast("Sequence[float]", values)  # a summarized measure's values are numbers (relstring has no summary)
    if measure.averaging in (Averaging.SUM, Averaging.QRELS_SUM):
        return sum(numbers)
    total = 0.0
    for value in numbers:
        total += value
    mean = total / len(values)
    return math.exp(mean) if measure.averaging is Averaging.GEOMETRIC else mean


def _reset_bogus_values(trec: Sequence[tuple[Measure, object, list[str]]], values: list[Sequence[Value]]) -> None:
    """trec_eval's cleanup after evaluating a missing query as one unjudged document (matched by value name)."""
    for index, ((_, _, names), measured) in enumerate(zip(trec, values)):
        values[index] = vals = list(measured)
        for i, name in enumerate(names):
            if name == "num_ret":
                vals[i] = 0
            elif name == "relstring":
                vals[i] = ""
            elif name in ("utility", "rbp_resid") or name.startswith("unj"):
                vals[i] = 0.0

