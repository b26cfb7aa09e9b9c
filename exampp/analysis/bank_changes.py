"""What a question bank change does, as tables (:mod:`exampp.api.bank_impact` grades the runs against
both banks and calls these): the questions added, removed and changed, the EXAM labels that change,
the scores per run and query side by side, and the leaderboards before and after with their rank
correlations.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import cast

import pandas as pd

from exampp.collection.qrels import Qrels
from exampp.collection.questions import QuestionBank
from exampp.collection.runs import Run
from exampp.means import SCORE_DECIMALS

SIDES = ("before", "after")


def question_changes(old: QuestionBank, new: QuestionBank) -> pd.DataFrame:
    """Per query: questions before and after, added, removed, changed (same id, other text), unchanged.

    :param old: The old bank.
    :param new: The new bank.
    """
    was = {(q.query_id, q.question_id): q.text for q in old}
    now = {(q.query_id, q.question_id): q.text for q in new}
    rows = []
    for qid in sorted({key[0] for key in was.keys() | now.keys()}):
        a = {key: text for key, text in was.items() if key[0] == qid}
        b = {key: text for key, text in now.items() if key[0] == qid}
        both = a.keys() & b.keys()
        changed = sum(a[key] != b[key] for key in both)
        rows.append((qid, len(a), len(b), len(b.keys() - a.keys()), len(a.keys() - b.keys()), changed,
                     len(both) - changed))
    return pd.DataFrame(rows, columns=["query_id", "before", "after", "added", "removed", "changed", "unchanged"])


def label_changes(before: Qrels, after: Qrels) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the labels that change: ``query_id, passage_id, before, after``; per query ``query_id,
    passages, changed``). A passage labelled on one side only changes (NaN on the other).

    :param before: The labels with the old bank.
    :param after: The labels with the new bank.
    """
    rows, counts = [], []
    for qid in sorted(before.keys() | after.keys()):
        a, b = before.get(qid, {}), after.get(qid, {})
        docs = sorted(a.keys() | b.keys())
        changed = [(qid, pid, a.get(pid, math.nan), b.get(pid, math.nan)) for pid in docs
                   if pid not in a or pid not in b or a[pid] != b[pid]]
        rows += changed
        counts.append((qid, len(docs), len(changed)))
    table = pd.DataFrame(rows, columns=["query_id", "passage_id", "before", "after"]).astype(
        {"before": float, "after": float})
    return table, pd.DataFrame(counts, columns=["query_id", "passages", "changed"])


def leaderboard_changes(scores: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per score: the leaderboards before and after, means over each side's queries as ``exampp cover``
    and ``exampp leaderboard`` take them, with ranks; and their rank correlations.

    :param scores: A long per-query table: ``score, run, query_id, before, after``.
    """
    from exampp.analysis.correlation import correlate, side_by_side
    from exampp.scoring import summarize

    boards, correlations = [], []
    for name, group in scores.groupby("score", sort=False):
        means = {side: cast("dict[str, float]", summarize(group.dropna(subset=[side]), side).set_index("run")["mean"]
                                                      .to_dict()) for side in SIDES}
        ranks = side_by_side(means["before"], means["after"], names=SIDES)
        board = pd.DataFrame({
            "score": name, "run": ranks.index,
            "before": [means["before"][r] for r in ranks.index], "after": [means["after"][r] for r in ranks.index],
            "rank_before": ranks["before rank"].to_numpy(), "rank_after": ranks["after rank"].to_numpy()})
        board.insert(4, "delta", (board["after"] - board["before"]).round(SCORE_DECIMALS))
        board["rank_change"] = board["rank_before"] - board["rank_after"]
        boards.append(board)
        result = correlate(means["before"], means["after"])
        correlations.append((name, result.kendall, result.spearman, result.tau_ap, result.n_systems))
    return (pd.concat(boards, ignore_index=True),
            pd.DataFrame(correlations, columns=["score", "kendall", "spearman", "tau_ap", "n_systems"]))


def measure_scores(before: Qrels, after: Qrels, runs: Mapping[str, Run], measures: Sequence[str]) -> pd.DataFrame:
    """The measures per run and query on the EXAM-Qrels of both sides (:func:`paired_scores`).

    :param before: The EXAM-Qrels with the old bank.
    :param after: The EXAM-Qrels with the new bank.
    :param runs: The runs, by name.
    :param measures: The measures.
    """
    from exampp.scoring import per_query_measures

    values = [per_query_measures(runs, qrels, measures) for qrels in (before, after)]
    return pd.concat([paired_scores(values[0][values[0]["measure"] == m], values[1][values[1]["measure"] == m], m)
                      for m in dict.fromkeys(values[0]["measure"])], ignore_index=True)


def paired_scores(before: pd.DataFrame, after: pd.DataFrame, name: str) -> pd.DataFrame:
    """Two per-query tables (``run, query_id, value``) side by side: ``score, run, query_id, before, after, delta``.

    :param before: The scores with the old bank.
    :param after: The scores with the new bank.
    :param name: The score's name, in the column ``score``.
    """
    keys = ["run", "query_id"]
    table = before[keys + ["value"]].merge(after[keys + ["value"]], on=keys, how="outer", suffixes=("", "_after"))
    table = table.rename(columns={"value": "before", "value_after": "after"}).sort_values(keys)
    table.insert(0, "score", name)
    table["delta"] = (table["after"] - table["before"]).round(SCORE_DECIMALS)
    return table.astype({"before": float, "after": float, "delta": float}).reset_index(drop=True)


def differs(a: pd.Series, b: pd.Series) -> pd.Series:
    """Element-wise: the values differ, or one is NaN and the other is not.

    :param a: The values before.
    :param b: The values after.
    """
    return (a != b) & ~(a.isna() & b.isna())
