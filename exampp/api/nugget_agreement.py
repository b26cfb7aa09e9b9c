"""The nugget agree job: how one nugget assignment (exampp's, offline or by an LLM) agrees with
another (the official one), nugget by nugget and in the run leaderboards they induce. The job reads
the assignment files; :mod:`exampp.analysis.nugget_agreement` compares them (what is compared, and
how, is said there). Errors are :class:`~exampp.errors.ExamppError`.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from exampp.analysis.nugget_agreement import NuggetAgreement, nugget_agreement
from exampp.files.io import PathLike
from exampp.formats.nugget_assignments import Answer


def _answers(source: PathLike | Iterable[Answer]) -> list[Answer]:
    if isinstance(source, (str, os.PathLike)):
        from exampp.formats.nugget_assignments import read_assignments

        return read_assignments(source)
    return list(source)


def assignment_agreement(ours: PathLike | Iterable[Answer], official: PathLike | Iterable[Answer], *,
                         measures: Sequence[str] = ("V_strict",), bootstrap: int = 1000, seed: int = 0,
                         confidence: float = 0.95) -> NuggetAgreement:
    """Agreement of one nugget assignment with the official one on the (topic, run, nugget) both
    assign (``exampp nuggets agree``; see the module docstring).

    :param ours: The assignment to check: an assignment file or its answers.
    :param official: The official assignment, likewise.
    :param measures: The measures whose leaderboards are correlated.
    :param bootstrap: The number of resamples of the shared topics.
    :param seed: The seed of the resamples.
    :param confidence: The intervals' confidence level.
    """
    return nugget_agreement(_answers(ours), _answers(official), measures=measures, bootstrap=bootstrap, seed=seed,
                            confidence=confidence)
