"""The validate job: what a track checks when runs are submitted (``exampp validate``).

It reads the runs leniently (a bad line is a ``format`` finding, not the end), the topics and the
corpus, and runs every intake check (:mod:`exampp.intake`) on every run. Errors refuse a run;
warnings report it.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from exampp.files.io import PathLike
from exampp.intake import RunValidation, load_spec, validate_runs
from exampp.intake.submissions import read_submissions

if TYPE_CHECKING:
    from exampp.api.grade import GradeJob

COLUMNS = ["severity", "check", "topic", "where", "message"]


@dataclass(frozen=True)
class Validation:
    """The findings of every run.

    :param runs: Each run's findings, in the order the runs were read.
    :param spec: The track spec's name.
    """

    runs: tuple[RunValidation, ...]
    spec: str

    @property
    def errors(self) -> int:
        """How many errors there are over all runs."""
        return sum(run.errors for run in self.runs)

    def table(self, run: RunValidation) -> pd.DataFrame:
        """One run's findings as a table (:data:`COLUMNS`), errors first.

        :param run: The run.
        """
        rows = [[f.severity, f.check, f.topic or "", f.where or "", f.message] for f in run.findings]
        table = pd.DataFrame(rows, columns=COLUMNS)
        return table.sort_values("severity", kind="stable").reset_index(drop=True)


def validate(sources: Iterable[PathLike], *, topics: PathLike | None = None, corpus: str | None = None,
             spec: str | None = None, responses: Iterable[PathLike] = ()) -> Validation:
    """Check submitted runs.

    :param sources: Run files (TREC), answer files (JSONL: AutoJudge reports, the TREC RAG track's
        answer files, any file ``exampp grade --responses`` reads), or folders of them.
    :param topics: The topics the track asks for (any topics file; None: coverage is not checked); an
        AutoJudge requests file where the spec takes each topic's length limit from its request.
    :param corpus: The passages (a file, ``irds:`` or ``pyserini:``; None: doc ids are not looked up).
    :param spec: A built-in track spec (``rag24``) or a spec file (None: no limits).
    :param responses: Answer files (or folders) only, as ``exampp grade --responses`` reads them: a file that
        is not JSONL is a TSV responses file, not a TREC run.
    :raises InputError: A bad topics file or spec.
    """
    track = load_spec(spec)
    wanted = limits = None
    if topics is not None and track.length_limit_request_field is not None:
        from exampp.formats.reports import read_requests

        requests = read_requests(topics)  # the topics, each with its length limit
        wanted = list(requests)
        limits = {topic: getattr(request, track.length_limit_request_field) for topic, request in requests.items()}
    elif topics is not None:
        from exampp.formats.topic_files import read_topics

        wanted = list(read_topics(topics))
    known = None
    if corpus is not None:
        from exampp.formats.corpus_sources import open_corpus

        store = open_corpus(corpus)

        def known(ids: set[str]) -> set[str]:
            return set(store.get_many(ids))

    return Validation(tuple(validate_runs(read_submissions(sources, responses), track, wanted, known, limits)),
                      track.track)


def validate_grade_inputs(job: GradeJob) -> Validation:
    """The checks ``exampp grade --validate`` makes before grading: on the runs, responses and topics the
    job grades (:meth:`GradeJob.sources`), with no track spec.

    :param job: The grade job.
    """
    runs, topics = job.sources()
    return validate(runs, topics=topics, responses=[job.responses] if job.responses is not None else [])
