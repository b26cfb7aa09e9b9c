"""The agree job: EXAM labels against official judgments, Cohen's κ and Krippendorff's α per grade
threshold, and Krippendorff's α (ordinal) of the graded labels.

Errors are :class:`~exampp.errors.ExamppError` (the command line prints them as one line).
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from exampp.analysis.label_agreement import Overlap
from exampp.errors import ExamppError
from exampp.files.io import PathLike


class NoCommonJudgments(ExamppError, ValueError):
    """No (query, docid) pair is judged in both qrels: nothing to compare."""


@dataclass(frozen=True)
class LabelAgreement:
    """EXAM labels compared with official judgments on the pairs judged in both.

    :param rel_level: The official grade from which a passage counts as relevant.
    :param pairs: How many pairs are judged in both, and in only one (not compared).
    :param kappas: Index ``tau``; columns ``kappa, alpha, tp, fp, fn, tn, n`` (EXAM label >= tau vs
        official >= rel_level; alpha: Krippendorff's nominal α of those 0/1 labels).
    :param graded: Counts of (EXAM grade, official grade): rows EXAM grade, columns official grade.
    :param alpha: Krippendorff's α (ordinal) of the EXAM label and the official grade as two coders.
    """

    rel_level: float
    pairs: Overlap
    kappas: pd.DataFrame
    graded: pd.DataFrame
    alpha: float = float("nan")


def label_agreement(exam: PathLike, official: PathLike, *, rel_level: float = 1) -> LabelAgreement:
    """Cohen's κ, Krippendorff's nominal α and the 2×2 counts of the EXAM qrels against the official
    qrels for every threshold τ from 1 to the highest EXAM label, the graded contingency table, and
    Krippendorff's ordinal α of the graded labels (``exampp agree``).

    :param exam: The EXAM qrels file.
    :param official: The official qrels file.
    :param rel_level: The official grade from which a passage counts as relevant.
    :raises NoCommonJudgments: No pair is judged in both.
    """

    from exampp.analysis.label_agreement import graded_confusion, kappa_table, ordinal_alpha, overlap
    from exampp.formats.trec_qrels import read_qrels

    exam_labels, official_labels = read_qrels(exam), read_qrels(official)
    pairs = overlap(exam_labels, official_labels)
    if pairs.common == 0:
        raise NoCommonJudgments(f"no (query, docid) pair is judged in both {exam} and {official}")
    kappas = kappa_table(exam_labels, official_labels, rel_level=rel_level)
    return LabelAgreement(rel_level, pairs, kappas, graded_confusion(exam_labels, official_labels),
                          ordinal_alpha(exam_labels, official_labels))
