"""The application layer: whole jobs (grade, cover, qrels, irt, correlate) as Python calls that
return result objects. A job with many settings is a frozen spec (:class:`~exampp.api.grade.GradeJob`,
:class:`~exampp.api.scores.CoverJob`, :class:`~exampp.api.report.ReportJob`...): its fields are the
settings, checked when it is made, and its ``run()`` reads the inputs, calls the computations of the
layers below and writes the outputs. The command line parses flags, builds and runs these and prints
what they return."""
from __future__ import annotations

import warnings
from collections.abc import Callable

Warn = Callable[[str], None]
"""Where a job sends a warning line (a run query the exam or qrels lack, left out): the command
line prints it on standard error, as it comes, before any later error."""


def python_warning(line: str) -> None:
    """The jobs' default :data:`Warn` for Python callers: a :class:`UserWarning`."""
    warnings.warn(line, UserWarning, stacklevel=2)
