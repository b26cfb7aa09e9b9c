"""Respondents' abilities θ given item parameters: EAP with posterior SD, or MLE with SE.

Items with a non-finite parameter (left out of a fit) and NaN responses are ignored.

- EAP: posterior mean and SD of θ under the N(0, 1) prior, by the same Gauss–Hermite quadrature as
  the MML fit.
- MLE: Fisher scoring from the EAP, steps capped at 1, θ kept within ±``THETA_MAX``; SE =
  1 / √(test information at θ̂) over the respondent's items. A respondent with every answer right
  (wrong) has no finite MLE: θ = +inf (−inf) and SE = inf; one with no answer gets NaN.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp

from exampp.analysis.irt.likelihood import TINY, derivatives, log_traces, normal_quadrature, respondent_information

THETA_MAX = 10.0

Array = NDArray[np.float64]


def _responses(X: ArrayLike, a: ArrayLike, b: ArrayLike, g: ArrayLike
               ) -> tuple[Array, Array, Array, Array, Array, Array]:
    """0/1 right and wrong indicators over the usable items, with those items' a, b, g."""
    X = np.asarray(X, dtype=float)
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    g = np.broadcast_to(np.asarray(g, dtype=float), a.shape)
    if X.ndim != 2 or X.shape[1] != a.shape[0]:
        raise ValueError(f"responses of shape {X.shape} do not match {a.shape[0]} items")
    usable = np.isfinite(a) & np.isfinite(b) & np.isfinite(g)
    X = X[:, usable]
    observed = ~np.isnan(X)
    right = np.where(observed, X, 0.0)
    return right, observed - right, a[usable], b[usable], g[usable], observed.astype(float)


def eap(X: ArrayLike, a: ArrayLike, b: ArrayLike, g: ArrayLike = 0.0, n_quadrature: int = 41) -> tuple[Array, Array]:
    """EAP estimate and posterior SD of θ for each row of X."""
    right, wrong, a, b, g, _ = _responses(X, a, b, g)
    nodes, weights = normal_quadrature(n_quadrature)
    log_p, log_q = log_traces(np.outer(nodes, a) - a * b, g)
    joint = right @ log_p.T + wrong @ log_q.T + np.log(weights)
    post = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))
    mean = post @ nodes
    return mean, np.sqrt(np.maximum(post @ nodes**2 - mean**2, 0.0))


def mle(X: ArrayLike, a: ArrayLike, b: ArrayLike, g: ArrayLike = 0.0, max_iter: int = 100,
        tol: float = 1e-8) -> tuple[Array, Array]:
    """Maximum-likelihood θ and its standard error for each row of X."""
    right, wrong, a, b, g, observed = _responses(X, a, b, g)
    theta, _ = eap(np.where(observed > 0, right, np.nan), a, b, g)
    for _ in range(max_iter):
        z = a * (theta[:, None] - b)
        d = derivatives(z, g)
        score = (a * (right * d.p_z + wrong * d.q_z)).sum(axis=1)
        step = np.clip(score / np.maximum(respondent_information(theta, a, b, g, observed), TINY), -1.0, 1.0)
        theta = np.clip(theta + step, -THETA_MAX, THETA_MAX)
        if np.max(np.abs(step), initial=0.0) < tol:
            break
    with np.errstate(divide="ignore"):
        se = 1.0 / np.sqrt(respondent_information(theta, a, b, g, observed))
    n_right, n_seen = right.sum(axis=1), observed.sum(axis=1)
    theta[n_right == n_seen], se[n_right == n_seen] = np.inf, np.inf
    theta[n_right == 0], se[n_right == 0] = -np.inf, np.inf
    theta[n_seen == 0], se[n_seen == 0] = np.nan, np.nan
    return theta, se

