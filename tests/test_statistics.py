"""Statistics with confidence, each against an independent computation: the interval by hand and
as Student's t for a mean, the bootstrap against a plain loop, correlation intervals against scipy
on every replicate, paired tests against scipy and exact enumeration, Holm/BH by hand,
Krippendorff's α on Krippendorff's (2011) worked example; and the interval's containment of its
estimate as a property."""
from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as strategies
from hypothesis.extra import numpy as arrays
from scipy import stats

from exampp.analysis.correlation import correlate, tau_ap
from exampp.analysis.statistics import (
    CORRELATIONS,
    adjust,
    bootstrap_interval,
    bootstrap_means,
    bootstrap_samples,
    correlation_intervals,
    correlation_values,
    disagreements,
    discriminative_power,
    expanded_level,
    kendall_top,
    krippendorff_alpha,
    krippendorff_alpha_counts,
    paired_tests,
    scores_table,
)


def table(values, runs=None, queries=None) -> pd.DataFrame:
    values = np.asarray(values, dtype=float)
    runs = runs or [f"r{i}" for i in range(values.shape[0])]
    queries = queries or [f"q{j}" for j in range(values.shape[1])]
    return pd.DataFrame(values, index=pd.Index(runs, name="run"), columns=queries)


@pytest.fixture
def random_scores():
    rng = np.random.default_rng(7)
    quality = np.linspace(0.2, 0.6, 8)[:, None]
    return table(np.clip(quality + rng.normal(0, 0.2, size=(8, 15)), 0, 1))


def test_bootstrap_samples_are_reproducible_under_a_seed():
    a, b = bootstrap_samples(10, 50, seed=3), bootstrap_samples(10, 50, seed=3)
    assert a.shape == (50, 10) and (a == b).all()
    assert not (a == bootstrap_samples(10, 50, seed=4)).all()
    assert a.min() >= 0 and a.max() <= 9
    assert (a == np.random.default_rng(3).integers(0, 10, size=(50, 10))).all()


def symmetric(estimate: float, replicates, level: float, low: float = -math.inf, high: float = math.inf):
    """The interval written out: estimate ± the ``level`` quantile of the replicates' distance to it."""
    reach = np.quantile(np.abs(np.asarray(replicates, dtype=float) - estimate), level)
    return max(estimate - reach, low), min(estimate + reach, high)


def test_expanded_level_hand_worked():
    # 11 queries at 95%: t(0.975, 10) = 2.228139 (tables) x sqrt(11/10) = 2.336892; 1 - 2 Φ(-2.336892)
    assert expanded_level(0.95, 11) == pytest.approx(1 - 2 * 0.0097224, abs=1e-6)
    # 15 queries at 90%: t(0.95, 14) = 1.761310 x sqrt(15/14) = 1.823129; 1 - 2 Φ(-1.823129)
    assert expanded_level(0.9, 15) == pytest.approx(1 - 2 * 0.0341419, abs=1e-6)
    assert expanded_level(0.95, 1) == 0.95  # one query: every resample is that query
    assert 0.95 < expanded_level(0.95, 100_000) < 0.95001  # many queries: the level itself
    with pytest.raises(ValueError, match="between 0 and 1"):
        expanded_level(1.0, 5)


def test_bootstrap_interval_hand_worked():
    # distances to 0.5: 0.4 0.3 0.1 0.05 0; with one query the level is the confidence, and numpy's
    # 0.75 quantile of the five sorted distances is the fourth, 0.3
    replicates = np.array([[0.1, 0.2, 0.4, 0.45, 0.5, math.nan]])
    low, high = bootstrap_interval(np.array([0.5]), replicates, 0.75, 1)
    assert (low[0], high[0]) == pytest.approx((0.2, 0.8))
    low, high = bootstrap_interval(np.array([0.5]), replicates, 0.75, 1, bounds=(0.0, 0.7))
    assert (low[0], high[0]) == pytest.approx((0.2, 0.7))
    # the replicates all below the estimate (a correlation's attenuation): the interval reaches as far above
    low, high = bootstrap_interval(np.array([0.8]), np.array([[0.5, 0.6, 0.7, 0.7, 0.75]]), 0.75, 1)
    assert (low[0], high[0]) == pytest.approx((0.6, 1.0))
    # an undefined estimate, or no defined replicate, has no interval
    low, high = bootstrap_interval(np.array([math.nan, 0.3]), np.array([[0.1, 0.2], [math.nan, math.nan]]), 0.9, 4)
    assert np.isnan(low).all() and np.isnan(high).all()


@pytest.mark.slow
@settings(derandomize=True, database=None, max_examples=300, deadline=None)
@given(arrays.arrays(float, strategies.tuples(strategies.integers(1, 4), strategies.integers(1, 30)),
                     elements=strategies.floats(-1, 1) | strategies.just(math.nan)),
       strategies.floats(-1, 1), strategies.floats(0.01, 0.99), strategies.integers(1, 60))
def test_every_interval_contains_its_estimate(replicates, estimate, confidence, n_queries):
    estimates = np.full(len(replicates), estimate)
    low, high = bootstrap_interval(estimates, replicates, confidence, n_queries, bounds=(-1, 1))
    defined = ~np.isnan(replicates).all(axis=1)
    assert (low[defined] <= estimates[defined]).all() and (estimates[defined] <= high[defined]).all()
    assert (-1 <= low[defined]).all() and (high[defined] <= 1).all()
    assert np.isnan(low[~defined]).all() and np.isnan(high[~defined]).all()


def test_the_interval_of_a_mean_is_students_t():
    # symmetric scores: the bootstrap distribution of the mean is close to normal with spread
    # sqrt((n-1)/n) s / sqrt(n); the expanded quantile undoes both, giving mean ± t s / sqrt(n)
    scores = table([[-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5]])
    result = bootstrap_means(scores, n=20000, seed=1, confidence=0.95)
    t_reach = stats.t.ppf(0.975, 10) * scores.iloc[0].std(ddof=1) / math.sqrt(11)
    assert result.at["r0", "high"] == pytest.approx(t_reach, rel=0.03)
    assert result.at["r0", "low"] == pytest.approx(-t_reach, rel=0.03)


def test_bootstrap_means_equal_a_plain_loop(random_scores):
    result = bootstrap_means(random_scores, n=300, seed=11, confidence=0.9)
    samples = bootstrap_samples(random_scores.shape[1], 300, 11)
    values = random_scores.to_numpy()
    level = 1 - 2 * stats.norm.sf(stats.t.ppf(0.95, 14) * math.sqrt(15 / 14))
    for i, run in enumerate(random_scores.index):
        means = [values[i, draw].mean() for draw in samples]
        assert result.at[run, "mean"] == pytest.approx(values[i].mean())
        expected = symmetric(values[i].mean(), means, level, values[i].min(), values[i].max())
        assert (result.at[run, "low"], result.at[run, "high"]) == pytest.approx(expected, abs=1e-12)
    again = bootstrap_means(random_scores, n=300, seed=11, confidence=0.9)
    pd.testing.assert_frame_equal(result, again)
    assert (result["low"] <= result["mean"]).all() and (result["mean"] <= result["high"]).all()


def test_a_mean_interval_stays_within_the_runs_scores():
    # a run scoring 1 on one of eleven queries: the mean is 0.09, the resampled means run from 0
    # up; 0.09 minus their reach would fall below 0, which no mean of these scores can
    result = bootstrap_means(table([[1] + [0] * 10]), n=1000, seed=0)
    assert result.at["r0", "low"] == 0.0 and 0.09 < result.at["r0", "high"] < 0.5


def test_bootstrap_of_a_constant_run_is_a_point():
    result = bootstrap_means(table([[0.5, 0.5, 0.5], [0.0, 1.0, 0.5]]), n=100)
    assert tuple(result.loc["r0"]) == pytest.approx((0.5, 0.5, 0.5))
    assert result.at["r1", "low"] < 0.5 < result.at["r1", "high"]


def test_scores_table_pivots_and_fills_missing_queries_with_zero():
    long = pd.DataFrame({"run": ["a", "a", "b"], "query_id": ["q1", "q2", "q1"], "cover": [0.5, 1.0, 0.25]})
    assert scores_table(long, "cover").to_dict("index") == {"a": {"q1": 0.5, "q2": 1.0}, "b": {"q1": 0.25, "q2": 0.0}}
    measures = pd.DataFrame({"run": ["a", "a"], "query_id": ["q1", "q1"], "measure": ["P@5", "AP"], "value": [.2, .3]})
    assert scores_table(measures, measure="AP").to_dict("index") == {"a": {"q1": 0.3}}


def _plain_correlations(x: np.ndarray, y: np.ndarray, top: int) -> dict[str, float]:
    """The four statistics on one replicate, each by scipy or the module's own 1-d τ_AP."""
    def quiet(test, a, b):
        if np.all(a == a[0]) or np.all(b == b[0]):
            return math.nan
        return test(a, b).statistic
    order = stats.rankdata(-x, method="min")
    inside = order <= top
    return {"spearman": quiet(stats.spearmanr, x, y), "kendall": quiet(stats.kendalltau, x, y),
            "tau_ap": tau_ap(x, y), "kendall_top": quiet(stats.kendalltau, x[inside], y[inside]),
            "tau_ap_b": (tau_ap(x, y) + tau_ap(y, x)) / 2, "tau_gap": _plain_tau_gap(x, y)}


def _plain_tau_gap(truth: np.ndarray, predicted: np.ndarray) -> float:
    """Gao & Oard's τ_GAP as a loop: y's order (ties by position), x's gaps."""
    order = sorted(range(len(truth)), key=lambda k: (-predicted[k], k))
    shares = []
    for i in range(1, len(order)):
        gaps = [abs(truth[order[j]] - truth[order[i]]) for j in range(i)]
        right = [g for j, g in enumerate(gaps) if truth[order[j]] > truth[order[i]]]
        if sum(gaps) > 0:
            shares.append(sum(right) / sum(gaps))
    return 2 * np.mean(shares) - 1 if shares else math.nan


@pytest.mark.slow
def test_correlation_intervals_equal_scipy_on_every_replicate(random_scores):
    rng = np.random.default_rng(1)
    other = random_scores + rng.normal(0, 0.15, size=random_scores.shape)
    other = other.round(1)  # coarse scores: ties in the replicates
    result = correlation_intervals(random_scores, other, n=200, seed=5, confidence=0.9, top=4, decimals=10)
    assert list(result.index) == list(CORRELATIONS)
    samples = bootstrap_samples(random_scores.shape[1], 200, 5)
    x_values, y_values = random_scores.to_numpy(), other.to_numpy()
    replicates = {name: [] for name in CORRELATIONS}
    for draw in samples:
        x, y = np.round(x_values[:, draw].mean(axis=1), 10), np.round(y_values[:, draw].mean(axis=1), 10)
        for name, value in _plain_correlations(x, y, 4).items():
            replicates[name].append(value)
    level = expanded_level(0.9, random_scores.shape[1])
    for name in CORRELATIONS:
        values = np.array(replicates[name])
        expected = symmetric(result.at[name, "value"], values[~np.isnan(values)], level, -1, 1)
        assert (result.at[name, "low"], result.at[name, "high"]) == pytest.approx(expected, abs=1e-12), name
    # the values on all queries are what correlate() reports on the leaderboards
    plain = correlate(random_scores.mean(axis=1).to_dict(), other.mean(axis=1).to_dict())
    assert result.at["spearman", "value"] == pytest.approx(plain.spearman)
    assert result.at["kendall", "value"] == pytest.approx(plain.kendall)
    assert result.at["tau_ap", "value"] == pytest.approx(plain.tau_ap)


def test_correlation_intervals_align_and_refuse_different_tables(random_scores):
    shuffled = random_scores.iloc[::-1, ::-1]
    a = correlation_intervals(random_scores, random_scores * 2, n=50)
    b = correlation_intervals(random_scores, shuffled * 2, n=50)
    pd.testing.assert_frame_equal(a, b)
    assert (a["value"] == 1).all() and (a["low"] == 1).all()
    with pytest.raises(ValueError, match="same runs"):
        correlation_intervals(random_scores, random_scores.iloc[1:], n=10)


@pytest.mark.slow
def test_a_leaderboard_reference_is_held_fixed_in_every_replicate(random_scores):
    rng = np.random.default_rng(2)
    other = random_scores + rng.normal(0, 0.15, size=random_scores.shape)
    official = pd.Series(np.linspace(1, 0, len(other)), index=other.index[::-1])  # a leaderboard, no per-query
    result = correlation_intervals(official, other, n=300, seed=3, top=4)
    fixed = np.round(official.loc[other.index].to_numpy(), 10)  # rounded as ranked: τ_GAP weighs its gaps
    replicates = {name: [] for name in CORRELATIONS}
    for draw in bootstrap_samples(other.shape[1], 300, 3):
        for name, value in _plain_correlations(fixed, np.round(other.to_numpy()[:, draw].mean(axis=1), 10), 4).items():
            replicates[name].append(value)
    level = expanded_level(0.95, other.shape[1])
    for name in CORRELATIONS:
        values = np.array(replicates[name])
        expected = symmetric(result.at[name, "value"], values[~np.isnan(values)], level, -1, 1)
        assert (result.at[name, "low"], result.at[name, "high"]) == pytest.approx(expected, abs=1e-12), name
    values = correlation_values(official.to_dict(), other.mean(axis=1).to_dict(), top=4)
    assert values == pytest.approx(result["value"].to_dict())
    assert values == pytest.approx(_plain_correlations(fixed, other.mean(axis=1).to_numpy(), 4))
    no_draws = correlation_intervals(official, other, n=0, top=4)
    assert no_draws["low"].isna().all() and no_draws["value"].to_dict() == pytest.approx(values)


def test_kendall_top_hand_worked():
    ref = {"a": 5, "b": 4, "c": 3, "d": 2, "e": 1}
    other = {"a": 4, "b": 5, "c": 3, "d": 1, "e": 2}
    # top 3 of ref: a, b, c; other orders them b, a, c: pairs (a,b) discordant, (a,c), (b,c) concordant
    assert kendall_top(ref, other, top=3) == pytest.approx(1 / 3)
    assert kendall_top(ref, other, top=5) == pytest.approx(stats.kendalltau([5, 4, 3, 2, 1], [4, 5, 3, 1, 2]).statistic)
    # systems tied at the cut are all in: top 2 with b and c tied second takes a, b, c
    tied = {"a": 5, "b": 4, "c": 4, "d": 1}
    assert kendall_top(tied, {"a": 1, "b": 2, "c": 3, "d": 4}, top=2) == pytest.approx(
        stats.kendalltau([5, 4, 4], [1, 2, 3]).statistic)


def test_paired_t_tests_equal_scipy(random_scores):
    tests = paired_tests(random_scores, test="t", correction="none")
    assert len(tests) == 8 * 7 // 2
    for row in tests.itertuples():
        expected = stats.ttest_rel(random_scores.loc[row.a], random_scores.loc[row.b]).pvalue
        assert row.p_value == pytest.approx(expected, rel=1e-12)
        assert row.mean_a >= row.mean_b
        assert row.difference == pytest.approx(row.mean_a - row.mean_b)
    assert (tests["p_adjusted"] == tests["p_value"]).all()
    assert discriminative_power(tests) == pytest.approx((tests["p_value"] < 0.05).mean())


SMALL = table([[0.9, 0.4, 0.7, 0.3, 0.8, 0.6, 0.5, 0.65], [0.5, 0.5, 0.2, 0.35, 0.4, 0.7, 0.1, 0.3]],
              runs=["a", "b"])


def _exact_sign_flip_p(differences: np.ndarray) -> float:
    observed = abs(differences.mean())
    flips = [abs((differences * np.array(signs)).mean())
             for signs in itertools.product([-1, 1], repeat=len(differences))]
    return sum(f >= observed - 1e-12 for f in flips) / len(flips)


def test_randomization_test_against_exact_enumeration_and_scipy():
    differences = (SMALL.loc["a"] - SMALL.loc["b"]).to_numpy()
    exact = _exact_sign_flip_p(differences)  # 2^8 = 256 sign vectors
    scipy_p = stats.permutation_test((SMALL.loc["a"].to_numpy(), SMALL.loc["b"].to_numpy()),
                                     lambda x, y: np.mean(x - y), permutation_type="samples",
                                     alternative="two-sided").pvalue
    assert exact == pytest.approx(scipy_p)  # scipy enumerates all 256 here
    assert exact == pytest.approx(16 / 256)  # what both enumerations count: 16 of the 256 sign vectors
    result = paired_tests(SMALL, test="randomization", n=20000, seed=1, correction="none")
    p = result.at[0, "p_value"]
    # Monte Carlo: standard error sqrt(p(1-p)/n) ~ 0.0015; allow 4 of them
    assert p == pytest.approx(exact, abs=0.006)
    assert paired_tests(SMALL, test="randomization", n=500, seed=9).equals(
        paired_tests(SMALL, test="randomization", n=500, seed=9))
    # p = (count + 1) / (n + 1), never 0: a constant difference is reached only by the drawn sign
    # vectors that are all +1 or all -1 (the draws: rng.integers(0, 2) per query, seeded)
    extreme = paired_tests(table([[1.0] * 6, [0.0] * 6]), test="randomization", n=999, seed=0)
    draws = np.random.default_rng(0).integers(0, 2, size=(999, 6))
    count = int((draws.min(axis=1) == draws.max(axis=1)).sum())
    assert extreme.at[0, "p_value"] == pytest.approx((count + 1) / 1000) and count > 0


def test_identical_runs_have_p_one_and_constant_differences_p_zero():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scipy's warnings on constant data stay inside
        tests = paired_tests(table([[0.5, 0.75, 0.25], [0.5, 0.75, 0.25], [0.25, 0.5, 0.0]]), test="t")
    same = tests[(tests["a"] == "r0") & (tests["b"] == "r1")]
    assert same["p_value"].item() == 1.0 and not same["significant"].item()
    assert (tests.loc[tests["b"] == "r2", "p_value"] == 0.0).all()  # differences 0.25 on every query


def test_holm_and_bh_by_hand():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # Holm: sorted .005 .01 .03 .04 times 4, 3, 2, 1 -> .02 .03 .06 .04 -> running max .02 .03 .06 .06
    assert adjust(p, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # BH: sorted .005 .01 .03 .04 times 4/1, 4/2, 4/3, 4/4 -> .02 .02 .04 .04, running min from the top
    assert adjust(p, "bh") == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert adjust(p, "bh") == pytest.approx(stats.false_discovery_control(p, method="bh"))
    assert adjust([0.5, 0.9], "holm") == pytest.approx([1.0, 1.0])  # capped at 1
    q = np.random.default_rng(2).random(30) ** 3
    assert adjust(q, "bh") == pytest.approx(stats.false_discovery_control(q, method="bh"))
    assert (adjust(q, "none") == q).all()


def test_undefined_p_values_stay_undefined_and_leave_the_others_alone():
    p = np.array([0.01, math.nan, 0.04, 0.03])
    # the three defined ones, as if alone: Holm 3*0.01, 2*0.03, max(0.06, 1*0.04); BH 3/1*0.01, 3/2*0.03, 3/3*0.04
    holm, bh = adjust(p, "holm"), adjust(p, "bh")
    assert math.isnan(holm[1]) and math.isnan(bh[1])
    assert holm[[0, 2, 3]] == pytest.approx([0.03, 0.06, 0.06])
    assert bh[[0, 2, 3]] == pytest.approx([0.03, 0.04, 0.04])


def test_corrections_in_paired_tests(random_scores):
    raw = paired_tests(random_scores, correction="none")
    holm = paired_tests(random_scores, correction="holm", alpha=0.01)
    assert holm["p_adjusted"].to_numpy() == pytest.approx(adjust(raw["p_value"].to_numpy(), "holm"))
    assert (holm["significant"] == (holm["p_adjusted"] < 0.01)).all()


def test_disagreements_hand_worked():
    a = table([[0.9, 0.7], [0.6, 0.6], [0.2, 0.4]], runs=["x", "y", "z"])   # means x .8 > y .6 > z .3
    b = table([[0.5, 0.5], [0.8, 0.8], [0.1, 0.1]], runs=["x", "y", "z"])   # means y .8 > x .5 > z .1
    tests_a = pd.DataFrame({"a": ["x", "x", "y"], "b": ["y", "z", "z"], "p_adjusted": [0.01, 0.2, 0.3],
                            "significant": [True, False, False]})
    tests_b = pd.DataFrame({"a": ["y", "y", "x"], "b": ["x", "z", "z"], "p_adjusted": [0.5, 0.01, 0.01],
                            "significant": [False, True, True]})
    result = disagreements(a, b, tests_a, tests_b)
    assert result[["a", "b"]].values.tolist() == [["x", "y"]]  # only x vs y swaps
    row = result.iloc[0]
    assert (row.mean_a_in_A, row.mean_b_in_A, row.mean_a_in_B, row.mean_b_in_B) == pytest.approx((0.8, 0.6, 0.5, 0.8))
    assert bool(row.significant_in_A) and not bool(row.significant_in_B)
    assert (row.p_adjusted_in_A, row.p_adjusted_in_B) == (0.01, 0.5)


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section on data with missing
# values: 4 observers x 12 units (None = no value); published α: nominal .743, ordinal .815, interval .849.
KRIPPENDORFF_2011 = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
    [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
])


@pytest.mark.parametrize("level, published", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_krippendorff_alpha_published_example(level, published):
    alpha = krippendorff_alpha(KRIPPENDORFF_2011, level)
    assert alpha == pytest.approx(published, abs=5e-4)
    krippendorff = pytest.importorskip("krippendorff")
    assert alpha == pytest.approx(krippendorff.alpha(reliability_data=KRIPPENDORFF_2011, level_of_measurement=level))


def test_krippendorff_alpha_hand_worked_two_coders():
    # two coders, units (0,0) (1,1) (0,1): coincidences o00 = 2, o11 = 2, o01 = o10 = 1; n0 = n1 = 3, n = 6
    # nominal α = 1 - (n-1) Σ o_ck δ / Σ n_c n_k δ = 1 - 5·2 / (2·9) = 4/9
    data = np.array([[0, 1, 0], [0, 1, 1]])
    assert krippendorff_alpha(data, "nominal") == pytest.approx(4 / 9)
    assert krippendorff_alpha(data, "interval") == pytest.approx(4 / 9)  # two values: δ² = 1 too
    assert math.isnan(krippendorff_alpha(np.array([[2, 2], [2, 2]]), "ordinal"))
    assert krippendorff_alpha(np.array([[1, 2, 3], [1, 2, 3]]), "ordinal") == 1.0


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_of_count_tables_equals_alpha_of_the_pairs(level):
    rng = np.random.default_rng(3)
    tables = rng.integers(0, 6, size=(40, 4, 4))
    tables[:10, 2, :] = tables[:10, :, 2] = 0  # a value neither coder used
    tables[10] = 0
    tables[10, 1, 1] = 7  # one value throughout: nothing to expect, NaN
    rows, columns = np.indices((4, 4))
    for table, alpha in zip(tables, krippendorff_alpha_counts(tables, level)):
        pairs = np.array([np.repeat(rows.ravel(), table.ravel()), np.repeat(columns.ravel(), table.ravel())], float)
        assert alpha == pytest.approx(krippendorff_alpha(pairs, level), nan_ok=True)
    assert math.isnan(krippendorff_alpha_counts(tables[10], level))
