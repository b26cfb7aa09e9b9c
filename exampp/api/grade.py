"""The main job, ``exampp grade``, as Python calls.

:func:`grade_collection` pools the runs, grades every new (passage, question) pair into the
store, and derives EXAM labels, EXAM-Qrels and the EXAM-Cover leaderboard, returning them in a
:class:`GradeResult`. :class:`GradeJob` is the same job for a workspace: settings from arguments,
else from the workspace's ``exampp.toml``, else the defaults; it reads the inputs (before any
model loads, so that input errors come first), opens the backend, grades, and writes
``qrels/exam.qrels`` (and the reference tool's graded JSONL when asked). :meth:`GradeJob.open`
is the job up to the grading, writing nothing: other jobs grade other banks in it.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pandas as pd

from exampp import defaults
from exampp.api.workspace import given_or_existing, workspace_bank
from exampp.collection.corpus import Corpus
from exampp.collection.qrels import Qrels
from exampp.collection.questions import QuestionBank
from exampp.collection.runs import Run, ranked_pairs
from exampp.collection.topics import Topic
from exampp.errors import ExamppError
from exampp.files.io import PathLike
from exampp.formats.trec_run import check_judged
from exampp.grading.base import Grader
from exampp.grading.cascade import BACKEND as CASCADE_BACKEND, CascadeSpec, open_cascade
from exampp.grading.engine import Engine
from exampp.grading.method import GradingMethod
from exampp.grading.methods.injection_check import CheckSummary, check_summary
from exampp.grading.runner import (
    Exam,
    GradingSummary,
    build_exam,
    grade_pairs,
    grade_pool,
    graded_without_text,
    pool_grades,
    pool_records,
    query_texts,
)
from exampp.llm.backend import Backend, BackendSpec, Usage, opened
from exampp.pool import Pool, build_pool
from exampp.setting_rules import CheckedSettings, check_grades, check_settings
from exampp.stores.grade_store import GradeStore
from exampp.stores.layout import Workspace

if TYPE_CHECKING:
    from exampp.llm.openai.backend import OpenAIBackend

ENGINES = ("local", "ray")  # where the grader runs: this process, or Ray workers


class NothingToGrade(ExamppError, ValueError):
    """The exam is empty: no question the method can grade (or no query title for a direct method)."""


@dataclass(frozen=True)
class GradeResult:
    """What the main job did and produced.

    :param method_id: The grading method's id in the store.
    :param exam: The questions graded against, per query.
    :param pool: The pooled passages.
    :param summary: What grading did: pairs graded now, found in the store, left out.
    :param grades: The pool x exam grades, as :meth:`exampp.stores.grade_store.GradeStore.grades` returns them.
    :param labels: EXAM labels: each pooled passage's best grade over its query's questions (or another label).
    :param qrels: The EXAM-Qrels: the labels, or 0/1 at ``min_grade``. :meth:`GradeJob.run` keeps the
        runs' here and the answers' in ``answer_qrels``.
    :param tau: EXAM-Cover counts a question answered at grade >= ``tau``.
    :param cover: EXAM-Cover per run and query (:func:`exampp.scoring.exam_cover`).
    :param leaderboard: EXAM-Cover@depth per run, best first (:func:`exampp.scoring.summarize`).
    :param warnings: Run queries outside the exam, pooled passages without text.
    :param usage: The backend's requests and tokens, when it has one.
    :param written: The files the job wrote.
    :param canaries: The canary pairs graded (:mod:`exampp.grading.canaries`), when asked for.
    :param check: A check's findings (a method judging no relevance): no labels or scores then.
    :param answer_qrels: The EXAM-Qrels of the answers graded with :attr:`GradeJob.responses`.
    """

    method_id: str
    exam: Exam
    pool: Pool
    summary: GradingSummary
    grades: pd.DataFrame
    labels: Qrels
    qrels: Qrels
    tau: float
    cover: pd.DataFrame
    leaderboard: pd.DataFrame
    warnings: tuple[str, ...]
    usage: Usage | None = None
    written: tuple[Path, ...] = ()
    canaries: GradingSummary | None = None
    check: CheckSummary | None = None
    answer_qrels: Qrels = field(default_factory=dict)


def grade_collection(
    runs: Mapping[str, Run],
    corpus: Corpus | list[Corpus] | tuple[Corpus, ...],
    grader: Grader,
    store: GradeStore,
    bank: QuestionBank | None = None,
    topics: Mapping[str, Topic] | None = None,
    *,
    depth: int = defaults.DEPTH,
    tau: float | None = None,
    min_grade: float | None = None,
    label: str = "max",
    strict: bool = False,
    allow_partial: bool = False,
    chunk_size: int = defaults.CHUNK,
    progress: bool = True,
    cascade: CascadeSpec | None = None,
    cascade_backend: Backend | BackendSpec | None = None,
    engine: Engine | None = None,
    canaries: int = 0,
) -> GradeResult:
    """The main job in one call: pool the top-``depth`` passages of ``runs``, grade every pair the
    store lacks, and score.

    A method that judges no relevance (``injection-check``) is graded alike but scored not at all: the
    result has its :class:`CheckSummary` and no labels, qrels or leaderboard.

    :param runs: The runs, by name.
    :param corpus: The passage source, or several, asked in order.
    :param grader: The grader (:func:`exampp.grading.registry.make_grader`).
    :param store: The grade store: pairs it holds are not graded again.
    :param bank: The question bank; needed unless the method is direct.
    :param topics: The query texts of a direct method's questions and of the cascade; else the bank's.
    :param depth: How many of each run's top passages to pool and score.
    :param tau: The grade at which a question counts as answered; by default the method's (4 for
        0-5 self-ratings, 1 for 0/1 grades).
    :param min_grade: Makes the qrels binary: 1 at a label >= ``min_grade`` (for ``expected``: at an
        expected grade >= ``min_grade``).
    :param label: The EXAM label variant (:data:`exampp.labels.LABELS`; ``count`` counts at ``tau``,
        ``expected`` needs grade probabilities).
    :param strict: Turn the warnings (run queries without exam questions, pooled passages without
        text) into :class:`~exampp.errors.InputError`.
    :param allow_partial: Score the passages with a text although the store holds grades for pooled
        passages without one (a wrong or incomplete corpus); refused by default, since the qrels
        would lose their labels.
    :param chunk_size: Pairs graded between two commits to the store.
    :param progress: Show a progress bar.
    :param cascade: Send the grader only the pairs a first stage cannot rule out (at ``tau``; see
        :mod:`exampp.grading.cascade`).
    :param cascade_backend: The cascade's embedder (default: the packaged all-MiniLM-L6-v2).
    :param engine: Where the grader runs (default: in this process;
        :class:`~exampp.grading.ray_engine.RayEngine` grades on Ray workers, ``grader`` being its
        :attr:`~exampp.grading.ray_engine.RayEngine.grader`).
    :param canaries: Also grade each pooled passage against that many questions of other queries
        (:mod:`exampp.grading.canaries`; not with the cascade, whose first stage would rule them out),
        filed under the canary method id: the labels, qrels and leaderboard never see them.
    """
    from exampp.grading.registry import default_tau, stored_method
    from exampp.labels import check_label, exam_labels
    from exampp.scoring import exam_cover, exam_qrels, summarize

    check_label(label)
    check_settings({"depth": depth, "chunk_size": chunk_size, "canaries": canaries})
    known = stored_method(grader.method.method_id)
    check_grades(known, tau=tau, min_grade=min_grade, label=label)
    relevance = known is None or known.judges_relevance
    if not relevance and (cascade is not None or canaries):
        raise ExamppError(f"method {grader.name!r} judges no relevance: --cascade and --canaries do not apply to it")
    exam = build_exam(grader, bank, topics)
    if not exam.questions:
        needs = "topics with query titles" if grader.direct else "questions it can grade"
        raise NothingToGrade(f"grader {grader.name!r} has nothing to grade: it needs {needs}")
    warnings = check_judged(runs, exam.questions, "the exam (question bank)", strict)
    pool = build_pool(runs, corpus, depth, query_ids=exam.questions, strict=strict)
    if not pool.passages:  # the qrels would be empty: a good qrels file is not replaced by nothing
        first = next((f"{qid}:{pids[0]}" for qid, pids in pool.missing.items()), None)
        why = ("no run ranks a passage for a query of the exam" if first is None else
               f"none of the {pool.missing_count} pooled passages has a text in the corpus (first: {first[:60]})")
        raise NothingToGrade(f"nothing to grade: {why}; no output written")
    if relevance and not allow_partial:
        _check_complete(pool, graded_without_text(store, pool, grader.method.method_id))
    exam_texts = {qid: [q.text for q in exam.questions[qid]] for qid in pool.passages}
    with open_cascade(cascade, cascade_backend, exam_texts, query_texts(bank, topics),
                      default_tau(grader.method.method_id) if tau is None else tau) as first_stage:
        summary = grade_pool(pool, exam, grader, store, chunk_size=chunk_size, progress=progress, cascade=first_stage,
                             engine=engine)
    canary_summary = None
    if canaries:
        from exampp.grading.canaries import CanaryGrader, canary_pairs

        canary_summary = grade_pairs(canary_pairs(pool.passages, exam.questions, canaries), CanaryGrader(grader),
                                     store, chunk_size=chunk_size, progress=progress, engine=engine)
    grades = pool_grades(store, pool, exam, summary.method_id, probabilities=label == "expected")
    if not relevance:
        return GradeResult(summary.method_id, exam, pool, summary, grades, {}, {}, default_tau(summary.method_id),
                           pd.DataFrame(), pd.DataFrame(), tuple(warnings) + tuple(pool.warnings()), grader.usage,
                           check=check_summary(grades))
    questions = exam.question_ids()
    tau = default_tau(summary.method_id, grades) if tau is None else tau
    labels = exam_labels(grades, questions, label=label, tau=tau)
    scale = 100 if label == "expected" else 1  # expected labels are hundredths of a grade
    qrels = exam_qrels(labels, None if min_grade is None else min_grade * scale)
    cover = exam_cover(runs, grades, questions, tau=tau, depth=depth)
    return GradeResult(summary.method_id, exam, pool, summary, grades, labels, qrels, tau,
                       cover, summarize(cover), tuple(warnings) + tuple(pool.warnings()), grader.usage,
                       canaries=canary_summary)


def _check_complete(pool: Pool, lost: list[tuple[str, str]]) -> None:
    """Refuse qrels that would drop passages the store has grades for (``lost``): a wrong corpus would
    otherwise rewrite a workspace's qrels over the few passages it holds."""
    if not lost:
        return
    pooled = len(pool) + pool.missing_count
    qid, pid = lost[0]
    raise ExamppError(
        f"{pool.missing_count} of the {pooled} pooled passages have no text in the corpus, and the store holds "
        f"grades of {len(lost)} of them (first: {qid}:{pid[:60]}): the qrels would lose their labels; give the "
        f"corpus they were graded with, or --allow-partial to write qrels over the {len(pool)} "
        f"passage{'s' if len(pool) != 1 else ''} with a text; no output written")


@dataclass(frozen=True)
class GradeJob(CheckedSettings):
    """``exampp grade`` for a workspace. Build it with :meth:`configure`; :meth:`run` does the job.

    Paths are as given (a config file's relative paths are already resolved against its folder).
    The fields are the command's settings, named as the configuration file's keys where it has
    them; the numeric ones are checked when the job is made.


    :param workspace: The workspace folder: its runs, corpus, bank and store unless given.
    :param runs: Run files or folders (default: the workspace's ``runs/``).
    :param method: The grading method, e.g. ``self-rating``, ``qa(verify=llm)``, ``direct:thomas``.
    :param backend: A backend name (``hf``, ``openai``...) or None for the method's default.
    :param model: The judge model's name or path (the backend's default when None).
    :param backend_options: That backend's options (device, dtype, batch_size, base_url...).
    :param backend_defaults: Backend options from the config file: dropped where the backend does
        not take them.
    :param depth: How many of each run's top passages to pool.
    :param bank: The question bank file (default: the workspace's).
    :param topics: The topics file or ``irds:<dataset-id>``.
    :param corpus: The passage corpus: file, ``irds:<dataset-id>`` or ``pyserini:<index-dir>``
        (default: the workspace's).
    :param responses: Generated responses (RAG answers) to segment and grade.
    :param store: The grade store file (default: the workspace's).
    :param tau: The grade at which a question counts as answered (default: the method's).
    :param min_grade: The grade from which qrels labels are 1 (binary qrels); graded labels when None.
    :param label: The EXAM label variant of the qrels (:data:`exampp.labels.LABELS`).
    :param chunk_size: Pairs graded between two commits to the store.
    :param strict: Turn the warnings into :class:`~exampp.errors.InputError`, as :func:`grade_collection` does.
    :param allow_partial: Write qrels over the passages with a text, though the store has grades of others.
    :param export_reference: Also write the grades in the reference tool's graded-passages format, to this file.
    :param progress: Show a progress bar.
    :param cascade: The grading cascade, ``embedding:RECALL`` (see :mod:`exampp.grading.cascade`).
    :param cascade_threshold: The first stage's threshold, instead of a target recall.
    :param engine: ``local`` grades in this process; ``ray`` on Ray workers (:mod:`exampp.grading.ray_engine`).
    :param workers: Ray workers, one model replica each (default: one per GPU, else 1).
    :param ray_address: A running Ray cluster (default: start Ray on this machine).
    :param batch_api: ``openai``: grade through the Batch API (:mod:`exampp.grading.batch_engine`).
    :param batch_price: ``IN,OUT``: dollars per million prompt and completion tokens, for the estimate.
    :param batch_poll: Seconds between looks at a batch (default: :data:`exampp.llm.batch_api.POLL_SECONDS`).
    :param canaries: Questions of other queries each pooled passage is also graded against
        (:mod:`exampp.grading.canaries`).
    :raises SettingError: A numeric setting that breaks its rule.
    """

    workspace: Path
    runs: tuple[str, ...] = ()
    method: str = defaults.GRADING_METHOD
    backend: str | None = None
    model: str | None = None
    backend_options: dict[str, Any] = field(default_factory=dict)
    backend_defaults: dict[str, Any] = field(default_factory=dict)
    depth: int = defaults.DEPTH
    bank: str | None = None
    topics: str | None = None
    corpus: str | None = None
    responses: str | None = None
    store: str | None = None
    tau: float | None = None
    min_grade: float | None = None
    label: str = "max"
    chunk_size: int = defaults.CHUNK
    strict: bool = False
    allow_partial: bool = False
    export_reference: str | None = None
    progress: bool = True
    cascade: str | None = None
    cascade_threshold: float | None = None
    engine: str = "local"
    workers: int | None = None
    ray_address: str | None = None
    batch_api: bool = False
    batch_price: str | None = None
    batch_poll: float | None = None
    canaries: int = 0


    def __post_init__(self) -> None:
        """The numeric settings keep their rules (exampp.setting_rules), however the job was made."""
        super().__post_init__()
        check_settings(self.backend_options)
        check_settings(self.backend_defaults)

    @classmethod
    def configure(cls, config: PathLike | None = None, workspace: PathLike | None = None,
                  **settings: Any) -> "GradeJob":
        """Settings given (not None), else from the config file (``config``; else
        ``WORKSPACE/exampp.toml`` when a workspace is given, else ``./exampp.toml``), else the defaults.
        Keys are the config file's (:data:`exampp.formats.exampp_toml.KEYS`) plus ``runs``, ``chunk_size``,
        ``strict``, ``allow_partial``, ``export_reference``, ``progress`` and backend options."""
        from exampp.formats.exampp_toml import BACKEND_KEYS, KEYS, load_config

        # A workspace takes its own config, never the current folder's: its relative paths would point elsewhere.
        cfg = load_config(config, workspace if workspace is not None else ".")
        root = workspace if workspace is not None else cfg.get("workspace", cfg.path.parent if cfg.path else ".")
        options = {key: settings.pop(key, None) for key in BACKEND_KEYS}
        options.update({k: settings.pop(k) for k in list(settings) if k not in _JOB_FIELDS and k not in KEYS})
        from_file = {key: cfg.get(key) for key in BACKEND_KEYS if options[key] is None}
        values = {key: cfg.pick(key, settings.pop(key, None)) for key in KEYS
                  if key != "workspace" and key not in BACKEND_KEYS}
        method = values.pop("grader") or defaults.GRADING_METHOD
        job = {k: v for k, v in settings.items() if v is not None}
        return cls(workspace=Path(root), method=method, backend_options=options, backend_defaults=from_file,
                   **{k: v for k, v in values.items() if v is not None}, **job)

    def grading_method(self) -> GradingMethod:
        from exampp.grading.registry import parse_method

        return parse_method(self.method)

    def backend_spec(self, method: GradingMethod) -> BackendSpec | None:
        name = self.backend or method.default_backend
        if name is None:
            return None
        return BackendSpec(name, self.model, dict(self.backend_options), dict(self.backend_defaults))

    @contextmanager
    def open(self) -> Iterator["OpenGradeJob"]:
        """The job ready to grade, without writing anything: the inputs read (input errors first),
        the backend open and the store open, closed when the block ends. ``exampp grade`` grades
        the configured bank in it; ``exampp bank impact`` grades two banks in the same one."""
        from exampp.grading.registry import check_backend
        from exampp.labels import check_label

        check_label(self.label)
        method = self.grading_method()
        check_grades(method, tau=self.tau, min_grade=self.min_grade, label=self.label)
        spec = self.backend_spec(method)
        if self.engine not in ENGINES:
            raise ExamppError(f"engine {self.engine!r}: choose one of {', '.join(ENGINES)}")
        if self.engine == "local" and (self.workers is not None or self.ray_address is not None):
            raise ExamppError("--workers and --ray-address (workers, ray_address) are settings of --engine ray")
        if self.batch_api or self.batch_price is not None or self.batch_poll is not None:
            self._check_batch_api(spec)
        if spec is not None:  # what can be checked without reading or opening anything, first
            check_backend(method, spec.name)
            if self.engine == "local":  # Ray workers may have devices this process lacks
                _check_device(spec.option("device"))
        cascade = self.cascade_spec(method)
        ws = Workspace.at(self.workspace)
        runs, answers, corpora, bank, topics = self._inputs(ws)
        if bank is None and not method.direct:
            raise NothingToGrade("no question bank: give --bank (or keep one at "
                                 "WORKSPACE/question_banks/questions.jsonl)")
        with self._grader(method, spec, self.store or ws.store) as (grader, engine), \
                opened(self.cascade_backend_spec(spec) if cascade else None) as embedder, \
                _new_store_kept_if_graded(Path(self.store or ws.store)) as store:
            yield OpenGradeJob(self, ws, method, runs, corpora, bank, topics, grader, store, cascade, embedder, engine,
                               answers)

    @contextmanager
    def _grader(self, method: GradingMethod, spec: BackendSpec | None,
                store: PathLike) -> Iterator[tuple[Grader, Engine | None]]:
        """The grader and the engine that runs it: the method bound to a backend opened here (through
        the Batch API with ``batch_api``, its batches kept in ``store``), or the Ray workers, each with its
        own backend (none is opened here)."""
        if self.engine == "local":
            with opened(spec) as backend:
                grader = method.bind(backend)
                yield grader, self._batch_engine(grader, backend, store) if self.batch_api else None
            return
        from exampp.grading.ray_engine import RayEngine

        with RayEngine(method, spec, workers=self.workers, address=self.ray_address) as engine:
            yield engine.grader, engine

    def _check_batch_api(self, spec: BackendSpec | None) -> None:
        """The Batch API's settings go with the openai backend, in this process, without a request budget."""
        from exampp.llm.openai.batch import parse_price

        if not self.batch_api:
            raise ExamppError("--batch-price and --batch-poll (batch_price, batch_poll) are settings of --batch-api")
        if spec is None or spec.name != "openai":
            raise ExamppError(f"--batch-api grades through the OpenAI Batch API: it needs --backend openai, not "
                              f"{spec.name if spec is not None else 'none'}")
        if self.engine != "local":
            raise ExamppError("--batch-api grades in this process: it does not go with --engine ray")
        if spec.option("max_requests") is not None:
            raise ExamppError("--max-requests caps direct requests: with --batch-api the estimate before "
                              "submitting says what a job costs (--batch-price)")
        if self.batch_price is not None:
            parse_price(self.batch_price)

    def _batch_engine(self, grader: Grader, backend: Backend | None, store: PathLike) -> Engine:
        from exampp.grading.batch_engine import BatchEngine
        from exampp.llm.openai.batch import POLL_SECONDS, parse_price

        # --batch-api goes with --backend openai (_check_batch_api)
        return BatchEngine(grader, cast("OpenAIBackend", backend), store, poll_seconds=self.batch_poll or POLL_SECONDS,
                           price=parse_price(self.batch_price) if self.batch_price is not None else None)

    def cascade_spec(self, method: GradingMethod) -> CascadeSpec | None:
        """The cascade asked for, checked against the job's τ (CascadeError when it has no calibration)."""
        cascade = CascadeSpec.parse(self.cascade, self.cascade_threshold)
        if cascade is not None:
            cascade.cut(cascade.stage(method.tau if self.tau is None else self.tau))
        return cascade

    def cascade_backend_spec(self, spec: BackendSpec | None) -> BackendSpec:
        """The first stage's embedder: on the grader's device when one is named, else on the GPU
        when torch sees one (it must keep pace with the LLM), else on the CPU."""
        from exampp.llm.device import resolve_device

        device = (spec.option("device") if spec is not None else None) or "auto"
        return BackendSpec(CASCADE_BACKEND, None, {"device": str(resolve_device(device))})

    def run(self) -> GradeResult:
        """Do the job: read the inputs, open the backend, grade, score, write the qrels."""
        from exampp.formats.trec_qrels import write_qrels

        if self.export_reference and not self.grading_method().judges_relevance:
            raise ExamppError(f"method {self.method!r} judges no relevance: --export-reference does not apply to it")
        with self.open() as job:
            result = job.grade(job.bank)
            if result.check is not None:  # a check writes no qrels: its grades are in the store, for the audit
                return result
            records = pool_records(job.store, result.pool, result.exam, result.method_id) \
                if self.export_reference else []
        # one workspace, one answer: the answers' labels never go into the runs' qrels
        answered = {name: job.runs[name] for name in job.answers}
        answer_qrels, run_qrels = _split(result.qrels, answered)
        result = replace(result, qrels=run_qrels, answer_qrels=answer_qrels)
        written = []
        if len(answered) < len(job.runs):
            write_qrels(run_qrels, job.workspace.exam_qrels)
            written.append(job.workspace.exam_qrels)
        if answered:
            write_qrels(answer_qrels, job.workspace.responses_qrels)
            written.append(job.workspace.responses_qrels)
        if self.export_reference:
            from exampp.formats.reference_grades import reference_queries, write_reference_grades

            rated = {result.method_id: job.method.top_grade > 1}  # the format's is_self_rated: 0-5 self-ratings
            write_reference_grades(reference_queries(result.pool.passages, records, runs=job.runs.values(),
                                                     self_rated=rated),
                                   self.export_reference)
            written.append(Path(self.export_reference))
        return replace(result, written=tuple(written))

    def _inputs(self, ws) -> tuple[dict[str, Run], frozenset[str], list[Corpus], QuestionBank | None,
                                   dict[str, Topic] | None]:
        """The runs (with the answers' runs), the names of the answers' runs, the corpora, bank and topics."""
        from exampp.errors import InputError
        from exampp.formats.corpus_sources import open_corpus
        from exampp.formats.topic_files import read_topics
        from exampp.formats.trec_run import read_runs

        sources, topics = self.sources()
        runs = read_runs(sources) if sources else {}
        answers: frozenset[str] = frozenset()
        corpora: list[Corpus] = []
        corpus = given_or_existing(self.corpus, ws.corpus)
        if corpus is not None:
            corpora.append(open_corpus(corpus))
        if self.responses is not None:
            from exampp.segment import load_responses

            segmented = load_responses(self.responses)
            for name, run in segmented.runs.items():
                if name in runs:
                    raise InputError(self.responses, None, f"run id {name!r} is already the name of a run "
                                                           f"({runs[name].path})")
                runs[name] = run
            answers = frozenset(segmented.runs)
            corpora.append(segmented.corpus)
        if not runs:
            raise NothingToGrade("no runs: give run files or folders (or --responses)")
        if not corpora:
            raise NothingToGrade("no passage texts: give --corpus (or --responses)")
        return (runs, answers, corpora, workspace_bank(ws, self.bank),
                read_topics(topics) if topics is not None else None)

    def sources(self) -> tuple[list[PathLike], PathLike | None]:
        """The run files or folders the job grades (the workspace's ``runs/`` when none are given and it
        exists) and its topics source (the workspace's when none is given and it exists)."""
        ws = Workspace.at(self.workspace)
        runs: list[PathLike] = list(self.runs) or ([ws.runs] if ws.runs.is_dir() else [])
        return runs, given_or_existing(self.topics, ws.topics)


_JOB_FIELDS = frozenset(GradeJob.__dataclass_fields__)


def _split(qrels: Qrels, runs: Mapping[str, Run]) -> tuple[Qrels, Qrels]:
    """``qrels`` parted into the labels of the passages ``runs`` rank and the others."""
    ranked = ranked_pairs(runs)
    inside: Qrels = {}
    outside: Qrels = {}
    for query_id, docs in qrels.items():
        for docid, label in docs.items():
            (inside if (query_id, docid) in ranked else outside).setdefault(query_id, {})[docid] = label
    return inside, outside


@contextmanager
def _new_store_kept_if_graded(path: Path) -> Iterator[GradeStore]:
    """The store at ``path``, open; one this job made is removed again when the job fails before
    anything was stored in it (a failed first grade leaves no empty store behind)."""
    existed = path.exists()
    try:
        with GradeStore(path) as store:
            yield store
    except BaseException:
        if not existed and path.exists():
            with GradeStore(path, read_only=True) as store:
                empty = store.is_empty()
            if empty:
                for leftover in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
                    leftover.unlink(missing_ok=True)
        raise


@dataclass(frozen=True)
class OpenGradeJob:
    """A :class:`GradeJob` inside :meth:`GradeJob.open`: its inputs read, its grader bound, its store open."""

    job: GradeJob
    workspace: Workspace
    method: GradingMethod
    runs: dict[str, Run]
    corpora: list[Corpus]
    bank: QuestionBank | None  # the configured bank
    topics: dict[str, Topic] | None
    grader: Grader  # the method bound to its backend, or the Ray workers' (RayEngine.grader)
    store: GradeStore
    cascade: CascadeSpec | None = None
    cascade_backend: Backend | None = None  # the cascade's embedder, open
    engine: Engine | None = None  # where the grader runs: None, in this process
    answers: frozenset[str] = frozenset()  # the runs of --responses' answers, among ``runs``

    def grade(self, bank: QuestionBank | None) -> GradeResult:
        """Grade the pool against ``bank`` (only the pairs the store lacks) and score, with the job's
        settings; writes nothing but grades into the store."""
        job = self.job
        return grade_collection(self.runs, self.corpora, self.grader, self.store, bank, self.topics, depth=job.depth,
                                tau=job.tau, min_grade=job.min_grade, label=job.label, strict=job.strict,
                                allow_partial=job.allow_partial,
                                chunk_size=job.chunk_size,
                                progress=job.progress, cascade=self.cascade, cascade_backend=self.cascade_backend,
                                engine=self.engine, canaries=job.canaries)


def _check_device(device: str | None) -> None:
    """A wrong device is reported before the inputs are read (``auto`` always resolves)."""
    if device in (None, "auto"):
        return
    from exampp.llm.device import resolve_device

    try:
        resolve_device(device)
    except ImportError:  # no torch: opening the backend names the package to install
        pass

