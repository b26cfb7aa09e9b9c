"""``exampp nuggets assign`` as Python calls: every answer's topic nuggets assigned support,
partial_support or not_support by a grading method, written in the TREC 2024 RAG track's format.

The answers come from a track assignment file (answers and their topics' nuggets; the assignments
in it are ignored), a RAG responses file (:mod:`exampp.formats.rag_responses`; the nuggets then
come from a bank), or a folder of such files. A bank (``bank``; any question bank format whose items
are nuggets with ``info["importance"]`` vital or okay) gives the nuggets of every answer when given,
also in place of an assignment file's. Answers of a topic without nuggets are left out, and counted.

Each (answer, nugget) is a :class:`~exampp.grading.base.Pair`: passage = the answer text, passage id =
the run id, question = the nugget (id :func:`~exampp.collection.questions.question_id_for` of its
text), its info holding the importance, the topic's query text (``query``: what the AutoNuggetizer's
prompt asks with, from the assignment file or the bank's query texts) and the nugget's place in its
topic's list (``position``: the order nuggets go to a listwise judge). The pairs are graded through
the grade store (:func:`~exampp.grading.runner.grade_pairs`): resumable, and a second run asks
nothing. Any method grading such pairs 0-2 assigns nuggets (``nugget-support`` with an LLM; an
offline one with the embedding backend): the method's default backend is opened unless another is given.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, replace
from pathlib import Path
from typing import Any

from exampp.collection.questions import Question, question_id_for
from exampp.defaults import CHUNK
from exampp.errors import ExamppError, InputError
from exampp.files.io import InputLines, PathLike, display_name, excerpt, first_nonblank, json_excerpt
from exampp.formats.nugget_assignments import (
    ASSIGNMENTS,
    IMPORTANCE,
    Answer,
    AssignedNugget,
    read_assignments,
    write_assignments,
)
from exampp.grading.base import Pair
from exampp.grading.method import GradingMethod, MethodError
from exampp.grading.methods.nugget_support import POSITION_KEY, QUERY_KEY, UNPARSED
from exampp.grading.runner import GradingSummary, grade_pairs
from exampp.llm.backend import Backend, BackendSpec, Usage
from exampp.setting_rules import CheckedSettings
from exampp.stores.grade_store import GradeStore
from exampp.stores.layout import Workspace

DEFAULT_METHOD = "nugget-support"


@dataclass(frozen=True)
class AssignResult:
    """What ``exampp nuggets assign`` did and wrote."""

    answers: list[Answer]  # every answer written, its nuggets assigned
    method_id: str
    summary: GradingSummary
    unparsed: int  # nuggets graded not_support because the judge's reply could not be read (kept in the store)
    left_out: int  # answers of topics without nuggets, not written
    usage: Usage | None  # the judge's requests and tokens, when it has a model
    written: Path

    @property
    def nuggets(self) -> int:
        return sum(len(answer.nuggets) for answer in self.answers)

    def __str__(self) -> str:
        requests = self.usage.requests if self.usage is not None else 0
        text = (f"{len(self.answers)} answers, {self.nuggets} nuggets assigned ({self.summary.graded} graded now, "
                f"{self.summary.reused} from the store), {requests} requests, {self.unparsed} nuggets "
                "unparsed (graded not_support)")
        return text + (f"; {self.left_out} answers left out: their topic has no nuggets" if self.left_out else "")


def answer_files(path: PathLike) -> list[Path]:
    """A file as given; a folder's files (hidden ones skipped), sorted by name.

    :param path: A file or a folder.
    """
    path = Path(path)
    if not path.is_dir():
        if not path.is_file():  # a FIFO, a process substitution: its first line would be lost to the sniffing
            raise InputError(path, None, "not a regular file or a folder: answers are read twice (first to tell an "
                                         "assignment file from a responses file); save them to a file")
        return [path]
    files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
    if not files:
        raise InputError(path, None, "no answer files in the folder")
    return files


def is_assignment_file(path: PathLike) -> bool:
    """Whether a file is a track assignment file: its first line an object with answer_text and nuggets.

    :param path: The file.
    """
    import json

    with InputLines(path) as lines:
        first, _ = first_nonblank(iter(lines))
    try:
        record = json.loads(first) if first is not None else None
    except ValueError:
        return False
    return isinstance(record, dict) and "answer_text" in record and "nuggets" in record


def read_nugget_bank(path: PathLike) -> tuple[dict[str, tuple[AssignedNugget, ...]], dict[str, str]]:
    """The nuggets of each topic of a question bank, in bank order, and the topics' query texts.

    :param path: The bank file.
    :raises InputError: A question without ``info["importance"]`` vital or okay, or a nugget twice in a topic.
    """
    from exampp.formats.question_bank import load_question_bank

    loaded = load_question_bank(path)
    name = display_name(path)
    nuggets: dict[str, list[AssignedNugget]] = {}
    for question in loaded.bank.enabled():
        importance = (question.info or {}).get("importance")
        line = loaded.lines.get(question.question_id)
        if importance not in IMPORTANCE:
            raise InputError(name, line, f"question {excerpt(question.text)} is no nugget: its info.importance is "
                                         f"{json_excerpt(importance)}, not one of {', '.join(IMPORTANCE)}")
        topic = nuggets.setdefault(question.query_id, [])
        if any(nugget.text == question.text for nugget in topic):
            raise InputError(name, line, f"nugget {excerpt(question.text)} is listed twice for topic "
                                         f"{question.query_id!r}")
        topic.append(AssignedNugget(question.text, importance))
    return {qid: tuple(topic) for qid, topic in nuggets.items()}, dict(loaded.bank.query_texts)


def read_answers(path: PathLike, bank: PathLike | None = None) -> tuple[list[Answer], int]:
    """The answers with their topics' nuggets, unassigned; and how many answers were left out for want
    of nuggets.

    :param path: An assignment file, a responses file or a folder of them.
    :param bank: A nugget bank: the nuggets of every answer (required for responses); else the
        assignment file's.
    """
    from exampp.formats.rag_responses import read_responses

    nuggets, query_texts = read_nugget_bank(bank) if bank is not None else (None, {})
    answers: list[Answer] = []
    seen: dict[tuple[str, str], str] = {}
    left_out = 0
    for file in answer_files(path):
        if is_assignment_file(file):
            read = [replace(a, nuggets=tuple(AssignedNugget(n.text, n.importance) for n in a.nuggets))
                    for a in read_assignments(file, assigned=False)]
        elif nuggets is None:
            raise InputError(file, None, "a responses file has no nuggets: give the nugget bank (--bank)")
        else:
            read = [Answer(r.query_id, r.run_id, r.text, line=r.line) for r in read_responses(file)]
        for answer in read:
            key = (answer.run_id, answer.query_id)
            if key in seen:
                raise InputError(file, answer.line, f"run {key[0]!r} already answered topic {key[1]!r} "
                                                    f"(in {seen[key]})")
            seen[key] = display_name(file)
            if nuggets is not None:
                if answer.query_id not in nuggets:
                    left_out += 1
                    continue
                answer = replace(answer, nuggets=nuggets[answer.query_id])
            answers.append(replace(answer, query=answer.query or query_texts.get(answer.query_id)))
    return answers, left_out


def nugget_question(answer: Answer, position: int) -> Question:
    """A nugget of an answer's topic as a question: its importance, the topic's query text and the
    position in its info.

    :param answer: The answer.
    :param position: The nugget's place in its topic's list.
    """
    nugget = answer.nuggets[position]
    info: dict[str, Any] = {"importance": nugget.importance, POSITION_KEY: position}
    if answer.query:
        info[QUERY_KEY] = answer.query
    return Question(answer.query_id, question_id_for(answer.query_id, nugget.text), nugget.text, info=info)


def nugget_pairs(answers: Sequence[Answer]) -> list[Pair]:
    """One pair per (answer, nugget of its topic): the answer is the passage, its run id the passage id.

    :param answers: The answers with their topics' nuggets.
    """
    return [Pair(a.query_id, a.run_id, a.text, nugget_question(a, i)) for a in answers for i in range(len(a.nuggets))]


def check_method(method: GradingMethod) -> None:
    """Check that a method grades an answer against each nugget 0-2.

    :param method: The grading method.
    :raises MethodError: It does not.
    """

    if method.direct or method.needs or method.top_grade != len(ASSIGNMENTS) - 1:
        raise MethodError(f"method {method} cannot assign nuggets: that needs a method grading an answer against "
                          "each nugget 0-2 (not_support, partial_support, support), e.g. nugget-support")


def _check_usable(method: GradingMethod, pairs: Sequence[Pair]) -> None:
    for pair in pairs:
        if not method.usable(pair.question):
            raise MethodError(f"method {method} cannot grade the nuggets of topic {pair.query_id!r}: no query text "
                              "for it (the assignment file's 'query', or the bank's query texts, give it)")


@dataclass(frozen=True)
class NuggetAssignJob(CheckedSettings):
    """Assign the topic nuggets of every answer and write them in the track's format, atomically (see the module
    docstring). :meth:`run` does the job.

    :param answers: A track assignment file, a RAG responses file, or a folder of such files.
    :param output: The assignment file to write; gzipped when it ends in .gz.
    :param bank: A nugget bank: the nuggets of every answer when given.
    :param method: The grading method that assigns them (0-2 grades), or its name.
    :param backend: An open backend (the caller's to close), a spec, a backend name, or None for the
        method's default (see :func:`~exampp.grading.registry.make_grader`).
    :param model: The model a backend opened by name loads.
    :param backend_options: Options of a backend opened by name.
    :param workspace: The workspace whose grade store is the default ``store``.
    :param store: The grade store (default: ``WORKSPACE/grades.sqlite``); what it holds already is not
        asked again.
    :param chunk_size: Pairs graded between two commits to the store.
    :param progress: Show a progress bar.
    :raises SettingError: A setting that breaks its rule (:mod:`exampp.setting_rules`).
    """

    answers: PathLike
    output: PathLike
    _: KW_ONLY
    bank: PathLike | None = None
    method: str | GradingMethod = DEFAULT_METHOD
    backend: Backend | BackendSpec | str | None = None
    model: str | None = None
    backend_options: Mapping[str, Any] | None = None
    workspace: PathLike = "."
    store: PathLike | None = None
    chunk_size: int = CHUNK
    progress: bool = True

    def run(self) -> AssignResult:
        """Do the job."""
        from exampp.grading.registry import as_method, check_backend, make_grader

        grading_method = as_method(self.method)
        check_method(grading_method)
        name = self.backend if isinstance(self.backend, str) else grading_method.default_backend
        if not isinstance(self.backend, (Backend, BackendSpec)) and name is not None:
            check_backend(grading_method, name)  # before anything is read or opened
        found, left_out = read_answers(self.answers, self.bank)
        if not found:
            raise InputError(display_name(self.answers), None, "no answer has nuggets to assign"
                             + (f": none of the {left_out} answers' topics is in the bank" if left_out else ""))
        pairs = nugget_pairs(found)
        _check_usable(grading_method, pairs)
        store = self.store if self.store is not None else Workspace.at(self.workspace).store
        with make_grader(grading_method, self.backend, self.model, **dict(self.backend_options or {})) as grader, \
                GradeStore(store) as opened_store:
            used = replace(grader.usage or Usage())
            summary = grade_pairs(pairs, grader, opened_store, chunk_size=self.chunk_size, progress=self.progress)
            usage = grader.usage - used if grader.usage is not None else None
            grades = opened_store.grades(summary.method_id, query_ids={a.query_id for a in found})
        stored = {(qid, pid, question_id): (grade, answer) for qid, pid, question_id, grade, answer in
                  zip(grades["query_id"], grades["passage_id"], grades["question_id"], grades["grade"],
                      grades["answer"])}
        assigned, unparsed = [], 0
        for answer in found:
            nuggets = []
            for nugget in answer.nuggets:
                grade, said = stored[answer.query_id, answer.run_id, question_id_for(answer.query_id, nugget.text)]
                if grade not in (0, 1, 2):
                    raise ExamppError(f"method {grading_method} gave grade {grade:g}, not 0, 1 or 2")
                unparsed += isinstance(said, str) and said.startswith(UNPARSED)
                nuggets.append(replace(nugget, assignment=ASSIGNMENTS[int(grade)]))
            assigned.append(replace(answer, nuggets=tuple(nuggets)))
        write_assignments(assigned, self.output)
        return AssignResult(assigned, summary.method_id, summary, unparsed, left_out, usage, Path(self.output))
