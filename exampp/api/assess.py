"""The assess jobs: a human sample that checks the judge.

- :func:`draw_sample` chooses the pool pairs people should judge (``exampp assess sample``);
- :class:`EstimateJob` corrects every run's measures with their labels (``exampp assess estimate``);
- :func:`judge_agreement` compares the judge with them on the sample (``exampp assess agree``);
- :class:`PlanJob` says how many labels a target interval width needs (``exampp assess plan``);
- :class:`HumanCheckJob` checks the judge's leaderboard with them (the report's *Human check*).

The judge is a workspace's stored grades (one method): a pair's judge grade is its EXAM label (the
best grade over its query's questions), relevant from the method's τ. The pool is the top-k of the
workspace's runs, k the largest cutoff of the measures the sample serves. Errors are
:class:`~exampp.errors.ExamppError` (one line on the command line).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from exampp.api import Warn, python_warning
from exampp.api.workspace import (
    RunsSource,
    as_workspace,
    labelled_grades,
    stored_grades,
    workspace_runs,
)
from exampp.assess import design
from exampp.assess.agreement import JudgeAgreement, agreement_of
from exampp.assess.estimators import (
    DEFAULT_ESTIMATOR,
    REPLICATES,
    Estimates,
    Evidence,
    estimate,
    judge_values,
)
from exampp.assess.measures import (
    NUGGET_MEASURES,
    SUPPORT_MEASURES,
    AssessMeasure,
    MeasureError,
    run_weights,
)
from exampp.assess.population import Population, passage_population
from exampp.errors import ExamppError, InputError
from exampp.files.io import PathLike, display_name
from exampp.formats.assessment_sample import SamplePair, read_sample, sample_keys, write_sample
from exampp.formats.citations import CitedAnswer, read_citations
from exampp.stores.layout import Workspace


class AssessError(ExamppError, ValueError):
    """An assessment job that cannot be done as asked."""


@dataclass(frozen=True)
class Judge:
    """The judge's side of a workspace: the pool and the judge's grade of each pair."""

    population: Population
    method_id: str
    relevant_grade: float


def workspace_judge(workspace: Workspace | PathLike, measures: Sequence[AssessMeasure], *,
                    runs: RunsSource | None = None, method: str | None = None, nuggets: PathLike | None = None,
                    support: PathLike | None = None, warn: Warn = python_warning) -> Judge:
    """The judge's side: the top-k pool of the runs (k: the measures' largest cutoff) with the EXAM
    label of each pair.

    :param workspace: The workspace: its runs and the judge's grades.
    :param measures: The measures the pool serves. With ``support`` they must be support measures of
        one kind: a sentence's label is its citations' mean support for weighted precision, their
        best for weighted recall.
    :param runs: The runs (default: the workspace's ``runs/``).
    :param method: The store's grading method, the judge (None: the only one there).
    :param nuggets: The judge's nugget assignment file: every (answer, nugget) pair with its
        assignment as the judge's grade (relevant: supported), instead of the pool.
    :param support: The judge's citation-support file: every citing sentence with its support for
        the first measure, instead of the pool.
    :param warn: Takes each warning line (default: a Python warning).
    :raises AssessError: No runs, pooled pairs without a grade, or measures that do not fit the judge.
    """
    from exampp.labels import exam_labels

    if support is not None:
        return _support_judge(read_citations(support, texts=False), measures, support)
    if any(m.kind in SUPPORT_MEASURES for m in measures):
        raise AssessError("support measures (weighted_precision, weighted_recall) need the judge's citation-support "
                          "file: --support FILE")
    if nuggets is not None:
        from exampp.assess.population import nugget_population
        from exampp.formats.nugget_assignments import read_assignments

        return Judge(nugget_population(read_assignments(nuggets)), f"nuggets:{display_name(nuggets)}", 2.0)
    if any(m.kind in NUGGET_MEASURES for m in measures):
        raise AssessError("nugget measures (V_strict, A_strict, ...) need the judge's assignment: --nuggets FILE")

    ws = as_workspace(workspace)
    read = workspace_runs(ws, runs)
    if not read:
        raise AssessError(f"{ws.runs}: no runs")
    stored = labelled_grades(ws, stored_grades(ws, method), None, warn)
    labels = exam_labels(stored.grades)
    depth = max(m.cutoff for m in measures)
    grades = {(q, p): float(v) for q, per_query in labels.items() for p, v in per_query.items()}
    try:
        population = passage_population(read, depth, grades)
    except KeyError as exc:
        (query_id, doc_id), missing = exc.args
        raise AssessError(f"{missing} pooled pair(s) have no grade of {stored.method_id} (first: query {query_id}, "
                          f"passage {doc_id}): grade the top {depth} of every run first (exampp grade --depth "
                          f"{depth})") from None
    return Judge(population, stored.method_id, stored.default_tau)


def _support_judge(answers: Sequence[CitedAnswer], measures: Sequence[AssessMeasure], path: PathLike) -> Judge:
    """The judge's citation support (``answers``, read from ``path``) for one support measure."""
    from exampp.assess.population import support_population

    kinds = {m.kind for m in measures}
    if not kinds <= set(SUPPORT_MEASURES) or len(kinds) != 1:
        raise AssessError("with --support, the measures are weighted_precision or weighted_recall "
                          f"(got {', '.join(m.name for m in measures)})")
    return Judge(support_population(answers, kinds.pop()), f"support:{display_name(path)}", 2.0)


def parse_measures(names: Sequence[str], rel_level: float = 1.0) -> list[AssessMeasure]:
    """The measures a sample serves.

    :param names: Measure names (``P@10``, ``nDCG@10``, ``V_strict``, ``weighted_precision``...).
    :param rel_level: The human grade from which a unit is relevant.
    :raises AssessError: An unknown measure.
    """
    try:
        return [AssessMeasure.parse(name, rel_level) for name in names]
    except MeasureError as exc:
        raise AssessError(str(exc)) from None


# --- sample ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SampleJob:
    """What ``exampp assess sample`` draws from a workspace's pool (see the module docstring).

    :param workspace: The workspace: its runs and the judge's grades.
    :param budget: How many pairs to draw (at least 1).
    :param seed: The seed of the draw.
    :param strategy: How pairs are drawn: one of :data:`exampp.assess.design.STRATEGIES`.
    :param measures: The measures the sample serves (``P@10``, ``nDCG@10``...); the pool is the top-k
        of the runs, k their largest cutoff.
    :param rel_level: The human grade from which a pair is relevant.
    :param method: The store's grading method, the judge (None: the only one there).
    :param runs: The runs (default: the workspace's ``runs/``).
    :param output: The sample file to write. One that holds a sample already is extended: the new
        draw must contain it (a larger budget with the same seed, strategy, measures and runs does).
    :param nuggets: The judge's nugget assignment file: a sample of (answer, nugget) pairs.
    :param support: The judge's citation-support file: a sample of citing sentences.
    """

    workspace: Workspace | PathLike
    budget: int
    seed: int = 0
    strategy: str = design.DEFAULT_STRATEGY
    measures: tuple[str, ...] = ("P@10",)
    rel_level: float = 1.0
    method: str | None = None
    runs: RunsSource | None = None
    output: PathLike | None = None
    nuggets: PathLike | None = None
    support: PathLike | None = None


@dataclass(frozen=True)
class SampleResult:
    pairs: list[SamplePair]
    pool_size: int
    kept: int  # pairs of the sample ``output`` held before, all in the new one


def draw_sample(job: SampleJob, warn: Warn = python_warning) -> SampleResult:
    """The pairs to judge, in priority order (:mod:`exampp.assess.design`), written to ``job.output``.

    :param job: What to draw.
    :param warn: Takes each warning line (default: a Python warning).
    :raises AssessError: A budget below 1, an unknown strategy or measure, or a sample that cannot be
        extended as asked.
    """
    if job.budget < 1:
        raise AssessError(f"--budget must be at least 1, got {job.budget}")
    if job.strategy not in design.STRATEGIES:
        raise AssessError(f"unknown strategy {job.strategy!r}; one of {', '.join(design.STRATEGIES)}")
    measures = parse_measures(job.measures, job.rel_level)
    groups = _measure_groups(measures, job.support)
    judges = [workspace_judge(job.workspace, group, runs=job.runs, method=job.method, nuggets=job.nuggets,
                              support=job.support, warn=warn) for group in groups]
    # each measure's layout (support measures weigh a sentence each their own way); the first group's
    # judge grades set the strata
    layouts = {m.name: judge.population.layout for group, judge in zip(groups, judges) for m in group}
    pop = judges[0].population
    top = float(max(pop.judge.max(initial=0.0), 1.0))
    sd = design.prior_sd(pop.judge, top)
    squares, spread = design.run_weight_sums({m.name: run_weights(m, layouts[m.name]).toarray() for m in measures})
    disagreement = judges_disagreement(job.workspace, pop, warn) if job.strategy == "uncertainty" else None
    sizes = design.sizes_for(job.strategy, sd, squares, spread, disagreement)
    uniforms = design.permanent_uniforms(job.seed, pop.query_ids, pop.keys)
    chosen, probabilities, priorities = design.draw(sizes, uniforms, job.budget)
    if job.budget > pop.layout.n_pairs:
        warn(f"the budget ({job.budget}) covers the whole pool: all {pop.layout.n_pairs} pairs drawn")
    kind = _kind(job.nuggets, job.support)
    pairs = [SamplePair.of(kind, _ids(kind, pop.query_ids[d], pop.keys[d]), float(p), _stratum(pop.judge[d]),
                           float(priority)) for d, p, priority in zip(chosen, probabilities, priorities)]
    kept = 0
    if job.output is not None and str(job.output) != "-" and Path(job.output).is_file():
        before = sample_keys(read_sample(job.output))
        missing = before - sample_keys(pairs)
        if missing:
            query_id, key = sorted(missing)[0]
            raise AssessError(f"{display_name(job.output)}: {len(missing)} of its pairs are not in the new draw "
                              f"(first: {query_id} {key}): it was drawn with another seed, strategy, measures or "
                              "runs, or a larger budget; give another output")
        kept = len(before)
    if job.output is not None:
        write_sample(pairs, job.output)
    return SampleResult(pairs, pop.layout.n_pairs, kept)


def judges_disagreement(workspace: Workspace | PathLike, population: Population, warn: Warn) -> np.ndarray | None:
    """Per pooled pair, the standard deviation over the store's relevance methods of their EXAM labels,
    each on its own scale divided by its top grade; None (and a warning) with fewer than two methods.

    :param workspace: The workspace whose store holds the methods' grades.
    :param population: The pool.
    :param warn: Takes the warning line.
    """
    from exampp.api.workspace import relevance_methods
    from exampp.labels import exam_labels
    from exampp.stores.grade_store import GradeStore

    ws = as_workspace(workspace)
    with GradeStore(ws.store) as store:
        methods = relevance_methods(store.methods())
        if len(methods) < 2:
            warn(f"{ws.store}: one judge only ({', '.join(methods) or 'none'}): the uncertainty strategy takes the "
                 "judge's grades as the runs strategy does")
            return None
        columns = []
        for method in methods:
            labels = exam_labels(store.grades(method))
            values = np.array([float(labels.get(q, {}).get(k, np.nan)) for q, k in zip(population.query_ids,
                                                                                        population.keys)])
            top = np.nanmax(values) if np.isfinite(values).any() else 1.0
            columns.append(values / (top or 1.0))
    spread = np.nanstd(np.column_stack(columns), axis=1)
    return np.nan_to_num(spread, nan=float(np.nanmean(spread)) if np.isfinite(spread).any() else 0.0)


def _ids(kind: str, query_id: str, key: str) -> list[str]:
    """A pooled pair's id columns: its query and passage, or its query, run and nugget or sentence
    (the key ``run/item``)."""
    return [query_id, key] if kind == "passage" else [query_id, *key.rsplit("/", 1)]


def _kind(nuggets: PathLike | None, support: PathLike | None) -> str:
    """The kind of pair a judge's file gives: nuggets of answers, citing sentences, or passages."""
    return "nugget" if nuggets is not None else "sentence" if support is not None else "passage"


def _measure_groups(measures: Sequence[AssessMeasure], support: PathLike | None) -> list[list[AssessMeasure]]:
    """The measures in groups one judged sample serves as one: all of them, or with ``support`` one group
    per support measure (a sentence's label is its mean support for one, its best for the other)."""
    if support is None:
        return [list(measures)]
    return [[m for m in measures if m.kind == kind] for kind in dict.fromkeys(m.kind for m in measures)]


def _stratum(grade: float) -> str:
    return f"judge={grade:g}"


# --- labels and the sample, read together ---------------------------------------------------------

@dataclass(frozen=True)
class Labelled:
    """A sample with its labels, as the estimators see it (``evidence``), and what was left out."""

    evidence: Evidence
    judge: Judge
    unlabelled: int
    outside: int  # labels of pairs the sample does not hold


def read_human_labels(workspace: Workspace | PathLike, path: PathLike | None, nuggets: PathLike | None = None
                      ) -> dict[tuple[str, str], list[float]]:
    """(query id, key) -> every assessor's grade.

    :param workspace: The workspace whose label store is read when no file is given (what
        ``exampp assess serve`` and ``import`` put there).
    :param path: A label file (qrels with an optional assessor column, or Label Studio's export:
        :func:`exampp.stores.assessments.read_labels`; with ``nuggets``, also people's nugget assignment file).
    :param nuggets: The judge's nugget assignment file, when the sample is of nuggets.
    """
    from exampp.api.assess_labels import store_labels
    from exampp.stores.assessments import read_labels

    if nuggets is not None and path is not None and _is_assignment_file(path):
        from exampp.assess.population import nugget_labels
        from exampp.formats.nugget_assignments import read_assignments

        return nugget_labels(read_assignments(nuggets), read_assignments(path), display_name(path))

    table = read_labels(path) if path is not None else store_labels(as_workspace(workspace).root)
    labels: dict[tuple[str, str], list[float]] = {}
    for qid, key, grade in table[["query_id", "key", "grade"]].itertuples(index=False):
        labels.setdefault((qid, key), []).append(float(grade))
    return labels


def _support_human_labels(ours: Sequence[CitedAnswer], labels: PathLike | None, kind: str
                          ) -> dict[tuple[str, str], list[float]]:
    """(topic, ``run/sentence id``) -> [support] from people's citation-support file (the track's format),
    the sentences keyed as in the judge's (``ours``)."""
    from exampp.assess.population import support_labels

    if labels is None:
        raise AssessError("support labels come as people's citation-support file (the track's format): --labels FILE")
    return support_labels(ours, read_citations(labels, texts=False), kind, display_name(labels))


def _is_assignment_file(path: PathLike) -> bool:
    """Whether ``path`` is a nugget assignment file (JSONL answers with their nuggets)."""
    import json

    from exampp.files.io import first_nonblank, iter_lines

    first, _ = first_nonblank(iter(iter_lines(path)))
    try:
        record = json.loads(first) if first is not None and first.lstrip().startswith("{") else None
    except ValueError:
        return False
    return isinstance(record, dict) and "nuggets" in record


def labelled_sample(workspace: Workspace | PathLike, sample: PathLike, labels: PathLike | None,
                    measures: Sequence[AssessMeasure], *, runs: RunsSource | None = None,
                    method: str | None = None, nuggets: PathLike | None = None, support: PathLike | None = None,
                    domain: bool = False, warn: Warn = python_warning) -> Labelled:
    """The sample's pairs joined with their labels and the judge's pool. A sampled pair without a label
    is non-response: the pairs labelled in its stratum stand for it (each one's probability times the
    stratum's response rate), and a warning says how many.

    :param workspace: The workspace: its runs and the judge's grades.
    :param sample: The sample file.
    :param labels: People's labels of it (default: the workspace's label store).
    :param measures: The measures; with ``support``, one support measure (see :func:`workspace_judge`).
    :param runs: The runs (default: the workspace's ``runs/``).
    :param method: The store's grading method, the judge (None: the only one there).
    :param nuggets: The judge's nugget assignment file, for a sample of nuggets.
    :param support: The judge's citation-support file, for a sample of sentences.
    :param domain: ``runs`` are some of the runs the sample was drawn for: its pairs outside their
        pool are left out (the rest keep their probabilities, so estimates over the smaller pool stay
        unbiased); without, such a pair is an error.
    :param warn: Takes each warning line (default: a Python warning).
    """
    if support is not None:  # the judge's file read once: for the pool and for the people's labels
        ours = read_citations(support, texts=False)
        judge = _support_judge(ours, measures, support)
    else:
        judge = workspace_judge(workspace, measures, runs=runs, method=method, nuggets=nuggets, warn=warn)
    pairs = read_sample(sample)
    kind = _kind(nuggets, support)
    if any(pair.kind != kind for pair in pairs):
        raise AssessError(f"{display_name(sample)}: a sample of nuggets goes with the judge's assignment (--nuggets), "
                          "a sample of sentences with the judge's citation support (--support), a sample of "
                          "passages with a workspace's grades")
    if support is not None:
        given = _support_human_labels(ours, labels, measures[0].kind)
    else:
        given = read_human_labels(workspace, labels, nuggets)
    index = judge.population.index()
    outside_pool = [p for p in pairs if (p.query_id, p.key) not in index]
    if domain:
        pairs = [p for p in pairs if (p.query_id, p.key) in index]
        given = {key: value for key, value in given.items() if key in index}
    elif outside_pool:
        first = outside_pool[0]
        raise InputError(sample, None, f"{len(outside_pool)} sampled pair(s) are not in the judge's pool (first: "
                                       f"{first.query_id} {first.key}): the sample was drawn from other runs or "
                                       "answers, or a deeper pool")
    responded = [p for p in pairs if (p.query_id, p.key) in given]
    if not responded:
        where = display_name(labels) if labels is not None else as_workspace(workspace).assessments
        raise AssessError(f"{where}: none of the {len(pairs)} sampled pairs has a label")
    rate = _response_rates(pairs, responded)
    unlabelled = len(pairs) - len(responded)
    if unlabelled:
        warn(f"{unlabelled} of {len(pairs)} sampled pairs have no label: the labelled pairs of their stratum "
             "stand for them")
    outside = len(set(given) - sample_keys(pairs))
    if outside:
        warn(f"{outside} labelled pair(s) are not in the sample and are left out (an estimate uses sampled pairs only)")
    width = max(len(given[(p.query_id, p.key)]) for p in responded)
    grid = np.full((len(responded), width), np.nan)
    for i, p in enumerate(responded):
        values = given[(p.query_id, p.key)]
        grid[i, :len(values)] = values
    evidence = Evidence(
        judge.population.layout, judge.population.judge, judge.relevant_grade,
        np.array([index[(p.query_id, p.key)] for p in responded], dtype=int),
        np.array([p.inclusion_probability * rate[p.stratum] for p in responded]), grid)
    return Labelled(evidence, judge, unlabelled, outside)


def _response_rates(pairs: Sequence[SamplePair], responded: Sequence[SamplePair]) -> dict[str, float]:
    drawn = pd.Series([p.stratum for p in pairs]).value_counts()
    answered = pd.Series([p.stratum for p in responded]).value_counts()
    return {cast(str, stratum): float(answered.get(stratum, 0)) / float(count) for stratum, count in drawn.items()}


# --- estimate -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class EstimateJob:
    """Every run's measures from the judge and the labelled sample (``exampp assess estimate``). :meth:`run` does the
    job.

    :param workspace: The workspace: its runs and the judge's grades.
    :param sample: The sample file (:func:`draw_sample`).
    :param labels: People's labels of it: a label file (:func:`exampp.stores.assessments.read_labels`; with
        ``nuggets``, also a nugget assignment file; with ``support``, a citation-support file). By
        default the workspace's label store.
    :param measures: ``P@10``, ``nDCG@10``...; with ``nuggets``, the RAG track's V_strict, A_strict, V,
        A, W_strict, W of every run's answers; with ``support``, weighted_precision and weighted_recall.
    :param rel_level: The human grade from which a pair is relevant.
    :param level: The intervals' confidence level.
    :param estimator: How the labels correct the judge (:mod:`exampp.assess.estimators`).
    :param method: The store's grading method, the judge (None: the only one there).
    :param runs: The runs (default: the workspace's ``runs/``).
    :param nuggets: The judge's nugget assignment file: estimate from (answer, nugget) labels.
    :param support: The judge's citation-support file: estimate from people's support of the sampled
        sentences' citations.
    :param replicates: The bootstrap's replicates, for the intervals.
    :param seed: The seed of the bootstrap.
    """

    workspace: Workspace | PathLike
    _: KW_ONLY
    sample: PathLike
    labels: PathLike | None = None
    measures: Sequence[str] = ("P@10",)
    rel_level: float = 1.0
    level: float = 0.9
    estimator: str = DEFAULT_ESTIMATOR
    method: str | None = None
    runs: RunsSource | None = None
    nuggets: PathLike | None = None
    support: PathLike | None = None
    replicates: int = REPLICATES
    seed: int = 0

    def run(self, warn: Warn = python_warning) -> Estimates:
        """Do the job.

        :param warn: Takes each warning line (default: a Python warning).
        """
        parsed = parse_measures(self.measures, self.rel_level)
        parts: list[Estimates] = []
        for group in _measure_groups(parsed, self.support):
            data = labelled_sample(self.workspace, self.sample, self.labels, group, runs=self.runs, method=self.method,
                                   nuggets=self.nuggets, support=self.support,
                                   warn=warn if not parts else lambda line: None)  # said once
            parts.append(_estimate(data, group, self.estimator, self.level, self.seed, warn, self.replicates))
        if len(parts) == 1:
            return parts[0]
        return Estimates(pd.concat([p.table for p in parts], ignore_index=True),
                         pd.concat([p.differences for p in parts], ignore_index=True), self.estimator, self.level)


def _estimate(data: Labelled, measures: Sequence[AssessMeasure], estimator: str, level: float, seed: int,
              warn: Warn, replicates: int = REPLICATES) -> Estimates:
    """:func:`~exampp.assess.estimators.estimate` of a labelled sample, warning where nDCG's ideal rests
    on too few labels, its refusals as :class:`AssessError`."""
    layout = data.evidence.layout
    few = min(np.bincount(layout.query_of[data.evidence.sampled], minlength=len(layout.queries)))
    if estimator != "judge" and any(m.kind == "nDCG" for m in measures) and few < 5:
        warn(f"nDCG's ideal DCG is estimated per query, and a query has {few} labelled pair(s): with fewer than 5 "
             "(DL19: below 5% of the pool) its intervals cover less than their level: use P@k")
    try:
        return estimate(data.evidence, measures, estimator=estimator, level=level, replicates=replicates, seed=seed)
    except ValueError as exc:
        raise AssessError(str(exc)) from None


def estimates_json(result: Estimates) -> dict[str, dict[str, dict[str, float | None]]]:
    """``{run: {measure: {"estimate", "low", "high"}}}`` (NaN as null).

    :param result: The estimates (:class:`EstimateJob`).
    """
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    row: Any  # a row of the table (pandas-stubs types its fields as any scalar)
    for row in result.table.itertuples(index=False):
        out.setdefault(row.run, {})[row.measure] = {
            key: (None if math.isnan(value) else float(value))
            for key, value in (("estimate", row.estimate), ("low", row.low), ("high", row.high))}
    return out


# --- agree ----------------------------------------------------------------------------------------


def judge_agreement(workspace: Workspace | PathLike, *, sample: PathLike, labels: PathLike | None = None,
                    rel_level: float = 1.0,
                    method: str | None = None, runs: RunsSource | None = None, depth: int = 10, top: int = 20,
                    level: float = 0.9, warn: Warn = python_warning) -> JudgeAgreement:
    """κ, the confusion table, the judge's calibration curve and the largest disagreements of the
    judge and the labelled sample (``exampp assess agree``).

    :param workspace: The workspace: its runs and the judge's grades.
    :param sample: The sample file (:func:`draw_sample`).
    :param labels: People's labels of it (default: the workspace's label store).
    :param rel_level: The human grade from which a pair is relevant.
    :param method: The store's grading method, the judge (None: the only one there).
    :param runs: The runs (default: the workspace's ``runs/``).
    :param depth: The pool: the top ``depth`` of the runs.
    :param top: How many of the largest disagreements to list.
    :param level: The calibration curve's confidence level.
    :param warn: Takes each warning line (default: a Python warning).
    """
    measures = [AssessMeasure("P@depth", "P", depth, rel_level)]
    data = labelled_sample(workspace, sample, labels, measures, runs=runs, method=method, warn=warn)
    return agreement_of(data.evidence, data.judge.population, rel_level, top=top, level=level)


# --- plan -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BudgetPlan:
    """Per measure: the labels the pilot has, its mean interval width, and the labels the target
    width needs (same design, the pilot's error variance per judge grade)."""

    table: pd.DataFrame
    target_width: float


@dataclass(frozen=True)
class PlanJob:
    """How many labels a design needs for a target interval width, with the direct (calibrated) estimator and the
    labelled sample as the pilot (:mod:`exampp.assess.planning`; ``exampp assess plan``). :meth:`run` does the
    job.

    :param workspace: The workspace: its runs and the judge's grades.
    :param sample: The pilot sample file (:func:`draw_sample`).
    :param labels: People's labels of it (default: the workspace's label store).
    :param target_width: The mean interval width to reach.
    :param measures: The measures (``P@10``, ``nDCG@10``...).
    :param rel_level: The human grade from which a pair is relevant.
    :param level: The intervals' confidence level.
    :param strategy: The design: one of :data:`exampp.assess.design.STRATEGIES`.
    :param method: The store's grading method, the judge (None: the only one there).
    :param runs: The runs (default: the workspace's ``runs/``).
    """

    workspace: Workspace | PathLike
    _: KW_ONLY
    sample: PathLike
    labels: PathLike | None = None
    target_width: float
    measures: Sequence[str] = ("P@10",)
    rel_level: float = 1.0
    level: float = 0.9
    strategy: str = design.DEFAULT_STRATEGY
    method: str | None = None
    runs: RunsSource | None = None

    def run(self, warn: Warn = python_warning) -> BudgetPlan:
        """Do the job.

        :param warn: Takes each warning line (default: a Python warning).
        """
        from scipy import stats

        from exampp.assess.estimators import calibrated_predictions, target_values
        from exampp.assess.measures import Target, measure_totals
        from exampp.assess.planning import grade_variances, labels_needed, mean_width

        if not self.target_width > 0:
            raise AssessError(f"--target-width must be positive, got {self.target_width}")
        parsed = parse_measures(self.measures, self.rel_level)
        data = labelled_sample(self.workspace, self.sample, self.labels, parsed, runs=self.runs, method=self.method,
                               warn=warn)
        ev, pop = data.evidence, data.judge.population
        z = stats.norm.ppf((1 + self.level) / 2)
        top = float(max(pop.judge.max(initial=0.0), 1.0))
        squares, spread = design.run_weight_sums({m.name: run_weights(m, pop.layout).toarray() for m in parsed})
        sizes = design.sizes_for(self.strategy, design.prior_sd(pop.judge, top), squares, spread)
        rows = []
        for m in parsed:
            target = Target("gain") if m.kind == "nDCG" else measure_totals(m, pop.layout, np.ones(0)).targets[0]
            _, held_out = calibrated_predictions(ev, target)
            errors = (target_values(ev.labels, target) - held_out) ** 2
            variances = grade_variances(pop.judge, ev.judge[ev.sampled], errors)
            weights = run_weights(m, pop.layout).toarray()
            rows.append((m.name, len(ev.sampled), mean_width(weights, sizes, variances, len(ev.sampled), z),
                         labels_needed(weights, sizes, variances, self.target_width, z), pop.layout.n_pairs))
        table = pd.DataFrame(rows, columns=["measure", "labels", "width", "labels_needed", "pool"])
        return BudgetPlan(table, self.target_width)


# --- the report's human check ---------------------------------------------------------------------

@dataclass(frozen=True)
class HumanCheck:
    """What the report shows of a labelled sample: ``leaderboard`` (run, then for each measure the
    judge's value and the corrected estimate with its interval, best first by the first measure's
    estimate), ``orderings`` (the pairs of runs the sample confirms in the judge's order), the judge's
    ``calibration`` and κ."""

    leaderboard: pd.DataFrame
    orderings: pd.DataFrame
    calibration: pd.DataFrame
    kappa: float
    n_pairs: int
    n_compared: int  # pairs of runs compared per measure
    estimator: str
    level: float


@dataclass(frozen=True)
class HumanCheckJob:
    """The corrected leaderboard beside the judge's, the confirmed orderings and the agreement: the sample joined
    with its labels once, for all three. :meth:`run` does the job.

    :param workspace: The workspace: its runs and the judge's grades.
    :param sample: The sample file (:func:`draw_sample`).
    :param labels: People's labels of it (default: the workspace's label store).
    :param measures: The measures to correct (``P@10``, ``nDCG@10``...); the first orders the leaderboard.
    :param rel_level: The human grade from which a pair is relevant.
    :param level: The intervals' confidence level.
    :param estimator: How the labels correct the judge (:mod:`exampp.assess.estimators`).
    :param method: The store's grading method, the judge (None: the only one there).
    :param exclude: Runs to leave out; the sample's pairs of the other runs' pool only are used (see
        ``domain`` in :func:`labelled_sample`).
    :param seed: The seed of the bootstrap.
    """

    workspace: Workspace | PathLike
    _: KW_ONLY
    sample: PathLike
    labels: PathLike | None = None
    measures: Sequence[str] = ("P@10",)
    rel_level: float = 1.0
    level: float = 0.9
    estimator: str = DEFAULT_ESTIMATOR
    method: str | None = None
    exclude: Sequence[str] = ()
    seed: int = 0

    def run(self, warn: Warn = python_warning) -> HumanCheck:
        """Do the job.

        :param warn: Takes each warning line (default: a Python warning).
        """
        parsed = parse_measures(self.measures, self.rel_level)
        left_out = set(self.exclude)
        runs = {name: run for name, run in workspace_runs(self.workspace).items() if name not in left_out}
        data = labelled_sample(self.workspace, self.sample, self.labels, parsed, runs=runs, method=self.method,
                               domain=bool(self.exclude), warn=warn)
        corrected = _estimate(data, parsed, self.estimator, self.level, self.seed, warn)
        board: pd.DataFrame | None = None
        for measure in parsed:
            name = measure.name
            part = corrected.table[corrected.table["measure"] == name].set_index("run")
            own = pd.Series(judge_values(measure, data.evidence), index=data.evidence.layout.runs)
            columns = pd.DataFrame({f"{name} judge": own, name: part["estimate"], f"{name} low": part["low"],
                                    f"{name} high": part["high"]})
            board = columns if board is None else board.join(columns)
        assert board is not None  # one measure at least (the default: P@10)
        board = board.sort_values(self.measures[0], ascending=False, kind="stable").rename_axis("run").reset_index()
        differences = corrected.differences
        confirmed = differences[differences["confirmed"]].drop(columns=["confirmed"]).reset_index(drop=True)
        agreement = agreement_of(data.evidence, data.judge.population, self.rel_level, level=self.level)
        n_runs = len(data.evidence.layout.runs)
        return HumanCheck(board, confirmed, agreement.calibration, agreement.kappa, agreement.n_pairs,
                          n_runs * (n_runs - 1) // 2, self.estimator, self.level)
