"""The report's figures (matplotlib, Agg renderer): the EXAM++-paper comparison plot, per-query
scatter plots and grade histograms.

Each ``*_figure`` function builds a :class:`matplotlib.figure.Figure` from a table the report also
writes as TSV (no pyplot, so no global state and no display needed); :func:`png_bytes` renders it.
PNGs carry no metadata (no software version, no time), so the same data gives the same bytes.
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

WIDTH = 10.0  # inches: at DPI, as wide as the page's text column (a laptop screen, an A4 page)
DPI = 120
CUT = 0.3  # the comparison plot shows normalised values from -CUT to 1 + CUT
OFFICIAL_STYLE = {"color": "black", "linewidth": 2.2, "marker": "s", "zorder": 5}


def png_bytes(fig: Figure) -> bytes:
    """The figure as PNG bytes, without metadata (deterministic)."""
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=DPI, metadata={"Software": None})
    return out.getvalue()


def literal(text: str) -> str:
    """A run name, measure or path as matplotlib draws it letter for letter: a ``$`` would start
    mathtext (and a stray backslash in it fail the figure)."""
    return str(text).replace("$", r"\$")


def comparison_figure(data: pd.DataFrame, official: str) -> Figure:
    """The EXAM++ paper's comparison: systems on the x axis in the official leaderboard's order,
    each evaluation's min-max normalised scores as a line with markers and its (equally rescaled)
    interval shaded. ``data``: columns ``evaluation, run, position, normalised, normalised_low,
    normalised_high`` (see :func:`exampp.api.report.comparison_table`); ``official`` is the
    evaluation drawn in black."""
    runs = data.drop_duplicates("run").sort_values("position")["run"].tolist()
    evaluations = list(dict.fromkeys(data["evaluation"]))
    fig = Figure(figsize=(WIDTH, 5.6 + 0.12 * max(len(max(runs, key=len, default="")) - 8, 0)),
                 dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    ax.grid(True, alpha=0.3)
    markers = "o^vDP*Xh"
    others = 0
    for evaluation in evaluations:
        rows = data[data["evaluation"] == evaluation].sort_values("position")
        x = rows["position"].to_numpy() - 1
        if evaluation == official:
            style = {**OFFICIAL_STYLE, "label": literal(f"{evaluation} (official)")}
            colour = "black"
        else:
            colour = f"C{others % 10}"
            style = {"color": colour, "marker": markers[others % len(markers)], "linewidth": 1.4,
                     "label": literal(evaluation)}
            others += 1
        ax.plot(x, rows["normalised"], markersize=6, **style)
        low, high = rows["normalised_low"].to_numpy(float), rows["normalised_high"].to_numpy(float)
        if np.isfinite(low).any():
            ax.fill_between(x, low, high, color=colour, alpha=0.10, linewidth=0)
    ax.set_xticks(range(len(runs)), [literal(run) for run in runs], rotation=60 if len(runs) > 6 else 0,
                  ha="right" if len(runs) > 6 else "center", fontsize="small")
    ax.set_xlim(-0.5, len(runs) - 0.5)
    # Wide intervals of a leaderboard with a narrow range would flatten every line: cut at the edges.
    values = data[["normalised", "normalised_low", "normalised_high"]].to_numpy(float)
    ax.set_ylim(max(np.nanmin(values), -CUT) - 0.05, min(np.nanmax(values), 1 + CUT) + 0.05)
    ax.set_xlabel("systems, best first on the official leaderboard")
    ax.set_ylabel("score, min-max normalised per evaluation")
    ax.set_title("Leaderboards on one axis (shaded: bootstrap intervals, rescaled alike)")
    fig.legend(loc="outside lower center", ncols=min(len(evaluations), 4), fontsize="small", frameon=False)
    return fig


def scatter_figure(points: pd.DataFrame, official: str) -> Figure:
    """One panel per evaluation: each (run, query)'s official score (x) against the evaluation's (y).
    ``points``: columns ``evaluation, run, query_id, official, exam``."""
    evaluations = list(dict.fromkeys(points["evaluation"]))
    columns = min(len(evaluations), 3)
    rows = -(-len(evaluations) // columns)
    fig = Figure(figsize=(WIDTH, 3.4 * rows + 0.4), dpi=DPI, layout="constrained")
    axes = fig.subplots(rows, columns, squeeze=False)
    for ax in axes.flat[len(evaluations):]:
        ax.set_visible(False)
    for ax, evaluation in zip(axes.flat, evaluations):
        panel = points[points["evaluation"] == evaluation]
        ax.scatter(panel["official"], panel["exam"], s=12, alpha=0.5, color="C0", linewidths=0)
        ax.grid(True, alpha=0.3)
        ax.set_title(literal(evaluation), fontsize="medium")
        ax.set_xlabel("official per query", fontsize="small")  # the name, path and all, is in the title
        ax.set_ylabel("EXAM per query", fontsize="small")
    fig.suptitle(literal(f"Per-query scores against the official {official}: each point a (system, query)"),
                 fontsize="medium")
    return fig


def grades_figure(histogram: pd.DataFrame) -> Figure:
    """Two bar charts of :func:`exampp.api.report.grade_histogram`'s table: how many
    (passage, question) grades, and how many passages' EXAM labels (best grade), at each level."""
    fig = Figure(figsize=(WIDTH, 3.4), dpi=DPI, layout="constrained")
    axes = fig.subplots(1, 2)
    levels = [str(level) for level in histogram["grade"]]
    for ax, column, title in zip(axes, ("grades", "labels"),
                                 ("Grades (passage, question)", "EXAM labels (best grade of a passage)")):
        ax.bar(levels, histogram[column], color="C0" if column == "grades" else "C2")
        ax.set_title(title, fontsize="medium")
        ax.set_xlabel("grade", fontsize="small")
        ax.set_ylabel("count", fontsize="small")
        ax.grid(True, axis="y", alpha=0.3)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts
        if len(levels) > 8:
            ax.tick_params(axis="x", labelrotation=45, labelsize="small")
    return fig
