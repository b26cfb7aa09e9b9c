"""Coverage of exampp's bootstrap intervals by simulation: how often the interval a command prints
holds the truth, against the nominal 95%, for the percentile interval exampp printed before
(``old``) and the interval it prints now (``new``: :func:`exampp.analysis.statistics.bootstrap_interval`).

Each scenario is a population of 4,000 topics with known truth; every simulated sample draws a
command's number of topics from it, with replacement, and bootstraps them as the command does
(the same draws for every leaderboard, ``--draws`` resamplings). The truth is the statistic on the
whole population:

- ``mean`` (``leaderboard``, ``cover``, ``nuggets score``, the report's leaderboards): each run's
  mean score. Per-topic scores are P@20-like (binomial over 20 documents of a logistic
  system + topic + interaction effect) or skewed n-EXAM-like (a share of 10 questions answered,
  most topics answering few); coverage is over every run of every sample.
- ``spearman``, ``kendall``, ``tau_ap``, ``kendall_top`` (``correlate``, ``meta-evaluate``,
  ``nuggets agree``'s run level, the report): two leaderboards of the same systems, an official
  and a judge's, whose per-topic scores share the topic's difficulty and part of the
  system-topic interaction (correlation 0.5), the judge seeing each system's quality with an
  error (``disagreement``). The truth is the correlation of the population's means.
  ``RAG-like``: 45 systems on 11 topics; ``DL19-like``: 36 systems on 43 topics; ``high`` and
  ``moderate`` agreement.
- ``kappa``, ``kappa_binary``, ``alpha_ordinal`` (``nuggets agree``'s nugget level): per topic a
  3×3 table of two assignments of about 600 nuggets (support, partial, not), the topic's grade
  mix and agreement varying from topic to topic; the truth is the statistic of the population's
  summed table.

``exampp agree``, ``support agree`` and ``significance`` print no interval: nothing to cover there.
IRT rows (meta-evaluate) use the same construction over their refits; a refit per replicate makes
them too slow to simulate here.

``--alternatives`` adds the constructions weighed against the new one: the basic interval (the
percentile interval mirrored about the estimate), Efron's bias-corrected (BC) percentile interval,
and the new interval without its small-sample expansion.

Usage (from the repository root):
    python benchmarks/interval_coverage.py [--sims 1000] [--draws 1000] [--seed 0] [--alternatives]
(about 22 minutes on 2 busy CPU cores at the defaults)
"""
from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from exampp.analysis.nugget_agreement import NUGGET_STATISTICS, nugget_statistics

# The replicates exactly as the commands compute them (tests/test_interval_coverage.py checks the
# intervals below against correlation_intervals, bootstrap_means and nuggets agree's).
from exampp.analysis.statistics import (
    CORRELATIONS,
    _correlation_rows,
    _draw_counts,
    _replicate_means,
    bootstrap_interval,
    bootstrap_samples,
)

CONFIDENCE = 0.95
POPULATION = 4000  # topics
TOP = 10  # kendall_top's cut, meta-evaluate's default
NUGGET_BOUNDS = (np.array([-1, -1, -math.inf]), 1)  # as nuggets agree clips them


@dataclass(frozen=True)
class Leaderboards:
    """Two evaluations of the same systems: which systems, how many topics a sample has, how far the
    judge's view of each system's quality strays (sd, in the official's logit units)."""

    name: str
    systems: int
    topics: int
    disagreement: float


@dataclass(frozen=True)
class Scores:
    """One evaluation's per-topic scores."""

    name: str
    kind: str  # "p20" or "n-exam"
    topics: int


@dataclass(frozen=True)
class Nuggets:
    """Two nugget assignments of the same answers, over a sample of ``topics``."""

    name: str
    topics: int


LEADERBOARDS = (Leaderboards("RAG-like, high agreement", 45, 11, 0.15),
                Leaderboards("RAG-like, moderate agreement", 45, 11, 0.35),
                Leaderboards("DL19-like, high agreement", 36, 43, 0.15),
                Leaderboards("DL19-like, moderate agreement", 36, 43, 0.35))
SCORES = (Scores("P@20-like", "p20", 11), Scores("P@20-like", "p20", 43),
          Scores("n-EXAM-like", "n-exam", 11), Scores("n-EXAM-like", "n-exam", 43))
NUGGETS = (Nuggets("RAG-like", 11), Nuggets("held-out topics", 6))


def _logistic(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def leaderboard_population(scenario: Leaderboards, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(official, judge): systems × population topics. Quality ~ N(0, 1); both evaluations share the
    topic's difficulty, and their system-topic interactions correlate 0.5, as when both judge the
    same ranking."""
    quality = rng.normal(0, 1, (scenario.systems, 1))
    seen = quality + rng.normal(0, scenario.disagreement, quality.shape)
    difficulty = rng.normal(0, 1, (1, POPULATION))
    shared = rng.normal(0, 0.8, (scenario.systems, POPULATION))
    own = rng.normal(0, 0.8, shared.shape)
    official = rng.binomial(20, _logistic(quality + difficulty + shared)) / 20
    judge = rng.binomial(10, _logistic(seen + difficulty + 0.5 * shared + math.sqrt(0.75) * own)) / 10
    return official, judge


def score_population(scenario: Scores, rng: np.random.Generator, systems: int = 20) -> np.ndarray:
    """systems × population topics of one evaluation."""
    quality = np.linspace(-1.5, 1.5, systems)[:, None]
    logit = quality + rng.normal(0, 1, (1, POPULATION)) + rng.normal(0, 0.8, (systems, POPULATION))
    if scenario.kind == "p20":
        return rng.binomial(20, _logistic(logit)) / 20
    return rng.binomial(10, _logistic(logit - 2.0)) / 10  # most topics answer few of their 10 questions


def nugget_population(rng: np.random.Generator) -> np.ndarray:
    """(population topics, 3, 3) grade counts, ours × official."""
    mix = rng.dirichlet([3, 1, 3], POPULATION)  # the topic's official grades
    agree = rng.beta(6, 3, POPULATION)  # the topic's share of nuggets ours copies; the rest at random
    ours_mix = rng.dirichlet([3, 1, 3], POPULATION)
    cells = agree[:, None, None] * (np.eye(3)[None] * mix[:, None, :]) \
        + (1 - agree)[:, None, None] * ours_mix[:, :, None] * mix[:, None, :]
    sizes = rng.poisson(600, POPULATION)
    flat = np.array([rng.multinomial(m, p.ravel()) for m, p in zip(sizes, cells)])
    return flat.reshape(POPULATION, 3, 3).astype(float)


def percentile(estimate: np.ndarray, replicates: np.ndarray, topics: int, bounds: tuple
               ) -> tuple[np.ndarray, np.ndarray]:
    """The interval exampp printed before: the percentile interval of the replicates (NaN left out)."""
    tail = (1 - CONFIDENCE) / 2
    low, high = np.full(replicates.shape[:-1], math.nan), np.full(replicates.shape[:-1], math.nan)
    defined = ~np.isnan(replicates).all(axis=-1)
    if defined.any():
        low[defined], high[defined] = np.nanquantile(replicates[defined], [tail, 1 - tail], axis=-1)
    return low, high


def basic(estimate: np.ndarray, replicates: np.ndarray, topics: int, bounds: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The percentile interval mirrored about the estimate (it undoes the bootstrap's bias), clipped."""
    low, high = percentile(estimate, replicates, topics, bounds)
    return np.maximum(2 * estimate - high, bounds[0]), np.minimum(2 * estimate - low, bounds[1])


def bias_corrected(estimate: np.ndarray, replicates: np.ndarray, topics: int, bounds: tuple
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Efron's BC percentile interval: the quantiles Φ(2 z0 ± z), z0 = Φ⁻¹(share of replicates below the
    estimate, ties half), the share kept within half a replicate of 0 and 1."""
    from scipy import stats

    z = stats.norm.ppf((1 + CONFIDENCE) / 2)
    low, high = np.full(estimate.shape, math.nan), np.full(estimate.shape, math.nan)
    for i in np.flatnonzero(~np.isnan(estimate)):
        values = replicates[i][~np.isnan(replicates[i])]
        if len(values):
            share = (np.sum(values < estimate[i]) + 0.5 * np.sum(values == estimate[i])) / len(values)
            z0 = stats.norm.ppf(np.clip(share, 0.5 / len(values), 1 - 0.5 / len(values)))
            low[i], high[i] = np.quantile(values, stats.norm.cdf([2 * z0 - z, 2 * z0 + z]))
    return low, high


def symmetric_plain(estimate: np.ndarray, replicates: np.ndarray, topics: int, bounds: tuple
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The new interval without the small-sample expansion (one query reads the confidence itself)."""
    return bootstrap_interval(estimate, replicates, CONFIDENCE, 1, bounds)


def new(estimate: np.ndarray, replicates: np.ndarray, topics: int, bounds: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The interval exampp prints now."""
    return bootstrap_interval(estimate, replicates, CONFIDENCE, topics, bounds)


METHODS = {"old": percentile, "new": new}
ALTERNATIVES = {"basic": basic, "BC": bias_corrected, "symmetric": symmetric_plain}


@dataclass
class Tally:
    """Hits, containment and widths of each method's intervals of one statistic."""

    hits: dict[str, list[bool]]
    inside: dict[str, list[bool]]
    widths: dict[str, list[float]]

    @classmethod
    def empty(cls) -> "Tally":
        return cls({}, {}, {})

    def add(self, method: str, truth: np.ndarray, estimate: np.ndarray, low: np.ndarray, high: np.ndarray) -> None:
        defined = ~np.isnan(estimate) & ~np.isnan(low)  # an undefined statistic has no interval to count
        self.hits.setdefault(method, []).extend(((low <= truth) & (truth <= high))[defined])
        self.inside.setdefault(method, []).extend(((low <= estimate) & (estimate <= high))[defined])
        self.widths.setdefault(method, []).extend((high - low)[defined])

    def row(self) -> dict[str, float]:
        """Coverage (%) of every method; mean width and containment (%) of the old and the new."""
        row = {method: 100 * np.mean(hits) for method, hits in self.hits.items()}
        for method in METHODS:
            row[f"{method}_width"] = np.mean(self.widths[method])
            row[f"{method}_inside"] = 100 * np.mean(self.inside[method])
        return {**row, "samples": len(self.hits["new"])}


Replicated = tuple[np.ndarray, np.ndarray, tuple]
"""(estimates, replicates (estimates × draws), bounds): what ``bootstrap_interval`` takes."""


def correlation_replicates(official: np.ndarray, judge: np.ndarray, draws: int, seed: int) -> dict[str, Replicated]:
    """Each correlation of one sample (systems × topics) and its replicates, as ``correlation_intervals``
    computes them (means unrounded: simulated means have no summation noise to round away)."""
    counts = _draw_counts(bootstrap_samples(official.shape[1], draws, seed), official.shape[1])
    point = _correlation_rows(official.mean(axis=1)[None], judge.mean(axis=1)[None], TOP)
    replicates = _correlation_rows(_replicate_means(official, counts).T, _replicate_means(judge, counts).T, TOP)
    return {name: (point[name], replicates[name][None], (-1, 1)) for name in CORRELATIONS}


def mean_replicates(sample: np.ndarray, draws: int, seed: int) -> Replicated:
    """Each run's mean of one sample (runs × topics) and its replicates, as ``bootstrap_means``."""
    counts = _draw_counts(bootstrap_samples(sample.shape[1], draws, seed), sample.shape[1])
    return sample.mean(axis=1), _replicate_means(sample, counts), (sample.min(axis=1), sample.max(axis=1))


def nugget_replicates(sample: np.ndarray, draws: int, seed: int) -> Replicated:
    """The nugget statistics of one sample (topics, 3, 3) and their replicates, as ``nuggets agree``."""
    replicates = nugget_statistics(sample[bootstrap_samples(len(sample), draws, seed)].sum(axis=1)).T
    return nugget_statistics(sample.sum(axis=0)), replicates, NUGGET_BOUNDS


def _tally(tally: Tally, truth: np.ndarray, replicated: Replicated, topics: int, methods: dict) -> None:
    estimate, replicates, bounds = replicated
    for name, method in methods.items():
        tally.add(name, truth, estimate, *method(estimate, replicates, topics, bounds))


def _samples(sims: int, topics: int, rng: np.random.Generator) -> Iterator[tuple[int, np.ndarray]]:
    """(sample number, the population topics it draws)."""
    for sim in range(sims):
        yield sim, rng.integers(0, POPULATION, topics)


def correlation_coverage(scenario: Leaderboards, sims: int, draws: int, seed: int,
                         methods: dict = METHODS) -> dict[str, Tally]:
    rng = np.random.default_rng(seed)
    official, judge = leaderboard_population(scenario, rng)
    truth = _correlation_rows(official.mean(axis=1)[None], judge.mean(axis=1)[None], TOP)
    tallies = {name: Tally.empty() for name in CORRELATIONS}
    for sim, topics in _samples(sims, scenario.topics, rng):
        for name, replicated in correlation_replicates(official[:, topics], judge[:, topics], draws,
                                                       seed + sim).items():
            _tally(tallies[name], truth[name], replicated, scenario.topics, methods)
    return tallies


def mean_coverage(scenario: Scores, sims: int, draws: int, seed: int,
                  methods: dict = METHODS) -> dict[str, Tally]:
    rng = np.random.default_rng(seed)
    scores = score_population(scenario, rng)
    tally = Tally.empty()
    for sim, topics in _samples(sims, scenario.topics, rng):
        _tally(tally, scores.mean(axis=1), mean_replicates(scores[:, topics], draws, seed + sim), scenario.topics,
               methods)
    return {"mean": tally}


def nugget_coverage(scenario: Nuggets, sims: int, draws: int, seed: int,
                    methods: dict = METHODS) -> dict[str, Tally]:
    rng = np.random.default_rng(seed)
    tables = nugget_population(rng)
    truth = nugget_statistics(tables.sum(axis=0))
    tallies = {name: Tally.empty() for name in NUGGET_STATISTICS}
    for sim, topics in _samples(sims, scenario.topics, rng):
        estimates, replicates, (low, high) = nugget_replicates(tables[topics], draws, seed + sim)
        for i, name in enumerate(NUGGET_STATISTICS):
            _tally(tallies[name], truth[i:i + 1], (estimates[i:i + 1], replicates[i:i + 1], (low[i], high)),
                   scenario.topics, methods)
    return tallies


def coverage_table(sims: int, draws: int, seed: int, methods: dict = METHODS,
                   progress: Callable[[str], None] = lambda line: None) -> pd.DataFrame:
    """One row per (statistic, scenario): nominal and each method's coverage (%), the mean widths of
    the old and new intervals, and how often each held its own estimate (%)."""
    jobs = ([(f"{s.name}, {s.topics} topics", lambda s=s: mean_coverage(s, sims, draws, seed, methods))
             for s in SCORES]
            + [(f"{s.name}, {s.systems} systems, {s.topics} topics",
                lambda s=s: correlation_coverage(s, sims, draws, seed, methods)) for s in LEADERBOARDS]
            + [(f"{s.name}, {s.topics} topics", lambda s=s: nugget_coverage(s, sims, draws, seed, methods))
               for s in NUGGETS])
    rows = []
    for scenario, job in jobs:
        start = time.perf_counter()
        for statistic, tally in job().items():
            rows.append({"statistic": statistic, "scenario": scenario, "nominal": 100 * CONFIDENCE, **tally.row()})
        progress(f"{scenario}: {time.perf_counter() - start:.0f} s")
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=1000, help="samples per scenario")
    parser.add_argument("--draws", type=int, default=1000, help="bootstrap resamplings per sample")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alternatives", action="store_true",
                        help="also the basic, BC and unexpanded symmetric intervals' coverage")
    args = parser.parse_args()
    start = time.perf_counter()
    methods = {**METHODS, **ALTERNATIVES} if args.alternatives else METHODS
    table = coverage_table(args.sims, args.draws, args.seed, methods, progress=print)
    table["ratio"] = table["new_width"] / table["old_width"]
    with pd.option_context("display.width", 200, "display.max_rows", 100):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.1f}" if abs(v) >= 10 else f"{v:.3f}"))
    print(f"{args.sims} samples per scenario, {args.draws} draws each, seed {args.seed}: "
          f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
