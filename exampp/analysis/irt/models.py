"""Logistic IRT models for 0/1 responses: Rasch, 1PL, 2PL, 3PL.

Item response function (Guinet et al., eq. 1; a = discrimination, b = difficulty, g = guessing):

    P(X=1 | θ) = g + (1 − g) σ(a (θ − b)),    computed as σ(a θ + c) with the intercept c = −a b

(mirt's slope–intercept form, ``d`` there). ``IRTModel`` is scikit-learn style: configured in
``__init__``, learns in ``fit``, fitted attributes end with ``_``; ``fit`` never mutates its input.

Identification: θ ~ N(0, 1) for every model. "2pl"/"3pl": a, c (and g) free per item. "1pl": one
common a, estimated; this is ltm's ``rasch(LSAT)`` and mirt's equal-slopes model, and the same
likelihood as mirt's ``itemtype="Rasch"`` (a = 1 and a free variance of θ: σ there is our a).
"rasch": a = 1 and θ ~ N(0, 1), as ltm's ``rasch(data, constraint = cbind(p + 1, 1))``.

method="mml" (default): marginal maximum likelihood over θ ~ N(0, 1), integrated by Gauss–Hermite
quadrature (``n_quadrature`` nodes of numpy's ``hermite_e``, weights normalised to 1). Bock–Aitkin
EM: the E-step gives the expected counts r (correct) and n (administered) at each node and item, the
M-step maximises Σ r log P + (n − r) log(1 − P) by L-BFGS-B over all item parameters with its
analytic gradient. Once EM's log-likelihood gain falls below 1e-4 of it per iteration (EM is linear and
slow near the optimum), L-BFGS-B runs on the marginal log-likelihood itself, whose gradient is the
same expected-count gradient at the current posterior (Fisher's identity), until the projected
gradient is below ``tol`` × Σ weights. Priors (MAP): ``prior_a`` = (meanlog, sdlog) of a lognormal on
a, None for plain ML, or "auto" (the default, resolved at ``fit`` into ``prior_a_``): lognormal
(0, 0.5) for 2PL/3PL by MML when the respondents' summed weight is below 100 — there plain ML drives
discriminations to their bounds (on DL19's 36 systems 191 of 315 slopes) — else none, so that
fits of larger samples are plain ML, comparable with mirt/ltm. ``prior_g`` = Beta(α, β) on an
estimated g (default (5, 17), mean 0.23). Bounds: |a| ≤ 10 (a > 0 with a prior), |c| ≤ 30,
1e-4 ≤ g ≤ 0.95.

Standard errors (MML): inverse of the observed information of the marginal log-likelihood (plus the
priors), by Louis' method — complete-data information minus the posterior covariance of the
complete-data scores, summed over respondents; exact and dense while respondents × nodes × parameters
stays small (``_FULL_INFORMATION_LIMIT``), otherwise its item-diagonal blocks only (cross-item
terms dropped; the common a of "1pl" kept exactly through the arrow-shaped inverse). SE(b) by the
delta method from b = −c/a. ``standard_errors=False`` leaves them out (NaN): a bootstrap that
refits for θ alone spends a quarter of each fit on them.

method="jml": the paper's joint maximum likelihood (Guinet et al.): θ per respondent and the item
parameters together by L-BFGS-B from θ=0, a=1, b=0, g=0.25 within 0.1≤a≤1.5, 0.01≤b≤1,
0.2≤g≤0.4, −3≤θ≤3 (for "2pl"/"1pl"/"rasch" g = 0). Biased and inconsistent; kept to reproduce the
paper: no item standard errors (NaN), θ's SE from the test information at θ̂.

Items nobody answered, or that every respondent got right (wrong), have no finite ML estimate: they
are left out of the estimation, reported in ``item_status_`` ("no responses", "all correct",
"all wrong") and get NaN parameters; the other items are estimated as usual.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, cast

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import minimize
from scipy.special import logsumexp
from threadpoolctl import threadpool_limits

from exampp.analysis.irt.abilities import eap, mle
from exampp.analysis.irt.base import Estimator
from exampp.analysis.irt.likelihood import (
    Array,
    derivatives,
    first_derivatives,
    irf,
    log_traces,
    normal_quadrature,
    respondent_information,
)
from exampp.errors import ExamppError

MODELS = ("rasch", "1pl", "2pl", "3pl")
METHODS = ("mml", "jml")
A_MAX, C_MAX, G_BOUNDS = 10.0, 30.0, (1e-4, 0.95)
EM_SWITCH = 1e-4  # relative log-likelihood gain per EM iteration below which L-BFGS-B takes over
PAPER_BOUNDS = {"a": (0.1, 1.5), "b": (0.01, 1.0), "g": (0.2, 0.4), "theta": (-3.0, 3.0)}
PAPER_INIT = {"theta": 0.0, "a": 1.0, "b": 0.0, "g": 0.25}
_FULL_INFORMATION_LIMIT = 20_000_000  # respondents × nodes × parameters for the dense Louis matrix
SMALL_SAMPLE = 100  # summed respondent weight below which prior_a="auto" puts a prior on a
DEFAULT_PRIOR_A = (0.0, 0.5)  # the lognormal (meanlog, sdlog) prior_a="auto" chooses

Prior = tuple[float, float]
# the inverse information: ("full", the covariance of the free vector), or ("block", (each item's 3 x 3
# block over (c, a, g), the common a's prior term))
Covariance = tuple[Literal["full"], Array] | tuple[Literal["block"], tuple[Array, float]]
PriorSetting = Prior | Literal["auto"] | None
"""``prior_a``: a lognormal (meanlog, sdlog), "auto" (by sample size) or None (plain ML)."""

# ---------------------------------------------------------------------------------------------
# data


@dataclass(frozen=True)
class _Data:
    x: Array  # (N, J) 1 where observed correct, else 0
    wrong: Array  # (N, J) 1 where observed wrong, else 0
    observed: Array  # (N, J) 0/1
    weight: Array  # (N,)


def _prepare(X: ArrayLike, sample_weight: ArrayLike | None) -> _Data:
    X = np.array(X.to_numpy() if isinstance(X, pd.DataFrame) else X, dtype=float)  # a copy
    if X.ndim != 2:
        raise ValueError(f"responses must be a 2-d (respondents × items) matrix, got shape {X.shape}")
    observed = ~np.isnan(X)
    if np.any((X[observed] != 0.0) & (X[observed] != 1.0)):
        raise ValueError("responses must be 0, 1 or NaN (not administered)")
    x = np.where(observed, X, 0.0)
    if sample_weight is None:
        weight = np.ones(X.shape[0])
    else:
        weight = np.asarray(sample_weight, dtype=float)
        if weight.shape != (X.shape[0],) or np.any(weight < 0) or not np.all(np.isfinite(weight)):
            raise ValueError("sample_weight must be one finite, non-negative weight per respondent")
    obs = observed.astype(float)
    return _Data(x=x, wrong=obs - x, observed=obs, weight=weight)


def item_status(data: _Data) -> NDArray[np.object_]:
    """Per item: "ok", "all correct", "all wrong" or "no responses" (weighted counts)."""
    n = data.weight @ data.observed
    right = data.weight @ data.x
    return np.select([n <= 0, right >= n, right <= 0], ["no responses", "all correct", "all wrong"],
                     "ok").astype(object)


def _subset(data: _Data, items: NDArray[np.bool_]) -> _Data:
    return _Data(data.x[:, items], data.wrong[:, items], data.observed[:, items], data.weight)


# ---------------------------------------------------------------------------------------------
# parameter layout


@dataclass(frozen=True)
class _Layout:
    """Free-parameter vector [c_1..c_J, a (J, 1 or 0 entries), g (J or 0 entries)]."""
    model: str
    n_items: int
    fixed_g: float | None

    @property
    def n_a(self) -> int:
        return {"rasch": 0, "1pl": 1}.get(self.model, self.n_items)

    @property
    def n_g(self) -> int:
        return self.n_items if self.model == "3pl" and self.fixed_g is None else 0

    @property
    def size(self) -> int:
        return self.n_items + self.n_a + self.n_g

    def unpack(self, v: Array) -> tuple[Array, Array, Array]:
        """Per-item (a, c, g) from the free vector."""
        J = self.n_items
        c = v[:J]
        a = np.ones(J) if self.n_a == 0 else np.broadcast_to(v[J:J + self.n_a], (J,)).astype(float)
        if self.n_g:
            g = v[J + self.n_a:]
        else:
            g = np.full(J, self.fixed_g if self.model == "3pl" else 0.0)
        return a, c, g

    def pack(self, a: Array, c: Array, g: Array) -> Array:
        parts: list[ArrayLike] = [c]
        if self.n_a == 1:
            parts.append([float(np.mean(a))])
        elif self.n_a:
            parts.append(a)
        if self.n_g:
            parts.append(g)
        return np.concatenate([np.asarray(p, dtype=float) for p in parts])

    def reduce(self, by_c: Array, by_a: Array, by_g: Array) -> Array:
        """Per-item derivatives → derivatives for the free vector (chain rule)."""
        parts: list[ArrayLike] = [by_c]
        if self.n_a == 1:
            parts.append([by_a.sum()])
        elif self.n_a:
            parts.append(by_a)
        if self.n_g:
            parts.append(by_g)
        return np.concatenate([np.asarray(p, dtype=float) for p in parts])

    def bounds(self, positive_a: bool) -> list[tuple[float, float]]:
        a_bounds = (1e-3, A_MAX) if positive_a else (-A_MAX, A_MAX)
        return [(-C_MAX, C_MAX)] * self.n_items + [a_bounds] * self.n_a + [G_BOUNDS] * self.n_g

    def jacobian(self) -> Array:
        """d(per-item [c; a; g]) / d(free vector), shape (3J, size)."""
        J = self.n_items
        jac = np.zeros((3 * J, self.size))
        jac[np.arange(J), np.arange(J)] = 1.0
        if self.n_a == 1:
            jac[J:2 * J, J] = 1.0
        elif self.n_a:
            jac[J + np.arange(J), J + np.arange(J)] = 1.0
        if self.n_g:
            jac[2 * J + np.arange(J), J + self.n_a + np.arange(J)] = 1.0
        return jac


# ---------------------------------------------------------------------------------------------
# priors (MAP); value, gradient and second derivative per free entry


def _lognormal(a: Array, meanlog: float, sdlog: float) -> tuple[float, Array, Array]:
    la = np.log(a)
    u = (la - meanlog) / sdlog**2
    return (float(np.sum(-la - (la - meanlog) ** 2 / (2 * sdlog**2))), -1.0 / a - u / a,
            (1.0 - (1.0 - (la - meanlog)) / sdlog**2) / a**2)


def _beta(g: Array, alpha: float, beta: float) -> tuple[float, Array, Array]:
    value = np.sum((alpha - 1) * np.log(g) + (beta - 1) * np.log1p(-g))
    return float(value), (alpha - 1) / g - (beta - 1) / (1 - g), -(alpha - 1) / g**2 - (beta - 1) / (1 - g) ** 2


# ---------------------------------------------------------------------------------------------
# the estimator


class NothingToEstimate(ExamppError, ValueError):
    """No item of the responses has both right and wrong answers (a τ above the grade scale, say)."""


class IRTModel(Estimator):
    """Unidimensional logistic IRT model fitted by MML (EM, Gauss–Hermite) or the paper's JML.

    The module docstring says what each setting does.

    :param model: ``rasch``, ``1pl``, ``2pl`` or ``3pl``.
    :param method: ``mml`` (marginal maximum likelihood) or ``jml`` (the paper's joint maximum likelihood).
    :param guessing: A fixed guessing parameter g of ``3pl``, in [0, 1); None estimates it.
        The other models have g = 0.
    :param n_quadrature: The number of Gauss–Hermite nodes (MML).
    :param max_iter: The most iterations of EM, and of each L-BFGS-B run.
    :param tol: L-BFGS-B stops when the projected gradient is below ``tol`` × Σ weights.
    :param prior_a: A lognormal (meanlog, sdlog) prior on a, None for plain ML, or ``auto`` (by
        sample size: lognormal (0, 0.5) for 2PL/3PL by MML when the summed weight is below 100).
    :param prior_g: A Beta(α, β) prior on an estimated g; None for none.
    :param standard_errors: Compute the item parameters' standard errors (else NaN).
    """


    # per item, set by fit (NaN for the items left out of the estimation)
    a_: Array
    b_: Array
    g_: Array
    a_se_: Array
    b_se_: Array
    g_se_: Array

    def __init__(self, model: str = "2pl", method: str = "mml", guessing: float | None = None,
                 n_quadrature: int = 41, max_iter: int = 500, tol: float = 1e-6,
                 prior_a: PriorSetting = "auto", prior_g: Prior | None = (5.0, 17.0),
                 standard_errors: bool = True):
        self.model = model
        self.method = method
        self.guessing = guessing
        self.n_quadrature = n_quadrature
        self.max_iter = max_iter
        self.tol = tol
        self.prior_a = prior_a
        self.prior_g = prior_g
        self.standard_errors = standard_errors

    # -- public API ---------------------------------------------------------------------------

    def fit(self, X: ArrayLike, sample_weight: ArrayLike | None = None,
            init: Mapping[str, ArrayLike] | None = None) -> "IRTModel":
        """Fit to X (respondents × items; 1 right, 0 wrong, NaN not administered).

        ``sample_weight``: respondent (pattern) frequencies. ``init``: starting ``a``/``b``/``g``
        per item (e.g. a previous fit; non-finite entries fall back to the defaults)."""
        self._check()
        data = _prepare(X, sample_weight)
        status = item_status(data)
        keep = status == "ok"
        if not keep.any():
            raise NothingToEstimate("no item has both right and wrong responses: nothing to estimate")
        prior_a = self._resolve_prior_a(float(data.weight.sum()))
        sub = _subset(data, keep)
        layout = _Layout(self.model, int(keep.sum()), self._fixed_g())
        start = self._start(layout, sub, init, keep)
        # An exam's matrices are small: BLAS threads would only wait for each other, and on a busy
        # machine spin for their turn (DL19's fit took 2.3x as long with the default threads under load).
        with threadpool_limits(1):
            fit = (self._fit_jml(layout, sub, start) if self.method == "jml"
                   else self._fit_mml(layout, sub, start, prior_a))
        self._store(layout, data, keep, status, fit)
        self.prior_a_ = prior_a
        return self

    def abilities(self, X: ArrayLike, method: str = "eap") -> tuple[Array, Array]:
        """θ of each respondent of X with the fitted items: EAP and posterior SD, or MLE and SE."""

        X = np.asarray(X.to_numpy() if isinstance(X, pd.DataFrame) else X, dtype=float)
        if method == "eap":
            return eap(X, self.a_, self.b_, self.g_, n_quadrature=self.n_quadrature)
        if method == "mle":
            return mle(X, self.a_, self.b_, self.g_)
        raise ValueError(f"unknown ability method {method!r}: use 'eap' or 'mle'")

    def probability(self, theta: ArrayLike) -> Array:
        """P(correct) for each θ and item, shape (n_theta, n_items); NaN for excluded items."""
        return irf(theta, self.a_, self.b_, self.g_)

    # -- configuration ------------------------------------------------------------------------

    def _check(self) -> None:
        if self.model not in MODELS:
            raise ValueError(f"unknown model {self.model!r}: use one of {', '.join(MODELS)}")
        if self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r}: use one of {', '.join(METHODS)}")
        if self.guessing is not None and not 0.0 <= self.guessing < 1.0:
            raise ValueError("guessing must be in [0, 1)")
        if isinstance(self.prior_a, str) and self.prior_a != "auto":
            raise ValueError(f"unknown prior_a {self.prior_a!r}: use 'auto', None or (meanlog, sdlog)")
        if self.prior_a is not None and not isinstance(self.prior_a, str) and not (
                len(self.prior_a) == 2 and np.isfinite(self.prior_a[0]) and self.prior_a[1] > 0):
            raise ValueError(f"prior_a must be (meanlog, sdlog) with sdlog > 0, got {self.prior_a!r}")

    def _resolve_prior_a(self, n: float) -> Prior | None:
        """The prior on a this fit uses, given the respondents' summed weight ``n`` (none where a
        is fixed, or by JML, which takes no priors)."""
        if self.model == "rasch" or self.method == "jml":
            return None
        if self.prior_a != "auto":
            return None if self.prior_a is None else (float(self.prior_a[0]), float(self.prior_a[1]))
        return DEFAULT_PRIOR_A if self.model in ("2pl", "3pl") and n < SMALL_SAMPLE else None

    def _fixed_g(self) -> float | None:
        return self.guessing if self.model == "3pl" else 0.0

    def _start(self, layout: _Layout, data: _Data, init: Mapping[str, ArrayLike] | None,
               keep: NDArray[np.bool_]) -> dict[str, Array]:
        J = layout.n_items
        if self.method == "jml":
            a = np.full(J, PAPER_INIT["a"] if self.model != "rasch" else 1.0)
            b = np.full(J, PAPER_INIT["b"])
            g = np.full(J, PAPER_INIT["g"] if layout.n_g else layout.unpack(np.zeros(layout.size))[2][0])
        else:
            g = np.full(J, 0.2 if layout.n_g else layout.unpack(np.zeros(layout.size))[2][0])
            a = np.ones(J)
            p = (data.weight @ data.x) / (data.weight @ data.observed)
            p = np.clip((p - g) / (1 - g), 0.02, 0.98)
            # marginal P ≈ σ(c / √(1 + π a²/8)) under θ ~ N(0, 1)
            b = -np.log(p / (1 - p)) * np.sqrt(1 + np.pi / 8)
        if init:
            for name, current in (("a", a), ("b", b), ("g", g)):
                if name in init and not (name == "a" and self.model == "rasch"):
                    given = np.asarray(init[name], dtype=float)
                    given = (np.broadcast_to(given, keep.shape)[keep] if given.ndim == 0 or given.shape == keep.shape
                             else given)
                    ok = np.isfinite(given)
                    current[ok] = given[ok]
        return {"a": a, "b": b, "g": g}

    # -- MML ----------------------------------------------------------------------------------

    def _prior(self, layout: _Layout, v: Array, prior_a: Prior | None) -> tuple[float, Array, Array]:
        """Log prior, its gradient and diagonal second derivative over the free vector."""
        value, grad, hess = 0.0, np.zeros(layout.size), np.zeros(layout.size)
        J = layout.n_items
        if prior_a is not None and layout.n_a:
            sl = slice(J, J + layout.n_a)
            val, gr, he = _lognormal(v[sl], *prior_a)
            value, grad[sl], hess[sl] = value + val, gr, he
        if self.prior_g is not None and layout.n_g:
            sl = slice(J + layout.n_a, layout.size)
            val, gr, he = _beta(v[sl], *self.prior_g)
            value, grad[sl], hess[sl] = value + val, gr, he
        return value, grad, hess

    def _fit_mml(self, layout: _Layout, data: _Data, start: dict[str, Array], prior_a: Prior | None) -> dict:
        nodes, weights = normal_quadrature(self.n_quadrature)
        log_w = np.log(weights)
        bounds = layout.bounds(prior_a is not None)
        v = np.clip(layout.pack(start["a"], -start["a"] * start["b"], start["g"]), *np.array(bounds).T)

        def e_step(v: Array) -> tuple[float, Array, Array, Array]:
            a, c, g = layout.unpack(v)
            log_p, log_q = log_traces(np.outer(nodes, a) + c, g)
            joint = data.x @ log_p.T + data.wrong @ log_q.T + log_w  # (N, Q)
            marginal = logsumexp(joint, axis=1)
            post = np.exp(joint - marginal[:, None])
            weighted = post * data.weight[:, None]
            return float(data.weight @ marginal), post, weighted.T @ data.x, weighted.T @ data.observed

        def complete(v: Array, r: Array, n: Array) -> tuple[float, Array]:
            a, c, g = layout.unpack(v)
            z = np.outer(nodes, a) + c
            log_p, log_q = log_traces(z, g)
            p_z, q_z, p_g, q_g = first_derivatives(z, g)
            by_z = r * p_z + (n - r) * q_z
            by_g = (r * p_g + (n - r) * q_g).sum(axis=0) if layout.n_g else np.zeros(0)
            value = float(np.sum(r * log_p + (n - r) * log_q))
            return value, layout.reduce(by_z.sum(axis=0), nodes @ by_z, by_g)

        def penalised(value: float, grad: Array, v: Array) -> tuple[float, Array]:
            p_value, p_grad, _ = self._prior(layout, v, prior_a)
            return -(value + p_value), -(grad + p_grad)

        trace: list[float] = []
        n_iter = 0
        for n_iter in range(1, self.max_iter + 1):
            loglik, _, r, n = e_step(v)
            trace.append(loglik + self._prior(layout, v, prior_a)[0])
            if len(trace) > 1 and trace[-1] - trace[-2] < EM_SWITCH * abs(trace[-1]):
                break
            def m_step(u: Array) -> tuple[float, Array]:  # this E-step's r and n
                return penalised(*complete(u, r, n), u)

            v = minimize(m_step, v, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 20}).x

        def marginal(u: Array) -> tuple[float, Array]:
            loglik, _, r, n = e_step(u)
            return penalised(loglik, complete(u, r, n)[1], u)

        gtol = self.tol * float(data.weight.sum())
        result = minimize(marginal, v, jac=True, method="L-BFGS-B", bounds=bounds,
                          options={"maxiter": self.max_iter, "gtol": gtol, "ftol": 1e-15, "maxcor": 20})
        v = result.x
        loglik, post, r, n = e_step(v)
        trace.append(loglik + self._prior(layout, v, prior_a)[0])
        grad_norm = float(np.max(np.abs(self._projected(marginal(v)[1], v, bounds))))
        cov = self._covariance(layout, data, v, post, r, n, nodes, prior_a) if self.standard_errors else None
        return {"v": v, "loglik": loglik, "trace": trace, "n_iter": n_iter + result.nit,
                "converged": bool(result.success or grad_norm <= gtol), "cov": cov,
                "theta": post @ nodes, "theta_se": np.sqrt(np.maximum(post @ nodes**2 - (post @ nodes) ** 2, 0.0)),
                "n_params": layout.size}

    @staticmethod
    def _projected(grad: Array, v: Array, bounds: list[tuple[float, float]]) -> Array:
        lo, hi = np.array(bounds).T
        return np.where(((v <= lo) & (grad > 0)) | ((v >= hi) & (grad < 0)), 0.0, grad)

    def _covariance(self, layout: _Layout, data: _Data, v: Array, post: Array, r: Array, n: Array,
                    nodes: Array, prior_a: Prior | None) -> Covariance:
        """Inverse observed information by Louis' method; ("full", cov) or ("block", blocks)."""
        a, c, g = layout.unpack(v)
        z = np.outer(nodes, a) + c
        d = derivatives(z, g)
        th = nodes[:, None]
        # the parameter kinds this model estimates: 0 = c, 1 = a, 2 = g
        kinds = [0] + ([1] if layout.n_a else []) + ([2] if layout.n_g else [])
        first_p = [d.p_z, th * d.p_z, d.p_g]  # ∂ log P by c, a, g at each node and item
        first_q = [d.q_z, th * d.q_z, d.q_g]
        zero = np.zeros_like(z)
        second_p = [[d.p_zz, th * d.p_zz, d.p_zg], [th * d.p_zz, th**2 * d.p_zz, th * d.p_zg],
                    [d.p_zg, th * d.p_zg, d.p_gg]]
        second_q = [[d.q_zz, th * d.q_zz, zero], [th * d.q_zz, th**2 * d.q_zz, zero], [zero, zero, d.q_gg]]
        J = layout.n_items
        # complete-data information, item-diagonal: −Σ_q r ∂² log P + (n − r) ∂² log(1 − P)
        complete = np.array([[-(r * second_p[k][m] + (n - r) * second_q[k][m]).sum(axis=0) for m in kinds]
                             for k in kinds])
        # posterior means of each respondent's complete-data scores, (kinds, N, J)
        mean_u = np.array([data.x * (post @ first_p[k]) + data.wrong * (post @ first_q[k]) for k in kinds])
        rows = np.concatenate([np.arange(k * J, (k + 1) * J) for k in kinds])
        jac = layout.jacobian()[rows]
        _, _, prior_hess = self._prior(layout, v, prior_a)
        n_resp, n_nodes = post.shape
        if n_resp * n_nodes * layout.size <= _FULL_INFORMATION_LIMIT:
            K = len(kinds)
            info = np.zeros((K * J, K * J))
            for k in range(K):
                for m in range(K):
                    info[k * J:(k + 1) * J, m * J:(m + 1) * J] = np.diag(complete[k, m])
            # posterior covariance of the complete-data scores, all items together
            u = np.concatenate([data.x[:, None, :] * first_p[k][None] + data.wrong[:, None, :] * first_q[k][None]
                                for k in kinds], axis=2) @ jac  # (N, Q, size)
            root = np.sqrt(post * data.weight[:, None])[:, :, None] * u
            flat = root.reshape(-1, layout.size)
            mean_free = np.concatenate(list(mean_u), axis=1) @ jac
            cov_u = flat.T @ flat - (mean_free * data.weight[:, None]).T @ mean_free
            info_free = jac.T @ info @ jac - cov_u - np.diag(prior_hess)
            return "full", _safe_inverse(info_free)
        # item-diagonal blocks: Σ_q r A_k A_m + (n − r) B_k B_m − Σ_i w ū_k ū_m
        second_moment = np.array([[(r * first_p[k] * first_p[m] + (n - r) * first_q[k] * first_q[m]).sum(axis=0)
                                   for m in kinds] for k in kinds])
        outer = np.einsum("kij,mij,i->kmj", mean_u, mean_u, data.weight)
        blocks = np.full((J, 3, 3), np.nan)  # over (c, a, g); NaN where not estimated
        # index arrays, as ix_ makes of lists (numpy's stubs take arrays only)
        at = np.ix_(np.arange(J), np.asarray(kinds), np.asarray(kinds))
        blocks[at] = np.moveaxis(complete - second_moment + outer, 2, 0)
        J_idx = np.arange(J)
        if layout.n_g:
            blocks[:, 2, 2] -= prior_hess[J + layout.n_a + J_idx]
        if layout.n_a == J:
            blocks[:, 1, 1] -= prior_hess[J + J_idx]
        return "block", (blocks, float(prior_hess[J]) if layout.n_a == 1 else 0.0)

    # -- JML (the paper) ----------------------------------------------------------------------

    def _fit_jml(self, layout: _Layout, data: _Data, start: dict[str, Array]) -> dict:
        N, J = data.x.shape
        n_a, n_g = layout.n_a, layout.n_g
        fixed_g = layout.unpack(np.zeros(layout.size))[2]

        def unpack(u: Array) -> tuple[Array, Array, Array, Array]:
            theta, b = u[:N], u[N:N + J]
            a = np.ones(J) if n_a == 0 else np.broadcast_to(u[N + J:N + J + n_a], (J,))
            g = u[N + J + n_a:] if n_g else fixed_g
            return theta, a, b, g

        def objective(u: Array) -> tuple[float, Array]:
            theta, a, b, g = unpack(u)
            z = a * (theta[:, None] - b)
            log_p, log_q = log_traces(z, g)
            w = data.weight[:, None]
            value = float(np.sum(w * (data.x * log_p + data.wrong * log_q)))
            d = derivatives(z, g)
            by_z = w * (data.x * d.p_z + data.wrong * d.q_z)
            parts = [by_z @ a, -a * by_z.sum(axis=0)]
            by_a = (by_z * (theta[:, None] - b)).sum(axis=0)
            if n_a == 1:
                parts.append([by_a.sum()])
            elif n_a:
                parts.append(by_a)
            if n_g:
                parts.append((w * (data.x * d.p_g + data.wrong * d.q_g)).sum(axis=0))
            return -value, -np.concatenate([np.asarray(p, dtype=float) for p in parts])

        starts: list[ArrayLike] = [np.full(N, PAPER_INIT["theta"]), start["b"]]
        if n_a:
            starts.append(start["a"][:n_a] if n_a == J else [start["a"][0]])
        if n_g:
            starts.append(start["g"])
        bounds = ([PAPER_BOUNDS["theta"]] * N + [PAPER_BOUNDS["b"]] * J + [PAPER_BOUNDS["a"]] * n_a
                  + [PAPER_BOUNDS["g"]] * n_g)
        u0 = np.clip(np.concatenate([np.asarray(p, dtype=float) for p in starts]), *np.array(bounds).T)
        result = minimize(objective, u0, jac=True, method="L-BFGS-B", bounds=bounds,
                          options={"maxiter": self.max_iter, "maxfun": 20 * self.max_iter})
        theta, a, b, g = unpack(result.x)
        info = respondent_information(theta, a, b, g, data.observed)
        with np.errstate(divide="ignore"):
            theta_se = 1.0 / np.sqrt(info)
        return {"a": np.array(a), "b": b, "g": np.array(g), "loglik": -float(result.fun), "trace": [-float(result.fun)],
                "n_iter": int(result.nit), "converged": bool(result.success), "cov": None,
                "theta": theta, "theta_se": theta_se, "n_params": layout.size + N}

    # -- results ------------------------------------------------------------------------------

    def _store(self, layout: _Layout, data: _Data, keep: NDArray[np.bool_], status: NDArray[np.object_],
               fit: dict) -> None:
        J_all = keep.size
        if "a" in fit:  # JML stores (a, b, g) directly
            a, b, g = fit["a"], fit["b"], fit["g"]
        else:
            a, c, g = layout.unpack(fit["v"])
            b = -c / a
        a_se, b_se, g_se = _standard_errors(layout, fit["cov"], a, -a * b)
        for name, values in (("a_", a), ("b_", b), ("g_", g), ("a_se_", a_se), ("b_se_", b_se), ("g_se_", g_se)):
            full = np.full(J_all, np.nan)
            full[keep] = values
            setattr(self, name, full)
        self.item_status_ = status
        self.loglik_ = fit["loglik"]
        self.loglik_trace_ = np.array(fit["trace"])
        self.n_iter_ = fit["n_iter"]
        self.converged_ = fit["converged"]
        self.theta_ = fit["theta"]
        self.theta_se_ = fit["theta_se"]
        self.n_params_ = fit["n_params"]
        self.aic_ = 2 * self.n_params_ - 2 * self.loglik_
        self.bic_ = self.n_params_ * np.log(data.weight.sum()) - 2 * self.loglik_


def _safe_inverse(info: Array) -> Array:
    try:
        return cast(Array, np.linalg.inv(info))  # float64 in, float64 out (numpy's stubs say any float)
    except np.linalg.LinAlgError:
        return np.full_like(info, np.nan)


def _standard_errors(layout: _Layout, cov: Covariance | None, a: Array, c: Array) -> tuple[Array, Array, Array]:
    """SE of a, b (delta method, b = −c/a) and g; NaN where fixed or not available."""
    J = layout.n_items
    nan = np.full(J, np.nan)
    if cov is None:
        return nan, nan.copy(), nan.copy()
    if cov[0] == "full":
        full = layout.jacobian() @ cov[1] @ layout.jacobian().T  # per-item [c; a; g] covariance
        idx = np.arange(J)
        var_c, var_a, var_g = full[idx, idx], full[J + idx, J + idx], full[2 * J + idx, 2 * J + idx]
        cov_ca = full[idx, J + idx]
    else:
        blocks, common_a_prior = cov[1]
        if layout.n_a == 1:
            # arrow matrix [[diag(I_cc), I_ca], [I_caᵀ, Σ I_aa]]: invert by the Schur complement
            ratio = blocks[:, 0, 1] / blocks[:, 0, 0]
            var_common = 1.0 / (blocks[:, 1, 1].sum() - common_a_prior - np.sum(ratio * blocks[:, 0, 1]))
            var_a = np.full(J, var_common)
            var_c = 1.0 / blocks[:, 0, 0] + ratio**2 * var_common
            cov_ca = -ratio * var_common
            var_g = nan
        else:
            used = [0] + ([1] if layout.n_a else []) + ([2] if layout.n_g else [])
            inv = np.full((J, 3, 3), np.nan)
            try:
                # index arrays, as ix_ makes of lists (numpy's stubs take arrays only)
                at = np.ix_(np.arange(J), np.asarray(used), np.asarray(used))
                inv[at] = np.linalg.inv(blocks[at])
            except np.linalg.LinAlgError:
                pass
            var_c, var_a, var_g, cov_ca = inv[:, 0, 0], inv[:, 1, 1], inv[:, 2, 2], inv[:, 0, 1]
    if layout.n_a == 0:
        var_a, cov_ca = np.zeros(J), np.zeros(J)
    # b = −c/a: ∂b/∂c = −1/a, ∂b/∂a = c/a²
    var_b = var_c / a**2 + var_a * c**2 / a**4 - 2 * cov_ca * c / a**3
    with np.errstate(invalid="ignore"):
        a_se = np.sqrt(var_a) if layout.n_a else nan.copy()
        g_se = np.sqrt(var_g) if layout.n_g else nan.copy()
        return a_se, np.sqrt(var_b), g_se
