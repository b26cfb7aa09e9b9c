"""The report's figures (matplotlib, Agg renderer): the EXAM++-paper comparison plot (one panel
per evaluation), per-query scatter plots and grade histograms.

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
OFFICIAL_STYLE = {"color": "black", "linewidth": 1.4, "marker": "s", "markersize": 3, "zorder": 5}
PANEL_COLUMNS = 2
NAMED_RUNS = 12  # the comparison plot names up to this many systems on its x axis; more are numbered


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
    """The EXAM++ paper's comparison as small multiples, one panel per evaluation other than
    ``official``: systems on the x axis in the official leaderboard's order, the evaluation's min-max
    normalised scores as points with their (equally rescaled) intervals as bars, the official
    leaderboard's as a black line in every panel. Up to :data:`NAMED_RUNS` systems the x axis names
    them; beyond, it gives their official rank (the report's leaderboard table names them).
    ``data``: columns ``evaluation, run, position, normalised, normalised_low, normalised_high``
    (see :func:`exampp.report.tables.comparison_table`)."""
    runs = data.drop_duplicates("run").sort_values("position")["run"].tolist()
    evaluations = [e for e in dict.fromkeys(data["evaluation"]) if e != official] or [official]
    columns = min(len(evaluations), PANEL_COLUMNS)
    rows = -(-len(evaluations) // columns)
    named = len(runs) <= NAMED_RUNS
    longest = len(max(runs, key=len, default="")) if named else 0
    fig = Figure(figsize=(WIDTH, 2.9 * rows + 0.9 + 0.09 * longest), dpi=DPI, layout="constrained")
    axes = fig.subplots(rows, columns, squeeze=False, sharex=True, sharey=True)
    reference = data[data["evaluation"] == official].sort_values("position")
    for k, (ax, evaluation) in enumerate(zip(axes.flat, evaluations)):
        ax.grid(True, alpha=0.3)
        ax.plot(reference["position"], reference["normalised"], **OFFICIAL_STYLE)
        if evaluation != official:
            panel = data[data["evaluation"] == evaluation].sort_values("position")
            x = panel["position"].to_numpy(float)
            low, high = panel["normalised_low"].to_numpy(float), panel["normalised_high"].to_numpy(float)
            bars = np.isfinite(low) & np.isfinite(high)
            colour = f"C{k % 10}"
            if bars.any():
                ax.vlines(x[bars], low[bars], high[bars], color=colour, alpha=0.45, linewidth=1.6)
            ax.plot(x, panel["normalised"], "o", color=colour, markersize=4.5, zorder=6)
        ax.set_title(literal(evaluation), fontsize="medium")
    for ax in axes.flat[len(evaluations):]:
        ax.set_visible(False)
    for ax in axes.flat[max(len(evaluations) - columns, 0):len(evaluations)]:
        ax.xaxis.set_tick_params(labelbottom=True)  # the lowest panel of each column, a short last row too
    first = axes.flat[0]
    if named:
        first.set_xticks(range(1, len(runs) + 1), [literal(run) for run in runs])
        for ax in axes.flat[:len(evaluations)]:
            ax.tick_params(axis="x", labelrotation=60 if len(runs) > 4 else 0, labelsize="small")
            for label in ax.get_xticklabels():
                label.set_horizontalalignment("right" if len(runs) > 4 else "center")
    else:
        first.xaxis.set_major_locator(MaxNLocator(integer=True))
    first.set_xlim(0.5, len(runs) + 0.5)
    # Wide intervals of a leaderboard with a narrow range would flatten every panel: cut at the edges.
    values = data[["normalised", "normalised_low", "normalised_high"]].to_numpy(float)
    first.set_ylim(max(np.nanmin(values), -CUT) - 0.05, min(np.nanmax(values), 1 + CUT) + 0.05)
    fig.supxlabel("systems, best first on the official leaderboard" if named
                  else "official rank of the system (1: best; the leaderboard table names them)", fontsize="medium")
    fig.supylabel("score, min-max normalised per evaluation", fontsize="medium")
    fig.suptitle("Each evaluation (points; bars: bootstrap intervals, rescaled alike) against the official "
                 "leaderboard (black line)", fontsize="medium")
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
    """Two bar charts of :func:`exampp.report.tables.grade_histogram`'s table: how many
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
