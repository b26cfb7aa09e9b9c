"""IRT results as tables: one row per item, per system, and information curves per question group.

Pure functions of a fitted :class:`~exampp.analysis.irt.models.IRTModel` and its
:class:`~exampp.formats.response_matrix.Responses`; :mod:`exampp.api.irt` builds them.
"""
from __future__ import annotations

import math
from collections.abc import Hashable

import numpy as np
import pandas as pd

Z95 = 1.959963984540054  # two-sided 95% normal quantile
THETA_GRID = np.linspace(-4.0, 4.0, 81)


def finite(values) -> np.ndarray:
    return np.isfinite(np.asarray(values, dtype=float))


def usable(items: pd.DataFrame) -> pd.Series:
    """Items with finite fitted parameters (those all or no systems answer may have none)."""
    return items["status"].eq("ok") & finite(items["a"]) & finite(items["b"]) & finite(items["g"])


def item_table(model, responses, texts: dict[str, str]) -> pd.DataFrame:
    """One row per item: parameters with SEs, fit status, where and how much it informs."""
    from exampp.analysis.irt.information import item_information, theta_max_information

    a, b, g = (np.broadcast_to(np.asarray(v, dtype=float), (len(responses.items),))
               for v in (model.a_, model.b_, model.g_))
    ok = finite(a) & finite(b) & finite(g)
    where = np.full(len(a), np.nan)
    peak = np.zeros(len(a))
    if ok.any():
        where[ok] = theta_max_information(a[ok], b[ok], g[ok])
        peak[ok] = [item_information([t], ai, bi, gi)[0, 0] if np.isfinite(t) else 0.0
                    for t, ai, bi, gi in zip(where[ok], a[ok], b[ok], g[ok])]
    X, w = responses.values, responses.weights if responses.weights is not None else np.ones(len(responses.values))
    answered = ~np.isnan(X)
    p_correct = (np.nan_to_num(X) * w[:, None]).sum(0) / np.maximum((answered * w[:, None]).sum(0), 1e-300)
    table = pd.DataFrame({
        "item": responses.items,
        "a": a, "a_se": model.a_se_, "b": b, "b_se": model.b_se_, "g": g, "g_se": model.g_se_,
        "status": list(model.item_status_), "theta_max_information": where, "max_information": peak,
        "p_correct": p_correct,
    })
    if responses.question_query:
        table.insert(1, "query_id", [responses.question_query.get(i) for i in responses.items])
    if texts:
        from exampp.analysis.categories import bloom_levels, question_word

        text = [texts.get(i, "") for i in responses.items]
        table["question_word"] = [question_word(t) or "" for t in text]
        table["bloom"] = [",".join(sorted(bloom_levels(t))) for t in text]
        table["text"] = text
    return table


def system_table(model, responses, cover: dict[str, float]) -> pd.DataFrame:
    """One row per system: EAP ability with SD and 95% interval, MLE with SE, rank by EAP."""
    theta, sd = np.asarray(model.theta_, dtype=float), np.asarray(model.theta_se_, dtype=float)
    mle, mle_se = model.abilities(responses.values, method="mle")
    table = pd.DataFrame({
        "system": responses.respondents, "theta": theta, "sd": sd,
        "ci_low": theta - Z95 * sd, "ci_high": theta + Z95 * sd, "theta_mle": mle, "mle_se": mle_se,
    })
    # rounded first, as leaderboards are: equal response patterns must tie exactly
    table["rank"] = table["theta"].round(10).rank(ascending=False, method="min").astype(int)
    if cover:
        table["cover"] = [cover.get(s, math.nan) for s in table["system"]]
    return table.sort_values(["rank", "system"], kind="stable").reset_index(drop=True)


def information_table(items: pd.DataFrame) -> pd.DataFrame:
    """Information curves on a θ grid: the whole test and per query / Bloom level / question word."""
    from exampp.analysis.irt.information import information_by_group

    kept = items[usable(items)]
    groupings: dict[str, list[Hashable]] = {"test": ["all"] * len(kept)}
    if "query_id" in kept:
        groupings["query"] = list(kept["query_id"])
    if "bloom" in kept:
        groupings["bloom"] = [tuple(levels.split(",")) if levels else () for levels in kept["bloom"]]
        groupings["question_word"] = [word or "(none)" for word in kept["question_word"]]
    frames = []
    for grouping, labels in groupings.items():
        frame = information_by_group(THETA_GRID, kept["a"], kept["b"], kept["g"], labels)
        frame.insert(1, "grouping", grouping)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
