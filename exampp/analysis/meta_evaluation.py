"""Meta-evaluation: every evaluation of one method's grades (label variant x tau x measure, EXAM-Cover,
n-EXAM, intent-aware measures, IRT ability) correlated with an official leaderboard, each correlation with
its bootstrap interval over queries. :mod:`exampp.api.meta_evaluate` reads a workspace's and calls
:func:`meta_evaluation`.

One draw of queries serves every evaluation and the official leaderboard alike (a paired
bootstrap), so the intervals of two rows can be compared.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from exampp.collection.runs import Run
from exampp.errors import ExamppError
from exampp.progress import ticking

OFFICIAL_MEASURE = "nDCG@10"  # the official leaderboard of TREC DL, and of the EXAM++ paper's tables
FAMILIES = ("qrels", "intent", "cover", "n-exam", "irt")
# Measures on EXAM-Qrels: binary ones are read at each tau (rel=tau on the max label), graded
# ones take the label as gain. {k} is the depth.
BINARY_MEASURES = ("P@{k}", "AP")
GRADED_MEASURES = ("nDCG@{k}",)
INTENT_MEASURES = ("alpha_nDCG@{k}", "ERR_IA@{k}")
MAX_TAUS = 10  # a grade scale with more levels than this is read at its integer levels only


class MetaEvaluationError(ExamppError, ValueError):
    """A meta-evaluation that cannot be made as asked (no official leaderboard, too few runs)."""


@dataclass(frozen=True)
class Evaluation:
    """One way to score runs with a workspace's grades."""

    family: str  # one of FAMILIES
    measure: str  # as computed: an ir_measures name, "EXAM-Cover@20", "IRT theta"
    label: str | None = None  # the EXAM label variant of a qrels evaluation
    tau: float | None = None

    @property
    def name(self) -> str:
        """How tables and figures show it: ``P@20, max label >= 4``, ``nDCG@20, count label, tau 4``,
        ``EXAM-Cover@20, tau 4``."""
        tau = "" if self.tau is None else _number(self.tau)
        if self.family != "qrels":
            return f"{self.measure}, tau {tau}" if tau else self.measure
        if self.label == "max" and tau:  # a binary measure read at rel=tau
            return f"{self.measure.replace(f'(rel={tau})', '')}, max label >= {tau}"
        return f"{self.measure}, {self.label} label" + (f", tau {tau}" if tau else "")


@dataclass(frozen=True)
class MetaEvaluation:
    """Every evaluation of one workspace against the official leaderboard.

    :param table: One row per evaluation, best first by Kendall's τ: columns ``evaluation`` (display
        name), ``family`` (qrels, intent, cover, n-exam, irt), ``label``, ``tau``, ``measure``,
        ``n_systems``, and for each statistic s of :data:`exampp.analysis.statistics.CORRELATIONS`:
        ``s``, ``s_low``, ``s_high``; ``best`` names the statistics for which the row is best (empty
        elsewhere); ``issue`` and ``top_issue``: autojudge-evaluate's diagnostics of the runs and of
        the official top runs (:func:`exampp.analysis.correlation.correlation_issue`; empty for none).
    :param scores: Index run, one column per evaluation: its mean scores.
    :param low: Same shape as ``scores``: the low end of each mean's bootstrap interval (NaN where none).
    :param high: Likewise, the high end.
    :param per_query: Evaluation -> run x query table of its per-query scores (absent where there is
        none: IRT).
    :param official: Index run: the official scores; its name is the official leaderboard's label.
    :param official_per_query: The official run x query scores, where the leaderboard has them.
    :param bootstrap: The number of bootstrap resamples of the queries.
    :param seed: The seed of the resamples.
    :param top: How many official top runs ``kendall_top`` takes.
    :param confidence: The intervals' confidence level.
    :param top_ties: The official runs tied at the top cut: ``include`` all, or ``truncate`` to ``top``.
    """

    table: pd.DataFrame
    scores: pd.DataFrame
    low: pd.DataFrame
    high: pd.DataFrame
    per_query: dict[str, pd.DataFrame]
    official: pd.Series
    official_per_query: pd.DataFrame | None
    bootstrap: int
    seed: int
    top: int
    confidence: float
    top_ties: str = "include"


def grade_levels(grades: pd.Series) -> list[float]:
    """The τ a grade scale is read at: every grade level above 0 seen (integer levels only when
    the grades take more than :data:`MAX_TAUS` values).

    :param grades: The grades of one method.
    """

    levels = sorted({float(g) for g in grades if g > 0})
    if len(levels) > MAX_TAUS:
        levels = sorted({float(math.ceil(g)) for g in levels})[:MAX_TAUS]
    return levels


def evaluation_tables(runs: Mapping[str, Run], grades: pd.DataFrame, exam: Mapping[str, Sequence[str]],
                      labels: Sequence[str], taus: Sequence[float], depth: int, families: Collection[str],
                      has_probabilities: bool, warn: Callable[[str], None]) -> dict[Evaluation, pd.DataFrame]:
    """Every evaluation's run x query table: P@k and AP on EXAM-Qrels read at every ``tau``, nDCG@k with
    each label variant of ``labels`` as gains (count at every tau; expected only with grade
    probabilities), α-nDCG@k and ERR-IA@k on per-question qrels, EXAM-Cover@k, n-EXAM@k and the
    expected cover at every tau (k = ``depth``).

    :param runs: The runs, by name.
    :param grades: The stored grades (with ``probabilities`` for the expected labels and cover).
    :param exam: Each query's question ids.
    :param labels: The EXAM label variants (:data:`exampp.labels.LABELS`) used as nDCG gains.
    :param taus: The thresholds.
    :param depth: k: how many of each run's top passages count.
    :param families: Which families of evaluations to make (:data:`FAMILIES`; IRT makes no table here).
    :param has_probabilities: Whether the grades carry probabilities.
    :param warn: Takes each warning line.
    """
    from exampp.labels import exam_labels, expected_cover, question_qrels
    from exampp.scoring import exam_cover, per_query_measures

    def measured(qrels, measures: Sequence[str], make: Callable[[str], Evaluation]) -> None:
        values = per_query_measures(runs, qrels, list(measures))
        for measure, table in values.groupby("measure", sort=False):  # make() is called here, at once
            tables[make(cast(str, measure))] = table.pivot(index="run", columns="query_id", values="value")

    def covered(per_query: pd.DataFrame) -> pd.DataFrame:
        return per_query.pivot(index="run", columns="query_id", values="cover")

    k = {"k": depth}
    tables: dict[Evaluation, pd.DataFrame] = {}
    if "qrels" in families:
        for label in labels:
            if label == "expected" and not has_probabilities:
                continue
            graded = [m.format(**k) for m in GRADED_MEASURES]
            if label == "count":
                for tau in taus:
                    qrels = exam_labels(grades, exam, label=label, tau=tau)
                    measured(qrels, graded, lambda m: Evaluation("qrels", m, "count", tau))
                continue
            qrels = exam_labels(grades, exam, label=label)
            binary = ({_at_rel(m.format(**k), tau): tau for m in BINARY_MEASURES for tau in taus} if label == "max"
                      else {})
            measured(qrels, graded + list(binary), lambda m: Evaluation("qrels", m, label, binary.get(m)))
    if "intent" in families:
        from exampp.trec_eval.irm import NDEVAL_DEPTH

        if depth > NDEVAL_DEPTH:
            warn(f"intent-aware measures at a cutoff of {NDEVAL_DEPTH}, not {depth}: ndeval computes them at "
                 f"{NDEVAL_DEPTH} at most")
        cut = {"k": min(depth, NDEVAL_DEPTH)}
        for tau in taus:
            measured(question_qrels(grades, exam, tau=tau), [m.format(**cut) for m in INTENT_MEASURES],
                     lambda m: Evaluation("intent", m, tau=tau))
    for tau in taus:
        if "cover" in families:
            tables[Evaluation("cover", f"EXAM-Cover@{depth}", tau=tau)] = covered(
                exam_cover(runs, grades, exam, tau=tau, depth=depth))
            if has_probabilities:
                tables[Evaluation("cover", f"expected EXAM-Cover@{depth}", tau=tau)] = covered(
                    expected_cover(runs, grades, exam, tau=tau, depth=depth))
        if "n-exam" in families:
            tables[Evaluation("n-exam", f"n-EXAM@{depth}", tau=tau)] = covered(
                exam_cover(runs, grades, exam, tau=tau, depth=depth, normalized=True))
    return tables


def meta_evaluation(runs: Mapping[str, Run], grades: pd.DataFrame, exam: Mapping[str, Sequence[str]],
                    official: pd.Series, official_per_query: pd.DataFrame | None,
                    evaluations: Mapping[Evaluation, pd.DataFrame], *, taus: Sequence[float], depth: int,
                    irt: bool = True, bootstrap: int = 1000, irt_bootstrap: int = 50, seed: int = 0, top: int = 10,
                    confidence: float = 0.95, decimals: int | None = None, progress: bool = False,
                    top_ties: str = "include", warn: Callable[[str], None]) -> MetaEvaluation:
    """Correlate every evaluation with the official leaderboard, on the queries all of them hold.

    Each correlation (Spearman, Kendall τ-b, τ_AP, Kendall τ-b on the official top-``top``) gets an
    interval (:func:`~exampp.analysis.statistics.bootstrap_interval`) from ``bootstrap`` resamples of
    the queries, the official per-query scores resampled with them.

    :param runs: The runs, by name (for the IRT rows).
    :param grades: The grades (for the IRT rows).
    :param exam: Each query's question ids.
    :param official: The official leaderboard, by run; its name is the leaderboard's label.
    :param official_per_query: The official run x query scores, where the leaderboard has them.
    :param evaluations: Every evaluation's run x query table (:func:`evaluation_tables`).
    :param taus: The thresholds the IRT rows are taken at.
    :param depth: k: how many of each run's top passages count.
    :param irt: Add the 2PL IRT ability at every tau.
    :param bootstrap: The number of bootstrap resamples of the queries.
    :param irt_bootstrap: IRT rows refit the model on the first this many of those resamples only
        (0: no interval).
    :param seed: The seed of the resamples.
    :param top: How many official top runs ``kendall_top`` takes.
    :param confidence: The intervals' confidence level.
    :param decimals: Round scores to this many decimals before ranking (None: exact).
    :param progress: Show a bar on stderr, on a terminal only.
    :param top_ties: The official runs tied at the top cut: ``include`` all, or ``truncate`` to exactly
        ``top``, ties by the official leaderboard's order (autojudge-evaluate's ``kendall@k``).
    :param warn: Takes each warning line.
    :raises MetaEvaluationError: No query in common, or no evaluation.
    """
    from exampp.analysis.statistics import bootstrap_means, bootstrap_samples, correlation_intervals

    # Every score, interval and correlation is taken on the queries all of them hold.
    queries = _common_queries(official_per_query, evaluations, exam if irt else None, warn)
    if official_per_query is not None:
        official_per_query = official_per_query.loc[:, queries]
        name, official = official.name, official_per_query.mean(axis=1)
        official.name = name
    draws = bootstrap_samples(len(queries), bootstrap, seed) if bootstrap else None

    reference = official if official_per_query is None else official_per_query  # a leaderboard is held fixed
    rows, boards, lows, highs, per_query = [], {}, {}, {}, {}
    refits = min(irt_bootstrap, len(draws)) if draws is not None else 0
    steps = len(evaluations) + (len(taus) * (1 + refits) if irt else 0)
    with ticking(steps, progress, unit="step", desc="meta-evaluating") as tick:
        for evaluation, table in evaluations.items():
            name = evaluation.name
            table = per_query[name] = table.loc[official.index, queries]
            boards[name] = table.mean(axis=1)
            stats = correlation_intervals(reference, table, n=bootstrap, seed=seed, confidence=confidence, top=top,
                                          decimals=decimals, ties=top_ties, order=list(official.index))
            rows.append(_row(evaluation, len(table), stats, _issues(official, boards[name], top, top_ties, decimals)))
            if bootstrap:
                means = bootstrap_means(table, n=bootstrap, seed=seed, confidence=confidence)
                lows[name], highs[name] = means["low"], means["high"]
            tick()
        if irt:
            common = {query: exam[query] for query in queries}
            for tau in taus:
                evaluation = Evaluation("irt", "IRT theta (2PL)", tau=tau)
                theta, stats, interval = _irt(runs, grades, common, tau, depth, reference, queries,
                                              draws[:irt_bootstrap] if draws is not None else None,
                                              top, confidence, decimals, tick, top_ties)
                boards[evaluation.name] = theta
                lows[evaluation.name], highs[evaluation.name] = interval
                rows.append(_row(evaluation, len(theta), stats, _issues(official, theta, top, top_ties, decimals)))
    table = _ranked_table(rows)
    order = list(table["evaluation"])
    scores = pd.DataFrame(boards).reindex(index=official.index, columns=order)
    low = pd.DataFrame(lows).reindex(index=scores.index, columns=order)
    high = pd.DataFrame(highs).reindex(index=scores.index, columns=order)
    return MetaEvaluation(table, scores, low, high, per_query, official, official_per_query, bootstrap, seed, top,
                          confidence, top_ties)


def _common_queries(official: pd.DataFrame | None, tables: Mapping[Evaluation, pd.DataFrame],
                    exam: Mapping[str, Sequence[str]] | None, warn: Callable[[str], None]) -> list[str]:
    """The queries every per-query table (and the exam, for IRT) holds: what every score is taken
    on and the bootstrap draws from."""
    sets = [set(t.columns) for t in tables.values()] + ([set(official.columns)] if official is not None else [])
    sets += [set(exam)] if exam is not None else []
    if not sets:
        return []
    common = set.intersection(*sets)
    every = set.union(*sets)
    if every - common:
        warn(f"{len(every - common)} queries are not scored by every evaluation (e.g. "
             f"{', '.join(sorted(every - common)[:5])}): every score and correlation is taken on the "
             f"{len(common)} in common")
    if not common:
        raise MetaEvaluationError("the official leaderboard and the exam have no query in common")
    return sorted(common)


def _irt(runs: Mapping[str, Run], grades: pd.DataFrame, exam: Mapping[str, Sequence[str]], tau: float,
         depth: int, official: pd.DataFrame | pd.Series, queries: list[str], draws: np.ndarray | None,
         top: int, confidence: float, decimals: int | None, tick: Callable[[], object] = lambda: None,
         top_ties: str = "include") -> tuple[pd.Series, pd.DataFrame, tuple[pd.Series, pd.Series]]:
    """The 2PL ability of each run at ``tau``, its correlations with the ``official`` leaderboard (its
    per-query table, or the leaderboard held fixed), and the abilities' bootstrap interval: the model
    refitted on every draw of queries; ``tick`` called after each fit."""
    from exampp.analysis.irt.models import IRTModel
    from exampp.analysis.irt.responses import responses_from_grades
    from exampp.analysis.statistics import CORRELATIONS, bootstrap_interval, correlation_values

    board = official if isinstance(official, pd.Series) else official.mean(axis=1)
    responses = responses_from_grades(grades, runs, exam, tau=tau, depth=depth)
    matrix = responses.matrix.loc[board.index]
    values = matrix.to_numpy(dtype=float)
    theta = pd.Series(IRTModel().fit(values).theta_, index=matrix.index)
    tick()
    point = correlation_values(board, theta, top=top, decimals=decimals, ties=top_ties)
    if draws is None or not len(draws):
        nan = pd.Series(math.nan, index=theta.index)
        stats = pd.DataFrame({"value": point, "low": math.nan, "high": math.nan}, index=list(CORRELATIONS))
        return theta, stats, (nan, nan)
    columns = {q: [j for j, item in enumerate(matrix.columns) if responses.question_query.get(item) == q]
               for q in queries}
    replicates, thetas = [], []
    refit = IRTModel(standard_errors=False)  # only θ is wanted of a refit: half the time of a fit
    for draw in draws:
        fitted = refit.fit(values[:, [j for i in draw for j in columns[queries[i]]]]).theta_
        tick()
        thetas.append(fitted)
        reference = board if isinstance(official, pd.Series) else official.iloc[:, draw].mean(axis=1)
        replicates.append(correlation_values(reference, pd.Series(fitted, index=matrix.index), top=top,
                                             decimals=decimals, ties=top_ties))
    spread = np.array([[replicate[name] for replicate in replicates] for name in CORRELATIONS])
    estimates = np.array([point[name] for name in CORRELATIONS])
    low, high = bootstrap_interval(estimates, spread, confidence, len(queries), (-1, 1))
    stats = pd.DataFrame({"value": point, "low": low, "high": high}, index=list(CORRELATIONS))
    low, high = bootstrap_interval(theta.to_numpy(), np.array(thetas).T, confidence, len(queries))
    return theta, stats, (pd.Series(low, index=theta.index), pd.Series(high, index=theta.index))


def _issues(official: pd.Series, board: pd.Series, top: int, ties: str, decimals: int | None) -> tuple[str, str]:
    """autojudge-evaluate's diagnostics of the runs and of the official top runs ('' for none), on
    the scores as they are ranked."""
    from exampp.analysis.correlation import correlation_issue, round_scores, top_systems

    reference = cast("dict[str, float]", official.to_dict())  # runs' names
    other = cast("dict[str, float]", board.to_dict())
    if decimals is not None:
        reference, other = round_scores(reference, decimals), round_scores(other, decimals)
    runs = [run for run in reference if run in other]
    tops = top_systems({run: reference[run] for run in runs}, top, ties)
    return (correlation_issue([reference[r] for r in runs], [other[r] for r in runs]) or "",
            correlation_issue([reference[r] for r in tops], [other[r] for r in tops]) or "")


def _row(evaluation: Evaluation, n_systems: int, stats: pd.DataFrame, issues: tuple[str, str]) -> dict[str, object]:
    row: dict[str, object] = {"evaluation": evaluation.name, "family": evaluation.family,
                              "label": evaluation.label or "", "tau": evaluation.tau,
                              "measure": evaluation.measure, "n_systems": n_systems}
    for label, values in stats.iterrows():
        statistic = cast(str, label)  # the statistics' names
        row[statistic] = values["value"]
        row[f"{statistic}_low"], row[f"{statistic}_high"] = values["low"], values["high"]
    row["issue"], row["top_issue"] = issues
    return row


def _ranked_table(rows: list[dict[str, object]]) -> pd.DataFrame:
    """Best first by Kendall's τ (then Spearman, then name); ``best`` names the statistics each row
    is best at."""
    from exampp.analysis.statistics import CORRELATIONS

    table = pd.DataFrame(rows)
    if table.empty:
        raise MetaEvaluationError("no evaluation to make: every family or label was left out")
    table = table.sort_values(["kendall", "spearman", "evaluation"], ascending=[False, False, True],
                              kind="stable", na_position="last").reset_index(drop=True)
    best: list[list[str]] = [[] for _ in range(len(table))]
    for statistic in CORRELATIONS:
        values = table[statistic].round(10)
        if values.notna().any():
            for i in np.flatnonzero(values == values.max()):
                best[i].append(statistic)
    table["best"] = [", ".join(names) for names in best]
    return table


def _at_rel(measure: str, tau: float) -> str:
    """The ir_measures name of a binary measure read at relevance level ``tau``: ``P(rel=4)@20``."""
    rel = f"(rel={_number(tau)})"
    return measure.replace("@", rel + "@", 1) if "@" in measure else measure + rel


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
