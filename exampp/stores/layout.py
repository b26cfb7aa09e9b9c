"""Layout of an exampp workspace: one folder holding everything a pipeline reads and writes.

    DIR/exampp.toml                  optional configuration (later: grading defaults)
    DIR/grades.sqlite                grade store
    DIR/assessments.sqlite           assessors' labels (exampp assess serve, import)
    DIR/runs/<name>.run              runs
    DIR/qrels/official.qrels         official judgments (when known)
    DIR/qrels/exam.qrels             EXAM-Qrels written by exampp (of the runs' passages)
    DIR/qrels/responses.qrels        EXAM-Qrels of the answers graded with --responses
    DIR/corpus/passages.jsonl[.gz]   passage texts
    DIR/topics/topics.jsonl          query texts (and subtopics)
    DIR/question_banks/questions.jsonl  question bank (exampp JSONL)
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from exampp.files.io import PathLike


@dataclass(frozen=True)
class Workspace:
    """The paths of a workspace's files (see the module docstring); nothing is created.

    :param root: The workspace folder (:meth:`at` takes any path-like).
    """

    root: Path


    @classmethod
    def at(cls, root: PathLike) -> "Workspace":
        return cls(Path(root))

    @property
    def store(self) -> Path:
        return self.root / "grades.sqlite"

    @property
    def assessments(self) -> Path:
        """The assessors' label store (:class:`exampp.stores.assessments.AssessmentStore`)."""
        return self.root / "assessments.sqlite"

    @property
    def runs(self) -> Path:
        return self.root / "runs"

    @property
    def qrels_dir(self) -> Path:
        return self.root / "qrels"

    @property
    def official_qrels(self) -> Path:
        return self.qrels_dir / "official.qrels"

    @property
    def exam_qrels(self) -> Path:
        return self.qrels_dir / "exam.qrels"

    @property
    def responses_qrels(self) -> Path:
        """EXAM-Qrels of the answers graded with ``--responses`` (never mixed into the runs')."""
        return self.qrels_dir / "responses.qrels"

    @property
    def corpus(self) -> Path:
        """The plain file when there is one (hand-kept collections), else the gzipped one."""
        plain = self.root / "corpus" / "passages.jsonl"
        return plain if plain.exists() else plain.with_suffix(".jsonl.gz")

    @property
    def topics(self) -> Path:
        return self.root / "topics" / "topics.jsonl"

    @property
    def question_bank(self) -> Path:
        return self.root / "question_banks" / "questions.jsonl"
