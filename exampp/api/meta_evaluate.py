"""The meta-evaluate job: every evaluation a workspace supports (label variant x tau x measure,
EXAM-Cover, n-EXAM, intent-aware measures, IRT ability) correlated with an official leaderboard,
each correlation with its bootstrap interval over queries (:mod:`exampp.analysis.meta_evaluation`
computes them; :class:`MetaEvaluateJob` reads the workspace)::

    meta = MetaEvaluateJob("out/dl19", bootstrap=1000).run()
    meta.table            # one row per evaluation, best first by Kendall's τ

Errors are :class:`~exampp.errors.ExamppError` (the command line prints them as one line).
"""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from exampp.analysis.meta_evaluation import (  # MetaEvaluation, MetaEvaluationError: callers import them from here
    FAMILIES,
    OFFICIAL_MEASURE,
    MetaEvaluation,
    MetaEvaluationError,
    evaluation_tables,
    grade_levels,
    meta_evaluation,
)
from exampp.api import Warn, python_warning
from exampp.api.leaderboards import LeaderboardSource, QrelsMeasure
from exampp.api.workspace import (
    RunsSource,
    as_workspace,
    exam_questions,
    labelled_grades,
    stored_grades,
    workspace_runs,
)
from exampp.collection.runs import Run
from exampp.defaults import DECIMALS, DEPTH, LABELS
from exampp.files.io import PathLike
from exampp.setting_rules import CheckedSettings
from exampp.stores.layout import Workspace


@dataclass(frozen=True)
class MetaEvaluateJob(CheckedSettings):
    """``exampp meta-evaluate``: correlate every evaluation of the workspace's grades with the official
    leaderboard (:func:`~exampp.analysis.meta_evaluation.meta_evaluation`). The labels are the runs'
    (or the answers'): :func:`~exampp.api.workspace.labelled_grades`. :meth:`run` does the job.

    The evaluations: P@k and AP on EXAM-Qrels read at every ``tau``, nDCG@k with each label variant
    of ``labels`` as gains (count at every tau; expected only where the store holds grade
    probabilities), α-nDCG@k and ERR-IA@k on per-question qrels, EXAM-Cover@k, n-EXAM@k and the
    expected cover at every tau, and the 2PL IRT ability at every tau (k = ``depth``).

    :param workspace: The workspace.
    :param official: The official leaderboard (default: nDCG@10 on the workspace's
        ``qrels/official.qrels``).
    :param runs: The runs (default: the workspace's ``runs/``).
    :param responses: Evaluate the answers of this responses file instead of runs (segmented as
        ``exampp grade --responses`` graded them).
    :param method: The store's grading method (None: the only one there).
    :param bank: The exam; else the workspace's bank, else the graded questions.
    :param labels: The EXAM label variants (:data:`exampp.labels.LABELS`) used as nDCG gains.
    :param taus: The thresholds (default: every grade level of the stored method's scale).
    :param depth: k: how many of each run's top passages count.
    :param families: Which families of evaluations to make (qrels, intent, cover, n-exam, irt).
    :param bootstrap: The number of bootstrap resamples of the queries.
    :param irt_bootstrap: IRT rows refit the model on the first this many of those resamples only
        (a fit takes a fraction of a second; 0: no interval).
    :param seed: The seed of the resamples.
    :param top: How many official top runs ``kendall_top`` takes.
    :param top_ties: The official runs tied at that cut: ``include`` all, or ``truncate`` to exactly
        ``top`` by the official leaderboard's order (autojudge-evaluate's ``kendall@k``).
    :param confidence: The intervals' confidence level.
    :param exclude: Runs to leave out.
    :param decimals: Round scores to this many decimals before ranking, as ``exampp correlate`` does
        (None: exact).
    :param strict: A run query the official qrels lack is an error, not a warning.
    :param progress: Show a bar on stderr, on a terminal only.
    :raises MetaEvaluationError: An unknown family or label variant.
    :raises SettingError: A setting that breaks its rule (:mod:`exampp.setting_rules`).
    """

    workspace: Workspace | PathLike = "."
    official: LeaderboardSource | None = None
    runs: RunsSource | None = None
    responses: PathLike | None = None
    method: str | None = None
    bank: PathLike | None = None
    labels: Sequence[str] = LABELS
    taus: Sequence[float] | None = None
    depth: int = DEPTH
    families: Collection[str] = FAMILIES
    bootstrap: int = 1000
    irt_bootstrap: int = 50
    seed: int = 0
    top: int = 10
    top_ties: str = "include"
    confidence: float = 0.95
    exclude: Collection[str] = ()
    decimals: int | None = DECIMALS
    strict: bool = False
    progress: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        unknown = sorted(set(self.families) - set(FAMILIES))
        if unknown:
            raise MetaEvaluationError(f"unknown evaluation families {', '.join(unknown)} "
                                      f"(have: {', '.join(FAMILIES)})")
        bad = sorted(set(self.labels) - set(LABELS))
        if bad:
            raise MetaEvaluationError(f"unknown label variants {', '.join(bad)} (have: {', '.join(LABELS)})")

    def run(self, warn: Warn = python_warning) -> MetaEvaluation:
        """Do the job: read the runs, the grades and the official leaderboard, and correlate.

        :param warn: Takes each warning line (default: a Python warning).
        :raises MetaEvaluationError: No official leaderboard, or too few runs.
        """
        ws = as_workspace(self.workspace)
        runs = self.runs
        if self.responses is not None:
            if runs is not None:
                raise MetaEvaluationError("meta-evaluate runs or responses, not both")
            from exampp.segment import load_responses

            runs = load_responses(self.responses).runs
        # the runs' labels, or the answers' (one workspace, one answer)
        stored = labelled_grades(ws, stored_grades(ws, self.method, probabilities=True), self.responses, warn)
        exam = exam_questions(ws, stored, self.bank)
        read = _kept_runs(workspace_runs(ws, runs), self.exclude)
        official = self.official or QrelsMeasure(str(ws.official_qrels), OFFICIAL_MEASURE)
        board, per_query = _official(official, read, self.strict, warn)
        levels = list(self.taus) if self.taus is not None else grade_levels(stored.grades["grade"])
        has_probabilities = bool(stored.grades["probabilities"].notna().any()) if len(stored.grades) else False
        if "expected" in self.labels and not has_probabilities:
            warn(f"{stored.method_id}: the store holds no grade probabilities for these grades: "
                 "no expected labels or expected cover")
        evaluations = evaluation_tables(read, stored.grades, exam, self.labels, levels, self.depth, self.families,
                                        has_probabilities, warn)
        return meta_evaluation(read, stored.grades, exam, board.rename(official.label), per_query, evaluations,
                               taus=levels, depth=self.depth, irt="irt" in self.families, bootstrap=self.bootstrap,
                               irt_bootstrap=self.irt_bootstrap, seed=self.seed, top=self.top,
                               confidence=self.confidence, decimals=self.decimals, progress=self.progress,
                               top_ties=self.top_ties, warn=warn)


# --- the leaderboards ------------------------------------------------------------------------------

def _kept_runs(runs: Mapping[str, Run], exclude: Collection[str]) -> dict[str, Run]:
    unknown = sorted(set(exclude) - set(runs))
    if unknown:
        raise MetaEvaluationError(f"--exclude names no run read: {', '.join(unknown)}")
    kept = {name: run for name, run in runs.items() if name not in set(exclude)}
    if len(kept) < 3:
        raise MetaEvaluationError(f"{len(kept)} run(s) left: a meta-evaluation ranks at least 3")
    return kept


def _official(source: LeaderboardSource, runs: Mapping[str, Run], strict: bool,
              warn: Warn) -> tuple[pd.Series, pd.DataFrame | None]:
    """The official leaderboard over ``runs`` and, where it has them (qrels, a per-query table), its
    per-query scores (run x query)."""
    from exampp.api.leaderboards import source_scores

    if isinstance(source, QrelsMeasure) and not str(source.qrels).startswith("irds:") \
            and not Path(source.qrels).exists():
        raise MetaEvaluationError(f"{source.qrels}: no official qrels (give the official leaderboard: "
                                  "--official-qrels QRELS, or --official FILE)")
    board, scores = source_scores(source, runs=runs, strict=strict, warn=warn)
    missing = sorted(set(runs) - set(board))
    if missing:
        raise MetaEvaluationError(f"{source.label}: no official score for run(s) {', '.join(missing)}")
    if scores is not None:  # its queries are resampled like the others
        scores = scores.loc[sorted(runs)]
        return scores.mean(axis=1), scores
    return pd.Series({name: float(board[name]) for name in board if name in runs}), None  # the file's order
