"""IRTModel: item response function, standard errors against an independent numerical Hessian,
parameter recovery on simulated data, excluded items, missing responses, abilities, JML."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from exampp.analysis.irt import IRTModel, clone, eap, irf, mle, models as irt_models
from exampp.analysis.irt.models import PAPER_BOUNDS, NothingToEstimate
from exampp.errors import ExamppError


def simulate(n: int, n_items: int, seed: int, g: float = 0.0, missing: float = 0.0):
    rng = np.random.default_rng(seed)
    a = rng.lognormal(0.0, 0.3, n_items)
    b = rng.normal(0.0, 1.0, n_items)
    theta = rng.normal(0.0, 1.0, n)
    X = (rng.random((n, n_items)) < irf(theta, a, b, g)).astype(float)
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    return X, a, b, theta


def marginal_loglik(X: np.ndarray, weight: np.ndarray, a, c, g=0.0) -> float:
    """Independent route: trapezoidal integration over a dense θ grid instead of Gauss–Hermite."""
    grid = np.linspace(-8, 8, 4001)
    density = np.exp(-grid**2 / 2) / np.sqrt(2 * np.pi)
    p = g + (1 - g) / (1 + np.exp(-(np.outer(grid, a) + c)))
    like = np.prod(np.where(X[:, None, :] == 1, p[None], 1 - p[None]), axis=2)  # (N, grid)
    return float(weight @ np.log(np.trapezoid(like * density, grid, axis=1)))


def test_irf_by_hand():
    p = irf([0.0, 1.0 + np.log(3.0) / 2.0], a=[1.0, 2.0], b=[0.0, 1.0], g=[0.25, 0.0])
    assert p[0, 0] == pytest.approx(0.625)  # g + (1 − g)/2
    assert p[1, 1] == pytest.approx(0.75)  # σ(ln 3) = 3/4
    assert p.shape == (2, 2)


@pytest.fixture(scope="module")
def small():
    """A 2PL sample with several distinct patterns, and its fit."""
    X, *_ = simulate(600, 4, seed=3)
    patterns, counts = np.unique(X, axis=0, return_counts=True)
    return patterns, counts.astype(float), IRTModel("2pl").fit(patterns, sample_weight=counts)


def _numerical_hessian(f, x, h=1e-3):
    k = len(x)
    H = np.zeros((k, k))
    for i in range(k):
        for j in range(i, k):
            def at(di, dj):
                y = x.copy()
                y[i] += di
                y[j] += dj
                return f(y)
            H[i, j] = H[j, i] = (at(h, h) - at(h, -h) - at(-h, h) + at(-h, -h)) / (4 * h * h)
    return H


def test_loglik_and_standard_errors_match_numerical_hessian(small):
    patterns, counts, model = small
    J = patterns.shape[1]
    c = -model.a_ * model.b_
    assert model.loglik_ == pytest.approx(marginal_loglik(patterns, counts, model.a_, c), abs=1e-6)

    def f(v):
        return marginal_loglik(patterns, counts, v[J:], v[:J])

    cov = np.linalg.inv(-_numerical_hessian(f, np.concatenate([c, model.a_])))
    np.testing.assert_allclose(model.a_se_, np.sqrt(np.diag(cov)[J:]), rtol=0.01)
    grad_b = np.hstack([np.diag(-1 / model.a_), np.diag(c / model.a_**2)])  # b = −c/a
    np.testing.assert_allclose(model.b_se_, np.sqrt(np.diag(grad_b @ cov @ grad_b.T)), rtol=0.01)


def test_without_standard_errors_the_fit_is_the_same(small):
    """A bootstrap refit wants θ alone: leaving the standard errors out changes no estimate."""
    patterns, counts, model = small
    bare = IRTModel(standard_errors=False).fit(patterns, sample_weight=counts)
    for name in ("a_", "b_", "theta_", "theta_se_", "loglik_", "n_iter_"):
        np.testing.assert_array_equal(getattr(bare, name), getattr(model, name))
    assert np.isnan(bare.a_se_).all() and np.isnan(bare.b_se_).all() and np.isfinite(model.a_se_).all()


def test_block_standard_errors_invert_the_item_blocks(small, monkeypatch):
    """Large problems use the item-diagonal blocks of the observed information (exact blocks)."""
    patterns, counts, _ = small
    monkeypatch.setattr(irt_models, "_FULL_INFORMATION_LIMIT", 0)
    model = IRTModel("2pl").fit(patterns, sample_weight=counts)
    J = patterns.shape[1]
    c = -model.a_ * model.b_
    H = -_numerical_hessian(lambda v: marginal_loglik(patterns, counts, v[J:], v[:J]), np.concatenate([c, model.a_]))
    for j in range(J):
        block = np.linalg.inv(H[np.ix_([j, J + j], [j, J + j])])
        assert model.a_se_[j] == pytest.approx(np.sqrt(block[1, 1]), rel=0.01)


@pytest.mark.parametrize("n, n_items, seed, min_corr", [(500, 20, 1, 0.85), (2000, 10, 2, 0.78)])
def test_2pl_parameter_recovery_within_sampling_error(n, n_items, seed, min_corr):
    X, a, b, theta = simulate(n, n_items, seed)
    model = IRTModel("2pl").fit(X)
    assert model.converged_ and np.all(model.item_status_ == "ok")
    assert np.mean(np.abs(model.a_ - a) <= 3 * model.a_se_) >= 0.95
    assert np.mean(np.abs(model.b_ - b) <= 3 * model.b_se_) >= 0.95
    assert np.corrcoef(model.theta_, theta)[0, 1] >= min_corr
    assert np.all(np.diff(model.loglik_trace_[:-1]) > -1e-8)  # EM never lowers the likelihood


def test_3pl_fixed_guessing_recovery():
    X, a, b, _ = simulate(3000, 12, seed=4, g=0.2)
    model = IRTModel("3pl", guessing=0.2).fit(X)
    assert np.all(model.g_ == 0.2) and np.all(np.isnan(model.g_se_))
    assert np.mean(np.abs(model.a_ - a) <= 3 * model.a_se_) >= 0.9
    assert np.mean(np.abs(model.b_ - b) <= 3 * model.b_se_) >= 0.9
    assert model.n_params_ == 24


def test_3pl_estimated_guessing_stays_near_truth():
    X, *_ = simulate(3000, 12, seed=5, g=0.2)
    model = IRTModel("3pl").fit(X)
    assert model.converged_
    assert np.all(np.abs(model.g_ - 0.2) <= 3 * model.g_se_)
    assert model.n_params_ == 36


def test_missing_responses_are_ignored_not_wrong():
    X, a, b, _ = simulate(2000, 10, seed=6, missing=0.3)
    model = IRTModel("2pl").fit(X)
    assert np.mean(np.abs(model.b_ - b) <= 3 * model.b_se_) >= 0.9
    assert np.mean(np.abs(model.a_ - a) <= 3 * model.a_se_) >= 0.9


def test_degenerate_items_are_reported_and_excluded():
    X, *_ = simulate(300, 6, seed=7)
    extra = np.column_stack([np.ones(300), np.zeros(300), np.full(300, np.nan)])
    with_extra = np.hstack([X[:, :3], extra, X[:, 3:]])
    model = IRTModel("2pl").fit(with_extra)
    reference = IRTModel("2pl").fit(X)
    assert list(model.item_status_) == ["ok"] * 3 + ["all correct", "all wrong", "no responses"] + ["ok"] * 3
    kept = model.item_status_ == "ok"
    assert np.all(np.isnan(model.a_[~kept])) and np.all(np.isfinite(model.a_se_[kept]))
    np.testing.assert_allclose(model.a_[kept], reference.a_, atol=1e-6)
    assert model.loglik_ == pytest.approx(reference.loglik_)


def test_fit_does_not_mutate_input_and_accepts_dataframe():
    X, *_ = simulate(200, 5, seed=8, missing=0.1)
    before = X.copy()
    frame = pd.DataFrame(X, columns=[f"q{i}" for i in range(5)])
    model = IRTModel("1pl").fit(frame)
    np.testing.assert_array_equal(X, before)
    assert np.allclose(model.a_, model.a_[0])


def test_warm_start_reaches_the_same_optimum():
    X, *_ = simulate(800, 8, seed=9)
    cold = IRTModel("2pl").fit(X)
    warm = IRTModel("2pl").fit(X, init={"a": cold.a_, "b": cold.b_, "g": cold.g_})
    np.testing.assert_allclose(warm.a_, cold.a_, atol=1e-3)
    assert warm.n_iter_ <= cold.n_iter_


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="0, 1 or NaN"):
        IRTModel().fit([[0, 2], [1, 0]])
    with pytest.raises(ValueError, match="unknown model"):
        IRTModel("4pl").fit([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="unknown prior_a 'small'"):
        IRTModel(prior_a="small").fit([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="sdlog > 0"):
        IRTModel(prior_a=(0.0, 0.0)).fit([[0, 1], [1, 0]])
    # a matrix where every item is answered alike (grades read at too high a τ, say) is the user's to fix
    with pytest.raises(NothingToEstimate, match="no item has both right and wrong responses") as error:
        IRTModel().fit([[0, 1], [0, 1]])
    assert isinstance(error.value, ExamppError)


def test_prior_a_auto_puts_a_prior_on_small_samples_only():
    X, *_ = simulate(60, 6, seed=12)
    auto = IRTModel("2pl").fit(X)
    assert auto.prior_a == "auto" and auto.prior_a_ == (0.0, 0.5)
    explicit = IRTModel("2pl", prior_a=(0.0, 0.5)).fit(X)
    np.testing.assert_array_equal(auto.a_, explicit.a_)
    assert auto.loglik_ == explicit.loglik_
    plain = IRTModel("2pl", prior_a=None).fit(X)
    assert plain.prior_a_ is None and plain.loglik_ > auto.loglik_  # ML maximises what MAP trades off
    # the respondents' summed weight decides, not the number of rows: 41 + 59 = 100 is not small
    assert IRTModel("2pl").fit(X, sample_weight=np.r_[41.0, np.ones(59)]).prior_a_ is None
    assert IRTModel("2pl").fit(X, sample_weight=np.r_[40.0, np.ones(59)]).prior_a_ == (0.0, 0.5)
    # none where no a is free or by JML (which takes no priors); an explicit one applies to 1PL's common a
    for model in (IRTModel("rasch"), IRTModel("1pl"), IRTModel("2pl", method="jml"),
                  IRTModel("2pl", method="jml", prior_a=(0.0, 0.5))):
        assert model.fit(X).prior_a_ is None, model.get_params()
    assert IRTModel("1pl", prior_a=(0, 1)).fit(X).prior_a_ == (0.0, 1.0)


def test_parameters_clone_round_trip():
    model = IRTModel("3pl", guessing=0.2, n_quadrature=21, prior_a=(0.1, 0.4))
    params = model.get_params()
    assert params == {"guessing": 0.2, "max_iter": 500, "method": "mml", "model": "3pl", "n_quadrature": 21,
                      "prior_a": (0.1, 0.4), "prior_g": (5.0, 17.0), "standard_errors": True, "tol": 1e-6}
    assert model.get_params(deep=False) == params
    assert IRTModel(**params).get_params() == params
    X = simulate(300, 5, seed=13, g=0.2)[0]
    model.fit(X)
    fresh = clone(model)
    assert fresh.get_params() == params and not hasattr(fresh, "a_")
    fresh.fit(X)
    np.testing.assert_array_equal(fresh.a_, model.a_)
    assert fresh.loglik_ == model.loglik_
    assert fresh.set_params(model="2pl", guessing=None) is fresh
    assert fresh.get_params() == {**params, "model": "2pl", "guessing": None}
    with pytest.raises(ValueError, match=r"invalid parameter\(s\) 'modle' for IRTModel"):
        fresh.set_params(modle="2pl")
    sklearn = pytest.importorskip("sklearn.base")
    assert sklearn.clone(model).get_params() == params


def test_abilities_eap_and_mle(small):
    patterns, counts, model = small
    theta, psd = model.abilities(patterns)
    np.testing.assert_allclose(theta, model.theta_, atol=1e-10)
    assert np.all((psd > 0) & (psd < 1))
    rasch = IRTModel("rasch").fit(patterns, sample_weight=counts)
    theta_mle, se = rasch.abilities(patterns, method="mle")
    score = patterns.sum(axis=1)
    inner = (score > 0) & (score < patterns.shape[1])
    # Rasch MLE: expected score at θ̂ equals the raw score; SE = 1/√Σ P(1 − P)
    p = irf(theta_mle[inner], rasch.a_, rasch.b_)
    np.testing.assert_allclose(p.sum(axis=1), score[inner], atol=1e-6)
    np.testing.assert_allclose(se[inner], 1 / np.sqrt((p * (1 - p)).sum(axis=1)), rtol=1e-6)
    assert np.all(theta_mle[score == patterns.shape[1]] == np.inf)
    assert np.all(theta_mle[score == 0] == -np.inf)


def test_eap_ignores_unadministered_and_unestimated_items():
    a, b = np.array([1.0, 1.5, np.nan]), np.array([0.0, 0.5, 0.0])
    with_nan, _ = eap([[1, np.nan, 1]], a, b)
    alone, _ = eap([[1]], a[:1], b[:1])
    assert with_nan[0] == pytest.approx(alone[0])
    t, se = mle([[np.nan, np.nan, 1]], a, b)
    assert np.isnan(t[0]) and np.isnan(se[0])


def test_jml_reproduces_the_paper_setup():
    X, *_ = simulate(60, 15, seed=10, g=0.25)
    model = IRTModel("3pl", method="jml").fit(X)
    for name, values in (("a", model.a_), ("b", model.b_), ("g", model.g_), ("theta", model.theta_)):
        lo, hi = PAPER_BOUNDS[name]
        assert np.all((values >= lo - 1e-12) & (values <= hi + 1e-12))
    p = irf(model.theta_, model.a_, model.b_, model.g_)
    joint = np.sum(np.where(X == 1, np.log(p), np.log(1 - p)))
    assert model.loglik_ == pytest.approx(joint)
    assert model.n_params_ == 45 + 60
    assert np.all(np.isnan(model.a_se_))
