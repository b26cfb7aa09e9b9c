"""Grading on Ray: one model replica per worker, on a laptop as on a cluster.

:class:`RayEngine` starts one Ray actor per GPU the cluster has (``num_gpus=1``), or ``workers``
actors on CPUs (``threads`` CPUs each), each binding the grading method to its own backend,
opened once from the picklable :class:`~exampp.llm.backend.BackendSpec`: one model replica per
actor. It is an :class:`~exampp.grading.engine.Engine`: the runner pulls claimed chunks into it
and gets each one back as soon as a worker has graded it, and commits it then, so the store
grows as chunks complete, while :data:`IN_FLIGHT` chunks per worker wait their turn (no worker
idles between two chunks). The process running the runner (the driver) keeps the claims, the
cascade and every commit; workers only grade.

A worker that dies (its process killed, its node lost) fails the chunks it held: they are
sent again, to a fresh worker that replaces it. A chunk is committed only when it comes back
graded, once, so nothing is lost or committed twice; a chunk whose worker died
:data:`MAX_DEATHS` times is a bug, not bad luck, and ends the job. An error of the grading itself
(a bad input, a server that refuses) ends the job as it does in one process.

Ray starts in this process (``ray.init()``: local, no dashboard) unless ``address`` names a
cluster (whose nodes need exampp installed) or Ray is already running here; it is shut down only
when the engine started it.
"""
from __future__ import annotations

import logging
import os
import sys
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from exampp.collection.grades import Method
from exampp.collection.questions import Question
from exampp.errors import ExamppError
from exampp.grading.base import Grader, Judgment, Pair
from exampp.grading.engine import Tag
from exampp.grading.method import GradingMethod
from exampp.llm.backend import BackendSpec, Usage

IN_FLIGHT = 2  # chunks queued per worker: the next is there when it finishes one
MAX_DEATHS = 3  # deaths of the workers grading one chunk after which it is not sent again


class RayEngineError(ExamppError):
    """Ray is missing, the cluster cannot hold the workers asked for, or a chunk kills every worker."""


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayEngineError("--engine ray needs the package ray: install the exampp extra 'ray' "
                             "(pip install 'exampp[ray]', or scripts/setup.sh ...,ray)") from None
    return ray


class Worker:
    """What runs in one Ray actor: the grading method bound to the actor's own backend."""

    def __init__(self, method: GradingMethod, spec: BackendSpec | None, threads: int | None) -> None:
        self.error: Exception | None = None
        try:
            self.grader = method.bind(spec.open() if spec is not None else None, owned=True)
        except Exception as exc:  # noqa: BLE001 - reported by ready(), where the driver sees it whole
            self.error = exc
            return
        torch = sys.modules.get("torch")  # loaded by the backend, if it runs one
        if threads and torch is not None:
            torch.set_num_threads(threads)

    def ready(self) -> tuple[Method, int]:
        """The store's method id of this worker's grades (its judge's name) and its process id."""
        if self.error is not None:
            raise self.error
        return self.grader.method, os.getpid()

    def grade(self, pairs: Sequence[Pair]) -> tuple[list[Judgment], Usage | None]:
        """The chunk's judgments, and what grading it cost the backend (None: no backend)."""
        backend = self.grader.backend
        if backend is None:
            return self.grader.grade(pairs), None
        before = replace(backend.usage)
        judgments = self.grader.grade(pairs)
        return judgments, backend.usage - before


@dataclass
class _Task:
    slot: int  # the worker it went to
    worker: Any  # that worker's actor handle
    tag: Any
    pairs: Sequence[Pair]
    deaths: int = 0  # workers that died holding it


@dataclass
class RayEngine:
    """Grades chunks on Ray actors; a context manager (``with RayEngine(...) as engine``) that
    starts Ray (when not running) and the workers, and stops what it started."""

    method: GradingMethod
    spec: BackendSpec | None  # None: the method needs no model
    workers: int | None = None  # default: one per GPU of the cluster, else 1
    threads: int | None = None  # CPUs per worker (torch threads) [default: 1 on GPU, else the CPUs / workers]
    address: str | None = None  # a running cluster (ray://host:10001, auto...); None: this machine
    in_flight: int = IN_FLIGHT
    max_deaths: int = MAX_DEATHS
    actors: list[Any] = field(default_factory=list, init=False, repr=False)
    pids: list[int] = field(default_factory=list, init=False, repr=False)  # each worker's process id
    method_id: Method | None = field(default=None, init=False)
    usage: Usage | None = field(default=None, init=False)  # the workers' backends' of the chunks handed back
    _started: bool = field(default=False, init=False, repr=False)
    _options: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    def __enter__(self) -> "RayEngine":
        ray = _ray()
        if self.workers is not None and self.workers < 1 or self.threads is not None and self.threads < 1:
            raise RayEngineError("--workers and threads per worker must be at least 1")
        if not ray.is_initialized():
            local = ({} if self.address
                     else {"num_cpus": max(os.cpu_count() or 1, (self.workers or 1) * (self.threads or 1))})
            # "local": a Ray of this job's own, never one another job on this machine started.
            ray.init(address=self.address or "local", include_dashboard=False, logging_level=logging.ERROR,
                     log_to_driver=False, **local)
            self._started = True
        try:
            count, self._options = self._worker_options(ray.cluster_resources())
            self.actors = [self._start() for _ in range(count)]
            ready = self._get([actor.ready.remote() for actor in self.actors])
        except BaseException:
            self.__exit__()
            raise
        self.pids = [pid for _, pid in ready]
        self.method_id = ready[0][0]
        return self

    def __exit__(self, *exc: object) -> None:
        ray = _ray()
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
        if self._started:
            ray.shutdown()
            self._started = False

    def _worker_options(self, resources: dict[str, float]) -> tuple[int, dict[str, Any]]:
        """How many actors, and Ray's options of each: a GPU each when the cluster has GPUs and the
        backend is not told to use the CPU, else ``threads`` CPUs each; RayEngineError when they
        cannot all fit (Ray would wait for them forever)."""
        gpus, cpus = int(resources.get("GPU", 0)), int(resources.get("CPU", 0))
        device = self.spec.option("device") if self.spec is not None else "cpu"
        if gpus and device != "cpu":
            count = self.workers or gpus
            if count > gpus:
                raise RayEngineError(f"{count} workers asked for, one per GPU, but the Ray cluster has {gpus} GPUs")
            return count, {"num_gpus": 1, "num_cpus": self.threads or 1}
        count = self.workers or 1
        threads = self.threads or max(1, cpus // count)
        if count * threads > cpus:
            raise RayEngineError(f"{count} workers x {threads} CPUs asked for, but the Ray cluster has {cpus} CPUs")
        return count, {"num_cpus": threads}

    def _start(self) -> Any:
        ray = _ray()
        # Ray does not restart a dead worker (nor retry its chunks): the engine replaces it and
        # sends its chunks again, so that it knows which chunk died how often.
        actor = ray.remote(max_restarts=0, max_task_retries=0, **self._options)(Worker)
        return actor.remote(self.method, self.spec, self._options["num_cpus"])

    def _get(self, refs: Any) -> Any:
        """``ray.get``, raising an error of the grading itself as it was raised in the worker."""
        ray = _ray()
        try:
            return ray.get(refs)
        except ray.exceptions.RayTaskError as exc:
            if isinstance(exc.cause, ExamppError):
                raise exc.cause from None
            raise

    @property
    def grader(self) -> "RemoteGrader":
        """A :class:`~exampp.grading.base.Grader` for the runner: the method, graded by the workers."""
        return RemoteGrader(self)

    def grade(self, chunks: Iterable[tuple[Tag, Sequence[Pair]]]) -> Iterator[tuple[Tag, list[Judgment]]]:
        ray = _ray()
        source = iter(chunks)
        flight: dict[Any, _Task] = {}  # object ref -> the chunk it grades
        again: deque[_Task] = deque()  # chunks whose worker died, to send again first
        more = True
        while True:
            # Top up every worker to `in_flight` chunks, round robin.
            for _ in range(self.in_flight):
                for slot, actor in enumerate(self.actors):
                    if sum(task.slot == slot for task in flight.values()) >= self.in_flight:
                        continue
                    task = again.popleft() if again else None
                    while task is None and more:
                        chunk = next(source, None)
                        if chunk is None:
                            more = False
                        elif not chunk[1]:
                            yield chunk[0], []
                        else:
                            task = _Task(slot, actor, *chunk)
                    if task is None:
                        break
                    task.slot, task.worker = slot, actor
                    flight[actor.grade.remote(task.pairs)] = task
            if not flight:
                return
            [done], _ = ray.wait(list(flight), num_returns=1)
            task = flight.pop(done)
            try:
                judgments, used = self._get(done)
            except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError) as exc:
                self._replace(task.slot, task.worker)
                task.deaths += 1
                if task.deaths >= self.max_deaths:
                    raise RayEngineError(f"a chunk of {len(task.pairs)} pairs (query {task.pairs[0].query_id}) was "
                                         f"being graded by {task.deaths} workers that died: not sent again. "
                                         f"The last: {str(exc).splitlines()[0]}") from None
                again.append(task)
            else:
                if used is not None:
                    self.usage = used if self.usage is None else self.usage + used
                yield task.tag, judgments

    def _replace(self, slot: int, dead: Any) -> None:
        """A fresh worker in ``slot`` unless the dead one was already replaced (it held several chunks)."""
        if self.actors[slot] is not dead:
            return
        ray = _ray()
        ray.kill(dead)  # dead already, or unreachable: it must not grade on
        self.actors[slot] = self._start()
        _, self.pids[slot] = self._get(self.actors[slot].ready.remote())


class RemoteGrader(Grader):
    """The method as the runner sees it when Ray workers grade: its store id is the workers'
    (their backend names the judge); ``grade`` sends the pairs to a worker."""

    def __init__(self, engine: RayEngine) -> None:
        self.engine = engine
        self.name = str(engine.method)
        self.direct = engine.method.direct
        self.whole_passages = engine.method.whole_passages

    @property
    def method(self) -> Method:
        method = self.engine.method_id
        assert method is not None  # known once the workers are ready (the engine entered)
        return method

    def grade(self, pairs: Sequence[Pair]) -> list[Judgment]:
        return [j for _, judgments in self.engine.grade([(None, pairs)]) for j in judgments]

    def usable(self, question: Question) -> bool:
        return self.engine.method.usable(question)

    @property
    def usage(self) -> Usage | None:
        """The workers' backends' usage, summed over the chunks they handed back."""
        return self.engine.usage
