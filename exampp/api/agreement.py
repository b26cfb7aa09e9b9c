"""The agree job: EXAM labels against official judgments, Cohen's κ and Krippendorff's α per grade
threshold, and Krippendorff's α (ordinal) of the graded labels; or, per topic and then averaged,
autojudge-evaluate's ``qrel-evaluate`` measures (:func:`topic_label_agreement`).

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


MAX_SCALE = 20
"""The highest max grade per-topic agreement takes: κ is computed at every pair of thresholds."""


class GradeScaleError(ExamppError, ValueError):
    """A grade scale too long for per-topic agreement (its κ columns grow with the product of the scales)."""


@dataclass(frozen=True)
class TopicAgreement:
    """EXAM labels against official judgments topic by topic, as autojudge-evaluate's
    ``qrel-evaluate`` (:mod:`exampp.analysis.topic_agreement`; the official qrels are its truth).

    :param per_topic: Index topic: one row per topic either side judges
        (:func:`exampp.analysis.topic_agreement.topic_agreement`).
    :param mean: Index statistic (every column but the counts); columns ``mean`` (over the topics
        where it is defined), ``low``, ``high`` (the bootstrap interval over topics; NaN without one).
    :param official_max: The official grades were clipped to [0, this].
    :param exam_max: The EXAM grades were clipped to [0, this].
    :param rel_level: The official grade from which a document counts as relevant.
    :param exam_level: The EXAM grade from which a document counts as relevant.
    :param bootstrap: The number of resamples of the topics (0: no interval).
    :param seed: The seed of the resamples.
    :param confidence: The intervals' confidence level.
    """

    per_topic: pd.DataFrame
    mean: pd.DataFrame
    official_max: int
    exam_max: int
    rel_level: int
    exam_level: int
    bootstrap: int
    seed: int
    confidence: float


def topic_label_agreement(exam: PathLike, official: PathLike, *, rel_level: int = 1, exam_level: int = 1,
                          official_max: int | None = None, exam_max: int | None = None, bootstrap: int = 0,
                          seed: int = 0, confidence: float = 0.95) -> TopicAgreement:
    """Agreement topic by topic over the union of both qrels' documents, then the mean over topics,
    as autojudge-evaluate's ``qrel-evaluate`` computes it (``exampp agree --per-topic``), with a
    bootstrap interval of each mean over resampled topics.

    :param exam: The EXAM qrels file (qrel-evaluate's prediction).
    :param official: The official qrels file (its truth).
    :param rel_level: The official grade from which a document counts as relevant (>= 1).
    :param exam_level: The EXAM grade from which a document counts as relevant (>= 1).
    :param official_max: Clip official grades to [0, this] (default: the highest official grade;
        qrel-evaluate's default is 1).
    :param exam_max: Clip EXAM grades to [0, this] (default: the highest EXAM grade).
    :param bootstrap: Resamples of the topics for the means' intervals (0: none).
    :param seed: The seed of the resamples.
    :param confidence: The intervals' confidence level.
    :raises FractionalLabelError: A label that is not an integer grade.
    :raises GradeScaleError: A max grade above :data:`MAX_SCALE`.
    :raises InputError: A malformed qrels file.
    """

    from exampp.analysis.statistics import bootstrap_nanmeans
    from exampp.analysis.topic_agreement import averaged, topic_agreement
    from exampp.collection.qrels import check_integer_labels
    from exampp.formats.trec_qrels import read_qrels

    exam_labels, official_labels = read_qrels(exam), read_qrels(official)
    for labels in (exam_labels, official_labels):
        check_integer_labels(labels, "per-topic agreement (grades on a scale 0 .. max)")
    official_max = official_max or max([1, *(int(g) for docs in official_labels.values() for g in docs.values())])
    exam_max = exam_max or max([1, *(int(g) for docs in exam_labels.values() for g in docs.values())])
    for name, path, top in (("official", official, official_max), ("EXAM", exam, exam_max)):
        if top > MAX_SCALE:
            raise GradeScaleError(f"{path}: {name} grades up to {top}; per-topic agreement takes scales up to "
                                  f"{MAX_SCALE} (clip them: --{name.lower()}-max-grade)")
    table = topic_agreement(official_labels, exam_labels, truth_max=official_max, predicted_max=exam_max,
                            truth_threshold=rel_level, predicted_threshold=exam_level)
    columns = table[averaged(table)]
    mean = bootstrap_nanmeans(columns, n=bootstrap, seed=seed, confidence=confidence)  # n=0: no interval (NaN)
    return TopicAgreement(table, mean, official_max, exam_max, rel_level, exam_level, bootstrap, seed, confidence)
