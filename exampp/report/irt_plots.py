"""Plots of IRT results: item characteristic curves, information curves, pruning steps.

Each ``*_figure`` function builds a :class:`matplotlib.figure.Figure` (no pyplot, so no global
state and no display needed) that callers can inspect or adjust; each ``plot_*`` function
writes that figure as a PNG of FIGSIZE × DPI pixels and returns its path.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from exampp.analysis.irt.information import item_arrays
from exampp.files.io import PathLike, atomic_write

FIGSIZE = (8.0, 5.0)  # inches
DPI = 100
THETA = np.linspace(-4.0, 4.0, 161)
"""Default ability grid for curves computed here."""
LEGEND_ITEMS = 8  # item curves named in a legend; more are coloured by difficulty
LABEL_CHARS = 16


def item_characteristic_figure(a: ArrayLike, b: ArrayLike, g: ArrayLike = 0.0,
                               labels: Sequence[str] | None = None, max_items: int = 20,
                               theta: ArrayLike = THETA) -> Figure:
    """P(correct | θ) per item; with more than ``max_items`` items, ``max_items`` spread evenly over
    difficulty. Up to :data:`LEGEND_ITEMS` curves are named in a legend (labels cut to
    :data:`LABEL_CHARS`); more are coloured by difficulty, read off a colour bar, without a legend
    (each curve keeps its label for those who read the figure's lines)."""
    a, b, g = item_arrays(a, b, g)
    theta = np.asarray(theta, dtype=float)
    if labels is not None and len(labels) != len(a):
        raise ValueError(f"{len(labels)} labels for {len(a)} items")
    shown = _spread(b, max_items)
    fig, ax = _axes()
    legend = len(shown) <= LEGEND_ITEMS
    if legend:
        colours = [f"C{k}" for k in range(len(shown))]
    else:  # 20 hash ids in a legend would take half the width: colour says the difficulty instead
        scale = Normalize(float(b[shown].min()), float(b[shown].max()))
        colours = colormaps["viridis"](scale(b[shown]))
    for i, colour in zip(shown, colours):
        p = g[i] + (1.0 - g[i]) / (1.0 + np.exp(-a[i] * (theta - b[i])))
        name = _short(labels[i]) if labels is not None else f"item {i}"
        ax.plot(theta, p, color=colour,
                label=f"{name} (a={a[i]:.2f}, b={b[i]:.2f}" + (f", g={g[i]:.2f})" if g[i] else ")"))
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("ability θ")
    ax.set_ylabel("P(correct)")
    subset = f" ({len(shown)} of {len(a)}, spread over difficulty)" if len(shown) < len(a) else ""
    ax.set_title("Item characteristic curves" + subset)
    if legend:
        _legend(ax)
    else:
        fig.colorbar(ScalarMappable(scale, "viridis"), ax=ax, label="difficulty b of the item")
    return fig


def _short(label: str) -> str:
    """An item label cut to :data:`LABEL_CHARS` characters (a query id and a hash would fill a legend)."""
    return label if len(label) <= LABEL_CHARS else label[:LABEL_CHARS - 1] + "…"


def information_figure(info_by_group: pd.DataFrame, title: str = "Information by question category") -> Figure:
    """One curve per group of :func:`~exampp.analysis.irt.information.information_by_group`'s table."""
    missing = {"theta", "group", "information", "n_items"} - set(info_by_group.columns)
    if missing:
        raise ValueError(f"info_by_group lacks columns {sorted(missing)}")
    fig, ax = _axes()
    for group, rows in info_by_group.groupby("group", sort=False):
        ax.plot(rows["theta"].to_numpy(), rows["information"].to_numpy(),
                label=f"{group} (n={int(rows['n_items'].iloc[0])})")
    ax.set_xlabel("ability θ")
    ax.set_ylabel("information (sum over the group's items)")
    ax.set_title(title)
    _legend(ax)
    return fig


def test_information_figure(theta: ArrayLike, curves: Mapping[str, ArrayLike],
                            title: str = "Test information") -> Figure:
    """Test information curves over one θ grid, e.g. of the exam before and after pruning."""
    theta = np.asarray(theta, dtype=float)
    fig, ax = _axes()
    for name, values in curves.items():
        values = np.asarray(values, dtype=float)
        if values.shape != theta.shape:
            raise ValueError(f"curve {name!r} has shape {values.shape}, theta {theta.shape}")
        ax.plot(theta, values, label=name)
    ax.set_xlabel("ability θ")
    ax.set_ylabel("test information")
    ax.set_title(title)
    _legend(ax)
    return fig


_INFORMATION_LABELS = {"information": "test information", "information_integral": "∫ test information dθ",
                       "information_mean": "mean test information"}


def pruning_steps_figure(steps: pd.DataFrame, column: str = "information") -> Figure:
    """Information (left axis, solid) and number of items (right axis, dashed) per pruning step.

    ``column`` names the information column: ``information``, or the pruning report's
    ``information_integral`` / ``information_mean``.
    """
    missing = {"step", "n_items", column} - set(steps.columns)
    if missing:
        raise ValueError(f"steps lacks columns {sorted(missing)}")
    information_label = _INFORMATION_LABELS.get(column, column)
    fig, ax = _axes()
    ax.plot(steps["step"].to_numpy(), steps[column].to_numpy(), "o-", color="C0", label=information_label)
    ax.set_xlabel("pruning step")
    ax.set_ylabel(information_label, color="C0")
    right = ax.twinx()
    right.plot(steps["step"].to_numpy(), steps["n_items"].to_numpy(), "s--", color="C1", label="items")
    right.set_ylabel("items in the exam", color="C1")
    ax.set_xticks(steps["step"].to_numpy())
    ax.set_title("Exam pruning")
    handles = ax.get_lines() + right.get_lines()
    ax.legend(handles, [h.get_label() for h in handles], loc="best")
    return fig


def plot_item_characteristic_curves(path: PathLike, a: ArrayLike, b: ArrayLike, g: ArrayLike = 0.0,
                                    labels: Sequence[str] | None = None, max_items: int = 20) -> Path:
    return _save(item_characteristic_figure(a, b, g, labels, max_items), path)


def plot_information_curves(path: PathLike, info_by_group: pd.DataFrame,
                            title: str = "Information by question category") -> Path:
    return _save(information_figure(info_by_group, title), path)


def plot_test_information(path: PathLike, theta: ArrayLike, curves: Mapping[str, ArrayLike]) -> Path:
    return _save(test_information_figure(theta, curves), path)


def plot_pruning_steps(path: PathLike, steps: pd.DataFrame, column: str = "information") -> Path:
    return _save(pruning_steps_figure(steps, column), path)


def _spread(b: np.ndarray, max_items: int) -> list[int]:
    """Indices of at most ``max_items`` items, evenly spaced in order of difficulty (all when few)."""
    if max_items < 1:
        raise ValueError(f"max_items must be >= 1, got {max_items}")
    order = np.argsort(b, kind="stable")
    if len(order) <= max_items:
        return order.tolist()
    return order[np.unique(np.linspace(0, len(order) - 1, max_items).round().astype(int))].tolist()


def _axes():
    fig = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    ax.grid(True, alpha=0.3)
    return fig, ax


def _legend(ax) -> None:
    # Many curves: a smaller font keeps the legend from covering them.
    n = len(ax.get_lines())
    if n:
        ax.legend(fontsize="small" if n > 8 else "medium", loc="best", ncols=2 if n > 10 else 1)


def _save(fig: Figure, path: PathLike) -> Path:
    path = Path(path)
    with atomic_write(path, gzipped=False) as fh:
        fig.savefig(fh.buffer, format="png", dpi=DPI)  # binary PNG under the text handle, nothing pending in it
    return path
