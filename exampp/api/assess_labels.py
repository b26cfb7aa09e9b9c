"""People judge a sample: the assessors' web server, and labels moved in and out of the workspace's
label store (``<workspace>/assessments.sqlite``).

    job = ServeJob(workspace="ws", sample="ws/sample.tsv", overlap=0.1)
    job.serve(host="127.0.0.1", port=8765, ready=print)        # until interrupted
    export_sample("ws", "ws/sample.tsv", "tasks.json", fmt="label-studio")
    import_labels("ws", "label-studio-export.json")           # ImportResult(read=40, added=40)
    store_labels("ws")                                        # DataFrame: query_id key assessor grade note time

Texts come from the workspace (``topics/topics.jsonl``, ``corpus/passages.jsonl[.gz]``) unless given;
nugget pairs take the runs' answers and the topics' nuggets from an assignment file (``answers``),
whose assignments are never read into what assessors see. Errors are
:class:`~exampp.errors.ExamppError` (the command line prints them as one line).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from exampp.assess.assignment import labels_needed
from exampp.assess.tasks import (
    NUGGET_SCALE,
    PASSAGE_SCALE,
    Scale,
    Task,
    build_tasks,
    labeling_config,
    parse_scale,
    write_label_studio,
    write_tasks_tsv,
)
from exampp.errors import ExamppError, InputError
from exampp.files.io import PathLike, atomic_write, display_name
from exampp.formats.assessment_sample import SamplePair, read_sample
from exampp.formats.corpus_sources import open_corpus
from exampp.formats.nugget_assignments import read_assignments
from exampp.formats.topic_files import read_topics
from exampp.stores.assessments import (
    CLAIM_SECONDS,
    AssessmentStore,
    assessor_problem,
    frame_labels,
    labels_frame,
    read_labels,
    write_labels,
)
from exampp.stores.layout import Workspace

EXPORT_FORMATS = ("tsv", "label-studio")


def scale_of(pairs: list[SamplePair], grades: str | None = None) -> Scale:
    """The scale to judge pairs on.

    :param pairs: The sample's pairs.
    :param grades: A scale (``--grades``, see :func:`exampp.assess.tasks.parse_scale`); by default TREC
        DL's 0-3 for passages and the RAG track's 0-2 assignment for nuggets.
    """

    if grades is not None:
        try:
            return parse_scale(grades)
        except ValueError as exc:
            raise ExamppError(f"--grades {grades!r}: {exc}") from None
    return NUGGET_SCALE if pairs and pairs[0].is_nugget else PASSAGE_SCALE


def load_tasks(workspace: PathLike, sample: PathLike, *, topics: PathLike | None = None,
               corpus: PathLike | None = None, answers: PathLike | None = None) -> list[Task]:
    """The sample's pairs with the texts to show, in sample order.

    :param workspace: The workspace.
    :param sample: The sample file.
    :param topics: The query texts (default: the workspace's; needed for passage pairs).
    :param corpus: The passage texts: a file, ``irds:`` or ``pyserini:`` (default: the workspace's).
    :param answers: The file holding a nugget pair's answer and nugget.
    """

    ws = Workspace.at(workspace)
    pairs = read_sample(sample)
    if not pairs:
        raise InputError(display_name(sample), None, "the sample has no pairs")
    if pairs[0].kind == "sentence":  # each of a sentence's citations is judged: the track's own form
        raise InputError(display_name(sample), None, "a sample of citing sentences is judged in the track's "
                                                     "citation-support file, not on this page; give people that "
                                                     "file's sampled answers")
    topics_file = topics if topics is not None else ws.topics
    if not pairs[0].is_nugget:
        source = corpus if corpus is not None else ws.corpus
        passages = open_corpus(source).get_many({str(pair.doc_id) for pair in pairs})
        return build_tasks(pairs, read_topics(topics_file), passages, [], sample=display_name(sample),
                           topics_file=display_name(topics_file), texts=display_name(source))
    if answers is None:
        raise ExamppError(f"{display_name(sample)} holds nugget pairs: give the answers and nuggets "
                          "(a nugget assignment file) with --answers")
    # a nugget pair's query text may come from the answers file, so the workspace's topics are optional
    found = read_topics(topics_file) if topics is not None or ws.topics.exists() else {}
    return build_tasks(pairs, found, {}, read_assignments(answers, assigned=False), sample=display_name(sample),
                       texts=display_name(answers))


@dataclass(frozen=True)
class ServeJob:
    """``exampp assess serve``: the assessors' page over a workspace's label store."""

    workspace: Path
    sample: Path
    topics: Path | None = None
    corpus: str | None = None
    answers: Path | None = None
    grades: str | None = None
    overlap: float = 0.0
    seed: int = 0
    claim_seconds: float = CLAIM_SECONDS

    def serve(self, host: str = "127.0.0.1", port: int = 8765, *, ready: Callable[[str], None]) -> None:
        """Serve until interrupted; ``ready(url)`` once the server listens. Labels go to the workspace's
        ``assessments.sqlite`` as they are given."""
        try:  # starlette and uvicorn: the assess extra
            from exampp.assess.server import Assessment, assessment_app, run_server
        except ImportError as exc:
            raise ExamppError(f"exampp assess serve needs starlette and uvicorn ({exc.name} is missing): install "
                              "the exampp extra 'assess' (pip install 'exampp[assess]', or scripts/setup.sh "
                              "...,assess)") from None

        tasks = load_tasks(self.workspace, self.sample, topics=self.topics, corpus=self.corpus, answers=self.answers)
        pairs = [task.pair for task in tasks]
        try:
            needed = labels_needed(pairs, self.overlap, self.seed)
        except ValueError as exc:
            raise ExamppError(f"--overlap: {exc}") from None
        with AssessmentStore(Workspace.at(self.workspace).assessments) as store:
            assessment = Assessment(tasks, needed, scale_of(pairs, self.grades), store,
                                    title=f"{Path(self.workspace).resolve().name} · {Path(self.sample).name}",
                                    claim_seconds=self.claim_seconds)
            run_server(assessment_app(assessment, host=host), host, port, ready=ready)


@dataclass(frozen=True)
class Exported:
    """What an export wrote: the file, the number of pairs or labels, and Label Studio's labeling
    config (written beside the tasks) for that format."""

    path: Path
    count: int
    config: Path | None = None


def export_sample(workspace: PathLike, sample: PathLike, output: PathLike, *, fmt: str = "tsv",
                  topics: PathLike | None = None, corpus: PathLike | None = None, answers: PathLike | None = None,
                  grades: str | None = None) -> Exported:
    """Write the sample with its texts for other tools, blind to the judge (no stratum, no inclusion
    probability; ``exampp assess export``).

    :param workspace: The workspace.
    :param sample: The sample file.
    :param output: The file to write.
    :param fmt: ``tsv``, or ``label-studio``: Label Studio's tasks JSON with its labeling config
        beside it (``<output stem>.xml``).
    :param topics: The query texts, as :func:`load_tasks` takes them.
    :param corpus: The passage texts, as :func:`load_tasks` takes them.
    :param answers: The answers and nuggets of nugget pairs, as :func:`load_tasks` takes them.
    :param grades: The labeling config's choices (``--grades``, see :func:`scale_of`); by default the
        pairs' usual scale.
    :raises ValueError: An unknown format.
    """
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"format {fmt!r}: one of {', '.join(EXPORT_FORMATS)}")
    tasks = load_tasks(workspace, sample, topics=topics, corpus=corpus, answers=answers)
    output = Path(output)
    if fmt == "tsv":
        return Exported(output, write_tasks_tsv(tasks, output))
    scale = scale_of([task.pair for task in tasks], grades)
    config = output.with_suffix(".xml")
    if config == output:
        raise ExamppError(f"{output}: name the tasks file .json; its labeling config is written beside it as .xml")
    count = write_label_studio(tasks, output)
    with atomic_write(config) as out:
        out.write(labeling_config(scale, nuggets=tasks[0].pair.is_nugget))
    return Exported(output, count, config)


def store_labels(workspace: PathLike) -> pd.DataFrame:
    """The labels standing in the workspace's store: columns query_id, key, assessor, grade, note,
    time (see :meth:`exampp.stores.assessments.AssessmentStore.labels`); empty when nobody judged yet.

    :param workspace: The workspace folder.
    """

    path = Workspace.at(workspace).assessments
    if not path.exists():  # reading creates no store
        return labels_frame([])
    with AssessmentStore(path) as store:
        return store.labels()


def export_labels(workspace: PathLike, output: PathLike) -> Exported:
    """Write the store's labels as qrels with the assessor's column (``query_id 0 key grade assessor``).

    :param workspace: The workspace whose label store is read.
    :param output: The file to write.
    """
    labels = store_labels(workspace)
    return Exported(Path(output), write_labels(labels, output))


@dataclass(frozen=True)
class ImportResult:
    read: int  # labels in the file
    added: int  # of those, new to the store (a label the assessor already has with its grade and note is not)


def import_labels(workspace: PathLike, path: PathLike, *, assessor: str | None = None) -> ImportResult:
    """Read a label file into the workspace's store, in one transaction; importing it again adds nothing
    (``exampp assess import``).

    :param workspace: The workspace whose label store receives the labels.
    :param path: The label file (:func:`exampp.stores.assessments.read_labels`: qrels with an optional
        assessor column, Label Studio's export, or autojudge-annotate's JSONL).
    :param assessor: Names the assessor of labels the file gives none (qrels of four columns,
        annotations without a username).
    """
    if assessor is not None and assessor_problem(assessor):
        raise ExamppError(f"--assessor {assessor!r} {assessor_problem(assessor)}")
    labels = read_labels(path)
    unnamed = labels["assessor"] == ""
    if unnamed.any():
        if assessor is None:
            raise InputError(display_name(path), None, "the labels have no assessor column: name their assessor "
                                                       "with --assessor NAME")
        labels.loc[unnamed, "assessor"] = assessor
    with AssessmentStore(Workspace.at(workspace).assessments) as store:
        added = store.add_many(frame_labels(labels))
    return ImportResult(len(labels), added)
