"""The logistic item response likelihood every IRT estimator evaluates: the item response function,
log P and log(1 − P) at a logit without overflow, their derivatives in the logit and the guessing
parameter, the normal quadrature over θ, and a respondent's test information. The models
(:mod:`~exampp.analysis.irt.models`) and the ability estimators (:mod:`~exampp.analysis.irt.abilities`)
both build on it."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit

Array = NDArray[np.float64]
TINY = 1e-300  # a probability's floor before a log or a division


def irf(theta: ArrayLike, a: ArrayLike, b: ArrayLike, g: ArrayLike = 0.0) -> Array:
    """P(correct) = g + (1 − g) / (1 + exp(−a (θ − b))); a 1-d θ gives (n_theta, n_items)."""
    theta = np.asarray(theta, dtype=float)
    if theta.ndim <= 1:
        theta = np.atleast_1d(theta)[:, None]
    g = np.asarray(g, dtype=float)
    return g + (1.0 - g) * expit(np.asarray(a, dtype=float) * (theta - np.asarray(b, dtype=float)))


def normal_quadrature(n: int) -> tuple[Array, Array]:
    """Gauss–Hermite nodes and weights for θ ~ N(0, 1) (weights sum to 1)."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(n)
    return nodes, weights / weights.sum()


def log_traces(z: Array, g: ArrayLike) -> tuple[Array, Array]:
    """log P and log(1 − P) at logits z = a θ + c, without overflow."""
    log_s = -np.logaddexp(0.0, -z)
    log_1ms = log_s - z  # log(1 − σ(z)) = log σ(z) − z
    g = np.asarray(g, dtype=float)
    if not np.any(g):
        return log_s, log_1ms
    with np.errstate(divide="ignore"):
        log_g = np.log(g)
    log_1mg = np.log1p(-g)
    return np.logaddexp(log_g, log_1mg + log_s), log_1mg + log_1ms


@dataclass(frozen=True)
class Derivatives:
    """∂ log P (``p_*``) and ∂ log(1 − P) (``q_*``) with respect to the logit z and to g."""
    p_z: Array
    q_z: Array
    p_g: Array
    q_g: Array
    p_zz: Array
    q_zz: Array
    p_zg: Array
    p_gg: Array
    q_gg: Array


def first_derivatives(z: Array, g: ArrayLike) -> tuple[Array, Array, Array, Array]:
    """∂ log P / ∂z, ∂ log(1 − P) / ∂z, ∂ log P / ∂g, ∂ log(1 − P) / ∂g."""
    g = np.asarray(g, dtype=float)
    s = expit(z)
    if not np.any(g):
        return 1.0 - s, -s, (1.0 - s) / np.maximum(s, 1e-150), np.broadcast_to(-1.0, z.shape)
    s_over_p = 1.0 / (1.0 + g * np.exp(np.minimum(-z, 700.0)))  # s/P, since P = s + g(1 − s)
    p = np.maximum(g + (1.0 - g) * s, 1e-150)  # p² must not underflow
    return (1.0 - g) * (1.0 - s) * s_over_p, -s, (1.0 - s) / p, np.broadcast_to(-1.0 / (1.0 - g), z.shape)


def derivatives(z: Array, g: ArrayLike) -> Derivatives:
    """First and second derivatives of log P and log(1 − P) (closed forms, see module docs)."""
    g = np.asarray(g, dtype=float)
    s = expit(z)
    p_z, q_z, p_g, q_g = first_derivatives(z, g)
    p = np.maximum(g + (1.0 - g) * s, 1e-150)
    return Derivatives(
        p_z=p_z, q_z=q_z, p_g=p_g, q_g=q_g,
        p_zz=p_z * (1.0 - 2.0 * s) - p_z**2, q_zz=-s * (1.0 - s),
        p_zg=-s * (1.0 - s) / p**2, p_gg=-(p_g**2), q_gg=np.broadcast_to(-1.0 / (1.0 - g) ** 2, z.shape),
    )


def respondent_information(theta: Array, a: Array, b: Array, g: Array, observed: Array) -> Array:
    """Σ over each respondent's administered items of a² (P − g)² / (1 − g)² · (1 − P) / P."""
    p = np.maximum(irf(theta, a, b, g), TINY)
    return (observed * a**2 * (p - g) ** 2 / (1 - g) ** 2 * (1 - p) / p).sum(axis=1)
