"""The published LSAT6/LSAT7 MML fits of R's ltm and mirt, reproduced to two decimals.

Data: ../shared/data/irt/lsat{6,7}.tsv (Bock & Lieberman 1970; response-pattern frequencies of
1,000 examinees, as shipped with ltm (``LSAT`` = section 6) and mirt (``LSAT6``, ``LSAT7``)).
Sources of the expected numbers:

- LSAT6 2PL: ltm ``ltm(LSAT ~ z1)``, Rizopoulos (2006), "ltm: An R package for latent variable
  modeling and item response theory analyses", J. Stat. Softw. 17(5): log.Lik −2466.653,
  Dffclt −3.3597 −1.3696 −0.2799 −1.8659 −3.1236, Dscrmn 0.8254 0.7229 0.8905 0.6886 0.6575, std.err
  of Dffclt 0.8669 0.3073 0.0997 0.4341 0.8700 and of Dscrmn 0.2581 0.1867 0.2326 0.1852 0.2100
  (the summary as printed by ltm; reproduced e.g. in
  https://rstudio-pubs-static.s3.amazonaws.com/1049111_d258e411eefe4ba085e3bbc59b32dbeb.html).
  The same log-likelihood −2466.653 is printed by irtQ's ``est_irt(LSAT6, model = "2PLM")``
  (GitHub hwangQ/irtQ, reference/est_irt.md).
- LSAT6 1PL (common slope estimated, θ ~ N(0, 1)): mirt, GitHub philchalmers/mirt,
  reference/LSAT6.md, ``mirt(dat, 'F = 1-5 CONSTRAIN = (1-5, a1)')``: log-likelihood −2466.938,
  a1 = 0.755, d = 2.730 0.999 0.240 1.307 2.100 (mirt's intercept d = −a b); the same page shows
  ``itemtype = 'Rasch'`` (a = 1, free θ variance) reaching the same −2466.938.
- LSAT6 Rasch (a = 1, θ ~ N(0, 1)), ltm's ``rasch(LSAT, constraint = cbind(6, 1))``: irtQ
  ``est_irt(LSAT6, model = "1PLM", fix.a.1pl = TRUE, a.val.1pl = 1)``, GitHub hwangQ/irtQ,
  reference/est_irt.md: log-likelihood −2473.054, b = −2.87 −1.06 −0.26 −1.39 −2.22.
- LSAT7 2PL: mirt, GitHub philchalmers/mirt, reference/LSAT7.md, ``mirt(expand.table(LSAT7), 1)``:
  log-likelihood −2658.805, a1 = 0.988 1.081 1.706 0.765 0.736, d = 1.856 0.808 1.804 0.486 1.855.

mirt and ltm stop at a tolerance of 1e-4 and integrate with 61 rectangular / 21 Gauss–Hermite
points; the comparisons are to two decimals (|difference| < 0.005), the log-likelihood to 0.01.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import shared_path
from exampp.analysis.irt import IRTModel

TWO_DECIMALS = 0.005


def _patterns(name: str) -> tuple[np.ndarray, np.ndarray]:
    path = shared_path("data", "irt", f"{name}.tsv")
    table = np.loadtxt(path, delimiter="\t", skiprows=1)
    return table[:, :5], table[:, 5]


@pytest.fixture(scope="module")
def lsat6():
    return _patterns("lsat6")


@pytest.fixture(scope="module")
def lsat7():
    return _patterns("lsat7")


def test_lsat6_2pl_matches_ltm(lsat6):
    X, freq = lsat6
    model = IRTModel("2pl").fit(X, sample_weight=freq)
    assert model.converged_
    assert model.loglik_ == pytest.approx(-2466.653, abs=0.01)
    np.testing.assert_allclose(model.b_, [-3.3597, -1.3696, -0.2799, -1.8659, -3.1236], atol=TWO_DECIMALS)
    np.testing.assert_allclose(model.a_, [0.8254, 0.7229, 0.8905, 0.6886, 0.6575], atol=TWO_DECIMALS)
    # ltm's standard errors: inverse of the numerical Hessian of the marginal log-likelihood
    np.testing.assert_allclose(model.b_se_, [0.8669, 0.3073, 0.0997, 0.4341, 0.8700], atol=TWO_DECIMALS)
    np.testing.assert_allclose(model.a_se_, [0.2581, 0.1867, 0.2326, 0.1852, 0.2100], atol=TWO_DECIMALS)
    assert model.aic_ == pytest.approx(4953.307, abs=0.02)  # ltm's AIC and BIC (10 parameters)
    assert model.bic_ == pytest.approx(5002.384, abs=0.02)


def test_lsat6_common_slope_matches_mirt(lsat6):
    X, freq = lsat6
    model = IRTModel("1pl").fit(X, sample_weight=freq)
    assert model.loglik_ == pytest.approx(-2466.938, abs=0.01)
    np.testing.assert_allclose(model.a_, 0.755, atol=TWO_DECIMALS)
    np.testing.assert_allclose(-model.a_ * model.b_, [2.730, 0.999, 0.240, 1.307, 2.100], atol=TWO_DECIMALS)
    assert model.n_params_ == 6


def test_lsat6_rasch_matches_ltm_constraint(lsat6):
    X, freq = lsat6
    model = IRTModel("rasch").fit(X, sample_weight=freq)
    assert model.loglik_ == pytest.approx(-2473.054, abs=0.01)
    np.testing.assert_allclose(model.b_, [-2.87, -1.06, -0.26, -1.39, -2.22], atol=0.01)  # the source prints 2 decimals
    assert np.all(model.a_ == 1.0) and np.all(np.isnan(model.a_se_))


def test_lsat7_2pl_matches_mirt(lsat7):
    X, freq = lsat7
    model = IRTModel("2pl").fit(X, sample_weight=freq)
    assert model.loglik_ == pytest.approx(-2658.805, abs=0.01)
    np.testing.assert_allclose(model.a_, [0.988, 1.081, 1.706, 0.765, 0.736], atol=TWO_DECIMALS)
    np.testing.assert_allclose(-model.a_ * model.b_, [1.856, 0.808, 1.804, 0.486, 1.855], atol=TWO_DECIMALS)


def test_pattern_frequencies_equal_expanded_rows(lsat7):
    X, freq = lsat7
    expanded = np.repeat(X, freq.astype(int), axis=0)
    by_weight = IRTModel("2pl").fit(X, sample_weight=freq)
    by_rows = IRTModel("2pl").fit(expanded)
    assert by_rows.loglik_ == pytest.approx(by_weight.loglik_, abs=1e-6)
    np.testing.assert_allclose(by_rows.a_, by_weight.a_, atol=1e-4)
    np.testing.assert_allclose(by_rows.b_, by_weight.b_, atol=1e-4)
