"""Hierarchical abilities: a system's θ as a sum of its components' effects (Guinet et al., eq. 4).

    θ_m = μ + Σ_k θ_{k, level_k(m)}

with one effect per level of each component (e.g. retriever, reranker, generator), from a
components table: a DataFrame with a ``system`` column and one column per component
(:func:`exampp.formats.systems.read_systems` reads one from a TSV file).

Identification: the effects of each component sum to zero over its levels (the last level's effect
is minus the sum of the others), so μ is the ability of the "average" system and each effect a
deviation from it; θ's scale is the item parameters' (θ ~ N(0, 1) in the fit that gave them).

Estimation: maximum likelihood of the responses with the item parameters fixed, over (μ, free
effects) by L-BFGS-B with the analytic gradient. The item parameters come from a fitted
``IRTModel`` or (a, b, g) arrays; without them ``IRTModel("2pl")`` is first fitted to the same
matrix (two stages, not a joint fit). SEs: inverse observed information of the constrained parameters
(Σ_j a_j² × the negative second derivative of each response's log-likelihood in θ, mapped through
the design matrix), mapped back to every level, the derived last level included.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import minimize

from exampp.analysis.irt.base import Estimator
from exampp.analysis.irt.likelihood import derivatives, log_traces
from exampp.analysis.irt.models import IRTModel
from exampp.errors import ExamppError

Array = NDArray[np.float64]


class ComponentsError(ExamppError, ValueError):
    """The components table does not fit the responses: systems missing, effects not identified."""


def _levels(systems: pd.DataFrame, system_ids: list[str], components: Sequence[str] | None) -> pd.DataFrame:
    """Each system's level of each component: rows ``system_ids``, columns ``components`` (default all)."""
    if "system" not in systems.columns:
        raise ComponentsError("the components table needs a 'system' column "
                              f"(has: {', '.join(map(repr, systems.columns))})")
    table = systems.astype(str).set_index("system")
    twice = sorted(set(table.index[table.index.duplicated()]))
    if twice:
        raise ComponentsError(f"system(s) listed twice in the components table: {', '.join(twice[:5])}")
    missing = [s for s in system_ids if s not in table.index]
    if missing:
        raise ComponentsError(f"no components for system(s) {', '.join(missing[:5])}"
                              + (f" and {len(missing) - 5} more" if len(missing) > 5 else ""))
    components = list(components) if components is not None else list(table.columns)
    absent = [c for c in components if c not in table.columns]
    if absent:
        raise ComponentsError(f"no component column(s) {', '.join(map(repr, absent))} in the components table "
                              f"(has: {', '.join(map(repr, table.columns))})")
    return table.loc[system_ids, components]


def _design(levels: pd.DataFrame) -> tuple[Array, Array, list[tuple[str, str]]]:
    """Design matrix of (μ, free effects), the map free → all effects, and (component, level) labels."""
    n = len(levels)
    columns, expand_blocks, labels = [np.ones((n, 1))], [], []
    for component in levels.columns:
        names = sorted(levels[component].unique())
        labels += [(component, name) for name in names]
        # sum-to-zero contrasts: L levels, L − 1 free effects, the last = −Σ the others
        contrast = np.vstack([np.eye(len(names) - 1), -np.ones((1, len(names) - 1))])
        index = levels[component].map({name: i for i, name in enumerate(names)}).to_numpy()
        columns.append(contrast[index])
        expand_blocks.append(contrast)
    design = np.hstack(columns)
    n_free = design.shape[1] - 1
    expand = np.zeros((1 + len(labels), 1 + n_free))  # rows: μ, then every level
    expand[0, 0] = 1.0
    row, col = 1, 1
    for block in expand_blocks:
        expand[row:row + block.shape[0], col:col + block.shape[1]] = block
        row, col = row + block.shape[0], col + block.shape[1]
    return design, expand, labels


class HierarchicalAbility(Estimator):
    """System abilities as μ + component effects, with the item parameters fixed (see the module docstring).

    :param components: The components table's columns to use (all by default).
    :param max_iter: The most L-BFGS-B iterations.
    :param tol: L-BFGS-B's gradient tolerance.
    """


    def __init__(self, components: Sequence[str] | None = None, max_iter: int = 1000, tol: float = 1e-8):
        self.components = components
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, X: pd.DataFrame | ArrayLike, systems: pd.DataFrame,
            items: IRTModel | tuple[ArrayLike, ArrayLike, ArrayLike] | None = None,
            system_ids: Sequence[str] | None = None) -> "HierarchicalAbility":
        """X: systems × items (0/1/NaN); a DataFrame's index (or ``system_ids``) names the rows.
        ``systems``: the components table (a ``system`` column, one column per component)."""
        if isinstance(X, pd.DataFrame):
            system_ids = [str(s) for s in X.index] if system_ids is None else list(system_ids)
            X = X.to_numpy(dtype=float)
        X = np.asarray(X, dtype=float)
        if system_ids is None:
            raise ValueError("name the systems: pass X as a DataFrame indexed by system, or system_ids")
        levels = _levels(systems, list(system_ids), self.components)
        if items is None:
            items = IRTModel("2pl").fit(X)
        a, b, g = (items.a_, items.b_, items.g_) if isinstance(items, IRTModel) else items
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        g = np.broadcast_to(np.asarray(g, dtype=float), a.shape)
        usable = np.isfinite(a) & np.isfinite(b) & np.isfinite(g)
        X, a, b, g = X[:, usable], a[usable], b[usable], g[usable]
        observed = ~np.isnan(X)
        right = np.where(observed, X, 0.0)
        wrong = observed - right

        design, expand, labels = _design(levels)
        if np.linalg.matrix_rank(design) < design.shape[1]:
            raise ComponentsError("component effects are not identified: some levels always occur together")

        def objective(beta: Array) -> tuple[float, Array]:
            z = a * ((design @ beta)[:, None] - b)
            log_p, log_q = log_traces(z, g)
            d = derivatives(z, g)
            by_theta = (a * (right * d.p_z + wrong * d.q_z)).sum(axis=1)
            return -float(np.sum(right * log_p + wrong * log_q)), -(design.T @ by_theta)

        result = minimize(objective, np.zeros(design.shape[1]), jac=True, method="L-BFGS-B",
                          bounds=[(-10.0, 10.0)] * design.shape[1],
                          options={"maxiter": self.max_iter, "gtol": self.tol, "ftol": 1e-15})
        beta = result.x
        theta = design @ beta
        d = derivatives(a * (theta[:, None] - b), g)
        info_theta = -(a**2 * (right * d.p_zz + wrong * d.q_zz)).sum(axis=1)
        cov = np.linalg.inv(design.T @ (info_theta[:, None] * design))
        effects = expand @ beta
        effect_se = np.sqrt(np.einsum("ij,jk,ik->i", expand, cov, expand))
        self.effects_ = pd.DataFrame({
            "component": ["intercept"] + [c for c, _ in labels],
            "level": [""] + [lvl for _, lvl in labels],
            "effect": effects,
            "se": effect_se,
        })
        self.theta_ = pd.Series(theta, index=list(system_ids), name="theta")
        self.theta_se_ = pd.Series(np.sqrt(np.einsum("ij,jk,ik->i", design, cov, design)), index=list(system_ids),
                                   name="se")
        self.loglik_ = -float(result.fun)
        self.converged_ = bool(result.success)
        self.n_iter_ = int(result.nit)
        return self
