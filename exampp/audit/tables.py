"""The audit's tables (:mod:`exampp.api.audit` makes them of a workspace): per run the flagged texts it
retrieved, by class, and its EXAM-Cover beside the same with those texts graded 0; one row per flag.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from exampp.audit.flags import CLASSES, Flag
from exampp.audit.texts import Pair
from exampp.collection.runs import Run
from exampp.pool import Pool

FLAG_COLUMNS = ["query_id", "text_id", "kind", "runs", "evidence", "strength", "other"]
SCORE_COLUMNS = ["cover", "rank", "cover_corrected", "rank_corrected", "change"]


@dataclass(frozen=True)
class AuditResult:
    """What the audit of a workspace's runs found."""

    table: pd.DataFrame
    """One row per run: ``run``, the flagged texts it retrieved in its top-``depth`` per class
    (:data:`exampp.audit.CLASSES`), ``flagged`` (texts with any flag: a text may carry several
    classes), ``pooled`` (its top-``depth`` texts with a text in the corpus), ``share``
    (flagged / pooled); with grades also :data:`SCORE_COLUMNS`: EXAM-Cover@``depth`` as graded and
    its rank (1 best; tied runs share the better rank), the same with the flagged texts graded 0,
    and ``change`` (corrected - graded). Best first as graded; by run name without grades."""
    flagged: pd.DataFrame
    """One row per flag (:data:`FLAG_COLUMNS`): ``runs`` the runs it counts against (those that
    retrieved the text, or the one ranking a within-run flag is about), as a tuple."""
    flags: list[Flag]
    pooled: int
    """Pooled texts (query, text) audited."""
    depth: int
    method_id: str | None
    """The grades' method; None when the workspace holds no grades (no score columns)."""
    tau: float | None
    texts: str = "passages"
    """What was audited: ``passages`` (the pool of the runs' top-``depth``) or ``answers`` (RAG
    answers, each whole; its text id is its run)."""
    thresholds: str = "default"
    """The name (:data:`~exampp.audit.texts.THRESHOLDS`) of the detectors' thresholds: ``nuggets`` for a nugget exam."""

    @property
    def flagged_texts(self) -> int:
        """Distinct (query, text) pairs with a flag."""
        return len({(f.query_id, f.text_id) for f in self.flags})


def run_pairs(flags: Sequence[Flag], run: str, kinds: Collection[str] = CLASSES) -> set[Pair]:
    """The (query, text) pairs flagged that count against a run: a flag of the text counts wherever
    it is ranked; a flag of one ranking only against that run.

    :param flags: The flags.
    :param run: The run.
    :param kinds: The flag classes that count.
    """
    return {(f.query_id, f.text_id) for f in flags if f.kind in kinds and f.run in (None, run)}


def flag_table(rankings: Mapping[str, Mapping[str, Sequence[str]]], flags: Sequence[Flag]) -> pd.DataFrame:
    """Per run (in name order): the flagged texts among its ranked ones, per class and in all,
    its ranked texts (``pooled``) and the flagged share of them (0 for a run with none).

    :param rankings: Each run's ranked text ids per query (:func:`~exampp.audit.texts.pooled_rankings`).
    :param flags: The flags.
    """
    rows = []
    for name in sorted(rankings):
        ranked = {(qid, tid) for qid, ids in rankings[name].items() for tid in ids}
        counts = [len(ranked & run_pairs(flags, name, (kind,))) for kind in CLASSES]
        flagged = len(ranked & run_pairs(flags, name))
        rows.append((name, *counts, flagged, len(ranked), flagged / len(ranked) if ranked else 0.0))
    return pd.DataFrame(rows, columns=["run", *CLASSES, "flagged", "pooled", "share"])


def zero_flagged(grades: pd.DataFrame, pairs: Collection[Pair]) -> pd.DataFrame:
    """The grades with every grade of some (query_id, passage_id) pairs set to 0.

    :param grades: The grades.
    :param pairs: The (query_id, passage_id) pairs.
    """
    if not pairs:
        return grades
    keys = pd.MultiIndex.from_frame(grades[["query_id", "passage_id"]])
    zeroed = grades.copy()
    zeroed.loc[keys.isin(list(pairs)), "grade"] = 0.0
    return zeroed


def corrected_cover(runs: Mapping[str, Run], grades: pd.DataFrame, exam: Mapping[str, Collection[str]],
                    flagged: Mapping[str, Collection[Pair]], *, tau: float, depth: int) -> pd.DataFrame:
    """Per run: EXAM-Cover@``depth`` and its rank on the grades, the same with the run's flagged pairs
    graded 0 (each run on its own pairs: a within-run flag zeroes that run's copy only), and the
    change. Columns ``run`` and :data:`SCORE_COLUMNS`.

    :param runs: The runs, by name.
    :param grades: The grades.
    :param exam: Each query's question ids.
    :param flagged: Each run's flagged (query, passage) pairs.
    :param tau: The grade at which a question counts as answered.
    :param depth: How many of each run's top passages count.
    """
    from exampp.scoring import exam_cover, summarize

    graded = _means(summarize(exam_cover(runs, grades, exam, tau=tau, depth=depth)))
    by_pairs: dict[frozenset[Pair], list[str]] = {}  # runs sharing their flagged pairs are scored together
    for name in runs:
        by_pairs.setdefault(frozenset(flagged.get(name, ())), []).append(name)
    corrected = pd.concat([exam_cover({name: runs[name] for name in names}, zero_flagged(grades, pairs), exam,
                                      tau=tau, depth=depth) for pairs, names in by_pairs.items()])
    fixed = _means(summarize(corrected))
    table = pd.DataFrame({"cover": graded, "rank": _ranks(graded),
                          "cover_corrected": fixed, "rank_corrected": _ranks(fixed)})
    table["change"] = table["cover_corrected"] - table["cover"]
    return table.rename_axis("run").reset_index()


def _means(board: pd.DataFrame) -> pd.Series:
    return board.set_index("run")["mean"]


def _ranks(means: pd.Series) -> pd.Series:
    """1 for the best mean; tied runs share the better rank (1, 2, 2, 4)."""
    return means.rank(method="min", ascending=False).astype(int)


def flagged_texts(flags: Sequence[Flag], pool: Pool) -> pd.DataFrame:
    """One row per flag, by query, text and class: :data:`FLAG_COLUMNS`, ``runs`` those it counts
    against (the pool's contributors of the text, or the run of a within-run flag).

    :param flags: The flags.
    :param pool: The pool.
    """

    rows = [(f.query_id, f.text_id, f.kind,
             (f.run,) if f.run is not None else pool.contributors.get(f.query_id, {}).get(f.text_id, ()),
             f.evidence, f.strength, f.other)
            for f in flags]
    table = pd.DataFrame(rows, columns=FLAG_COLUMNS)
    return table.sort_values(["query_id", "text_id", "kind"], kind="stable").reset_index(drop=True)
