"""The score jobs: EXAM-Cover of runs on a workspace's grades, EXAM-Qrels from those grades, and
leaderboards of runs under ir_measures / trec_eval measures on qrels.

Errors are :class:`~exampp.errors.ExamppError` (the command line prints them as one line).
"""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass

import pandas as pd

from exampp.api import Warn, python_warning
from exampp.api.workspace import (
    NothingToWrite,
    RunsSource,
    as_workspace,
    exam_questions,
    given_or_existing,
    labelled_grades,
    question_facets,
    stored_grades,
    workspace_bank,
    workspace_exam,
    workspace_runs,
)
from exampp.collection.qrels import IntentQrels, Qrels
from exampp.collection.runs import Run
from exampp.defaults import DEPTH as DEFAULT_DEPTH, LEADERBOARD_MEASURES
from exampp.errors import ExamppError
from exampp.files.io import PathLike
from exampp.formats.trec_run import RunFile, run_paths
from exampp.setting_rules import CheckedSettings, check_settings
from exampp.stores.layout import Workspace

EXAM_SOURCE = "the exam (question bank)"  # what run queries are checked against, in warnings


class NoRunLeft(ExamppError, ValueError):
    """``exclude`` names every run there is.

    :param runs: The names of the runs read.
    """

    def __init__(self, runs: Sequence[str]):
        self.runs = sorted(runs)
        super().__init__(f"exclude leaves no run: it names every run read ({', '.join(self.runs)})")


@dataclass(frozen=True)
class CoverResult:
    """EXAM-Cover of each run on the grades of one stored method.

    :param per_query: Columns ``run, query_id, covered, total, cover`` (see :func:`exampp.scoring.exam_cover`).
    :param leaderboard: Columns ``run, mean, stderr, n_queries``, best first (see
        :func:`exampp.scoring.summarize`); with a bootstrap also ``low`` and ``high``.
    :param tau: The grade from which a question counts as answered: given, or the method's default.
    :param depth: How many of each run's top passages counted.
    :param method_id: The grading method's id in the store.
    :param expected: Expected EXAM-Cover (``covered`` a float: see :func:`exampp.labels.expected_cover`).
    """

    per_query: pd.DataFrame
    leaderboard: pd.DataFrame
    tau: float
    depth: int
    method_id: str
    expected: bool = False


@dataclass(frozen=True)
class CoverJob(CheckedSettings):
    """EXAM-Cover@``depth`` of the runs on the workspace's grades (``exampp cover``). :meth:`run` does the job.

    :param workspace: The workspace.
    :param runs: Run files or folders, or runs already read (default: the workspace's ``runs/``).
    :param method: The store's grading method (None: the only one there).
    :param bank: The exam; else the workspace's bank, else the graded questions.
    :param tau: The grade at which a question counts as answered; by default the method's (4 for
        0-5 self-ratings, 1 for 0/1 grades).
    :param depth: How many of each run's top passages count.
    :param normalized: n-EXAM (see :func:`exampp.scoring.exam_cover`).
    :param expected: The expected number of questions answered, from the grades' probabilities
        (:func:`exampp.labels.expected_cover`; an error for grades stored without them). Not with
        ``normalized``.
    :param bootstrap: When > 0, the leaderboard gains ``low`` and ``high``, the ``confidence`` interval
        (:func:`exampp.analysis.statistics.bootstrap_interval`) of each mean over this many
        resamplings of the queries (the same draws for every run).
    :param seed: The seed of the bootstrap's draws.
    :param confidence: The bootstrap interval's confidence level.
    :param strict: A run query the exam lacks is an :class:`~exampp.errors.InputError`, not a warning.
    :raises SettingError: A setting that breaks its rule (:mod:`exampp.setting_rules`).
    """

    workspace: Workspace | PathLike = "."
    runs: RunsSource | None = None
    _: KW_ONLY
    method: str | None = None
    bank: PathLike | None = None
    tau: float | None = None
    depth: int = DEFAULT_DEPTH
    normalized: bool = False
    expected: bool = False
    bootstrap: int = 0
    seed: int = 0
    confidence: float = 0.95
    strict: bool = False

    def run(self, warn: Warn = python_warning) -> CoverResult:
        """Do the job.

        :param warn: Takes each warning line (default: a Python warning).
        """
        from exampp.formats.trec_run import check_judged
        from exampp.labels import expected_cover
        from exampp.scoring import exam_cover, summarize

        if self.expected and self.normalized:
            raise ExamppError("expected cover has no normalized (n-EXAM) variant: give one of them")
        ws = as_workspace(self.workspace)
        stored = stored_grades(ws, self.method, probabilities=self.expected)
        tau = stored.default_tau if self.tau is None else self.tau
        exam = exam_questions(ws, stored, self.bank)
        read = workspace_runs(ws, self.runs)
        for line in check_judged(read, exam, EXAM_SOURCE, self.strict):
            warn(line)
        if self.expected:
            per_query = expected_cover(read, stored.grades, exam, tau=tau, depth=self.depth)
        else:
            per_query = exam_cover(read, stored.grades, exam, tau=tau, depth=self.depth, normalized=self.normalized)
        board = summarize(per_query)
        if self.bootstrap:
            from exampp.analysis.statistics import bootstrap_means, scores_table

            interval = bootstrap_means(scores_table(per_query, "cover"), n=self.bootstrap, seed=self.seed,
                                       confidence=self.confidence)
            board.insert(2, "low", board["run"].map(interval["low"]))
            board.insert(3, "high", board["run"].map(interval["high"]))
        return CoverResult(per_query, board, tau, self.depth, stored.method_id, self.expected)


def export_qrels(
    workspace: Workspace | PathLike = ".",
    *,
    method: str | None = None,
    label: str = "max",
    tau: float | None = None,
    min_grade: float | None = None,
    facets: bool = False,
    bank: PathLike | None = None,
    output: PathLike | None = None,
    responses: PathLike | None = None,
    warn: Warn = python_warning,
) -> Qrels:
    """EXAM-Qrels of the workspace's grades (``exampp qrels``): each graded passage of the runs
    labelled from its grades on the query's exam questions.

    :param workspace: The workspace.
    :param method: The store's grading method (None: the only one there).
    :param label: One of :data:`exampp.labels.LABELS`: ``max`` its best grade, ``count`` the questions
        it answers at grade >= ``tau``, ``sum`` its grades' sum, ``expected`` its best expected grade
        in hundredths (grades with probabilities only).
    :param tau: The grade at which ``count`` counts a question answered (default: the method's τ).
    :param min_grade: Makes the labels 0/1: 1 when the label >= ``min_grade`` (for ``expected``, when
        the expected grade >= ``min_grade``, i.e. label >= 100 * ``min_grade``).
    :param facets: One qrels query ``<query_id>/<facet_id>`` per facet (``max`` labels).
    :param bank: The exam; else the workspace's bank, else all graded questions.
    :param output: Write the qrels there (``-``: standard output); nothing is written when None.
    :param responses: Label the passages of these answers instead of the runs'
        (:func:`~exampp.api.workspace.labelled_grades`).
    :param warn: Takes each warning line (default: a Python warning).
    """
    from exampp.formats.trec_qrels import write_qrels
    from exampp.labels import check_label, exam_labels
    from exampp.scoring import exam_qrels, facet_labels

    check_label(label)
    check_settings({"tau": tau, "min_grade": min_grade})
    if facets and label != "max":
        raise ExamppError(f"facet qrels take max labels only, not {label!r}")
    ws = as_workspace(workspace)
    stored = labelled_grades(ws, stored_grades(ws, method, probabilities=label == "expected"), responses, warn)
    if facets:
        labels = facet_labels(stored.grades, question_facets(ws, bank))
    else:
        labels = exam_labels(stored.grades, workspace_exam(ws, bank), label=label,
                             tau=stored.default_tau if tau is None and label == "count" else tau)
    scale = 100 if label == "expected" else 1  # expected labels are hundredths of a grade
    qrels = exam_qrels(labels, None if min_grade is None else min_grade * scale)
    if output is not None:
        if not qrels:
            raise NothingToWrite(output, _no_labels(ws, bank, "has a facet in" if facets else "is in"))
        write_qrels(qrels, output)
    return qrels


def _no_labels(ws: Workspace, bank: PathLike | None, relation: str) -> str:
    """Why qrels from the store's grades came out empty: no graded question ``relation`` the bank."""
    return f"none of the graded questions {relation} the question bank {given_or_existing(bank, ws.question_bank)}"


def export_question_qrels(
    workspace: Workspace | PathLike = ".",
    *,
    method: str | None = None,
    tau: float | None = None,
    bank: PathLike | None = None,
    output: PathLike | None = None,
    responses: PathLike | None = None,
    warn: Warn = python_warning,
) -> IntentQrels:
    """Per-question (intent-aware) qrels of the workspace's grades, for alpha-nDCG and ERR-IA
    (:class:`LeaderboardJob`): every exam question is a subtopic of its query, numbered 1, 2, ...
    in the exam's order; a passage is relevant (1) to a subtopic when its grade on that question is
    >= ``tau``, else 0.

    :param workspace: The workspace.
    :param method: The store's grading method (None: the only one there).
    :param tau: The grade at which a question counts as answered (default: the method's τ).
    :param bank: The exam and its order; else the workspace's bank, else the graded question ids sorted.
    :param output: Write the qrels there (``-``: standard output) in the TREC diversity format
        ``qid subtopic docid label``, with the key ``<output>.questions.tsv`` (``query_id, subtopic,
        question_id, text``) beside a file; nothing is written when None.
    :param responses: Label the passages of these answers instead of the runs', as :func:`export_qrels` does.
    :param warn: Takes each warning line (default: a Python warning).
    """
    from exampp.formats.trec_qrels import write_intent_key, write_intent_qrels
    from exampp.labels import exam_order, question_qrels

    check_settings({"tau": tau})
    ws = as_workspace(workspace)
    stored = labelled_grades(ws, stored_grades(ws, method), responses, warn)
    read_bank = workspace_bank(ws, bank)
    order = exam_order(stored.grades, read_bank.question_ids() if read_bank is not None else None)
    qrels = question_qrels(stored.grades, order, tau=stored.default_tau if tau is None else tau)
    if output is not None:
        if not qrels:
            raise NothingToWrite(output, _no_labels(ws, bank, "is in"))
        write_intent_qrels(qrels, output)
        if str(output) != "-":
            texts = {q.question_id: q.text for q in read_bank.questions} if read_bank is not None else {}
            write_intent_key(order, question_key_path(output), texts)
    return qrels


def question_key_path(output: PathLike) -> str:
    """Where the key of per-question qrels goes: ``<output>.questions.tsv``.

    :param output: The per-question qrels file.
    """
    return f"{output}.questions.tsv"


def read_judgments(source: PathLike, measures: Sequence[str]) -> Qrels | IntentQrels:
    """Qrels for some measures: intent qrels (``qid subtopic docid label``) when one of them is
    intent-aware (alpha_nDCG@k, ERR_IA@k...; the others then take a document's best label over
    the subtopics), else plain qrels.

    :param source: A qrels file, or ``irds:<dataset-id>`` (plain qrels only).
    :param measures: The measure names.
    """
    from exampp.formats.trec_qrels import read_intent_qrels, read_qrels

    return read_intent_qrels(source) if uses_intent_qrels(measures) else read_qrels(source)


def uses_intent_qrels(measures: Sequence[str]) -> bool:
    """Whether :func:`read_judgments` reads qrels for some measures as intent qrels (one of them is
    intent-aware).

    :param measures: The measure names.
    """

    from exampp.scoring import parse_measures
    from exampp.trec_eval.irm import is_intent_aware

    return any(is_intent_aware(measure) for _, measure in parse_measures(measures))


@dataclass(frozen=True)
class LeaderboardJob(CheckedSettings):
    """Runs under ir_measures or trec_eval measures (``exampp leaderboard``): columns ``run`` and one per measure,
    the mean over the qrels' queries, best first. Run files are read one query at a time. :meth:`run` does the
    job.

    :param runs: Run files or folders, or runs already read.
    :param qrels: A qrels file, ``irds:<dataset-id>``, or qrels already read. With an intent-aware
        measure (``alpha_nDCG@10``, ``ERR_IA@20``...) a qrels file is read as intent qrels
        (:func:`read_judgments`).
    :param measures: Measure names (``nDCG@10``, ``ndcg_cut.10``...).
    :param depth: Keep each run's top-``depth`` only (all by default).
    :param exclude: Names of runs to leave out.
    :param per_query: Return columns ``run, query_id, measure, value`` instead of the means.
    :param bootstrap: When > 0, each measure column is followed by ``<measure>_low`` and
        ``<measure>_high``, the ``confidence`` interval of the mean over this many resamplings of the
        queries (the same draws for every run and measure: :func:`exampp.analysis.statistics.bootstrap_means`).
    :param seed: The seed of the bootstrap's draws.
    :param confidence: The bootstrap interval's confidence level.
    :param strict: A run query the qrels lack is an :class:`~exampp.errors.InputError`, not a warning.
    :raises SettingError: A setting that breaks its rule (:mod:`exampp.setting_rules`).
    """

    runs: RunsSource
    qrels: PathLike | Qrels | IntentQrels
    measures: Sequence[str] = LEADERBOARD_MEASURES
    _: KW_ONLY
    depth: int | None = None
    exclude: Collection[str] = ()
    per_query: bool = False
    bootstrap: int = 0
    seed: int = 0
    confidence: float = 0.95
    strict: bool = False

    def run(self, warn: Warn = python_warning) -> pd.DataFrame:
        """Do the job.

        :param warn: Takes each warning line (default: a Python warning).
        :raises NoRunLeft: ``exclude`` names every run.
        """
        from exampp.formats.trec_run import check_judged
        from exampp.scoring import leaderboard, per_query_measures

        if self.bootstrap and self.per_query:
            raise ExamppError("bootstrap intervals are for the leaderboard's means, not for per-query values")
        judged = self.qrels if isinstance(self.qrels, Mapping) else read_judgments(self.qrels, self.measures)
        ranked = _ranked(self.runs)
        if self.per_query:
            table = per_query_measures(ranked, judged, self.measures, self.depth, exclude=self.exclude)
        elif self.bootstrap:
            per_query = per_query_measures(ranked, judged, self.measures, self.depth, exclude=self.exclude)
            table = _bootstrap_leaderboard(per_query, self.measures, self.bootstrap, self.seed, self.confidence)
        else:
            table = leaderboard(ranked, judged, self.measures, self.depth, exclude=self.exclude).reset_index()
        kept = [run for run in ranked if run.name not in self.exclude]  # a run file's name is known once read
        if not kept:
            raise NoRunLeft([str(run.name) for run in ranked])
        judged_by = "the qrels" if isinstance(self.qrels, Mapping) else self.qrels
        for line in check_judged(kept, judged, judged_by, self.strict):
            warn(line)
        return table


def _bootstrap_leaderboard(per_query: pd.DataFrame, measures: Sequence[str], n: int, seed: int,
                           confidence: float) -> pd.DataFrame:
    """The leaderboard of per-query values (:func:`exampp.scoring.mean_table`) with each measure's
    bootstrap interval beside it, best first by the first measure."""
    from exampp.analysis.statistics import bootstrap_means, scores_table
    from exampp.scoring import mean_table, parse_measures

    columns = [column for column, _ in parse_measures(measures)]
    means = mean_table(per_query, columns)
    table = pd.DataFrame(index=means.index)
    for column in columns:
        table[column] = means[column]
        values = per_query[per_query["measure"] == column]
        if values.empty:
            table[f"{column}_low"] = table[f"{column}_high"] = float("nan")
            continue
        interval = bootstrap_means(scores_table(values), n=n, seed=seed, confidence=confidence)
        table[f"{column}_low"], table[f"{column}_high"] = interval["low"], interval["high"]
    return table.reset_index()


def _ranked(runs: RunsSource) -> list[Run | RunFile]:
    """Runs already read as they are; run files to be read one query at a time."""
    if isinstance(runs, Mapping):
        return list(runs.values())
    return [RunFile(path) for path in run_paths(runs)]
