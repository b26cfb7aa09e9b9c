"""Submitted runs as intake checks read them: leniently, a bad line a finding rather than the end.

A file is a TREC run (``qid Q0 docid rank score runid``) or JSONL answers, told by its first
non-blank line (a file given as responses only is JSONL answers or a TSV responses file,
``query_id<TAB>text``). An answer line is an AutoJudge report (:mod:`exampp.formats.reports`), a line of
the TREC RAG track's citation-judgment files (``sentences`` with ``citations`` of ``reference``
ids: :mod:`exampp.formats.citations`), or any other line ``exampp grade --responses`` reads (a
text without citations, e.g. the nugget-assignment files' ``answer_text``).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exampp.errors import InputError
from exampp.files.io import PathLike, display_name, first_nonblank, is_stdio, iter_lines, parse_json
from exampp.formats.citations import parse_cited_answer
from exampp.formats.rag_responses import parse_response, parse_tsv_response, response_id
from exampp.formats.reports import CitedSentence, is_report, parse_report, report_files
from exampp.formats.trec_run import RunLine, parse_run_line


@dataclass(frozen=True)
class Answer:
    """One answer of a run to a topic, as the checks see it.

    :param run_id: The run.
    :param topic_id: The topic.
    :param text: The whole text.
    :param sentences: Its sentences with their cited doc ids (empty for a plain text).
    :param shape: ``rag24``, ``ragtime``, ``neuclir`` (reports), ``cited`` (citation judgments), or
        None (a plain text).
    :param references: A report's references, None when it has none.
    :param metadata: A report's metadata ({} for other lines).
    :param file: The file it was read from.
    :param line: Its line.
    """

    run_id: str
    topic_id: str
    text: str
    sentences: tuple[CitedSentence, ...] = ()
    shape: str | None = None
    references: tuple[str, ...] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    file: str = ""
    line: int | None = None


@dataclass(frozen=True, slots=True)  # one per result line: runs have millions
class Ranked:
    """A result line of a ranked run, where it was read."""

    result: RunLine
    file: str
    line: int


@dataclass
class Submissions:
    """What the files hold: answers and ranked results by run, the files each run came from, and
    the lines that could not be read.

    :param answers: Run id -> its answers, in file order.
    :param ranked: Run id -> its result lines, in file order.
    :param files: Run id -> the files it is in.
    :param unreadable: (file, run the file's name suggests, the error) for each line not read.
    """

    answers: dict[str, list[Answer]] = field(default_factory=dict)
    ranked: dict[str, list[Ranked]] = field(default_factory=dict)
    files: dict[str, list[str]] = field(default_factory=dict)
    unreadable: list[tuple[str, str, InputError]] = field(default_factory=list)


def _answer(record: Any, name: str, line: int, default_run: str) -> Answer:
    if is_report(record):
        report = parse_report(record, name, line, default_run)
        # the ids exampp grade --responses refuses (they go into passage ids) are refused here too
        response_id(report.topic_id, "query id", name, line, first_column=True)
        response_id(report.run_id, "run_id", name, line)
        return Answer(report.run_id, report.topic_id, report.text, report.sentences, report.shape, report.references,
                      dict(report.metadata), name, line)
    if isinstance(record, dict) and "sentences" in record:
        cited = parse_cited_answer(record, name, line)
        sentences = tuple(CitedSentence(s.text, tuple(c.reference for c in s.citations)) for s in cited.sentences)
        return Answer(cited.run_id, cited.topic_id, " ".join(s.text for s in sentences), sentences, "cited",
                      file=name, line=line)
    response = parse_response(record, name, line, default_run)
    return Answer(response.run_id, response.query_id, response.text, file=name, line=line)


def read_submissions(sources: Iterable[PathLike], responses: Iterable[PathLike] = ()) -> Submissions:
    """Every run of the files and folders given (a folder's files in name order).

    :param sources: Run files, answer files, or folders of them.
    :param responses: Answer files or folders only: a file that is not JSONL is a TSV responses file
        (``query_id<TAB>text``, as ``exampp grade --responses`` reads it), not a TREC run.
    """
    found = Submissions()
    for source, answers_only in [(s, False) for s in sources] + [(s, True) for s in responses]:
        for path in report_files(source):
            name = display_name(path)
            default_run = "stdin" if is_stdio(path) else Path(path).name.split(".")[0]
            try:
                _read_file(found, path, name, default_run, answers_only)
            except InputError as exc:  # the file itself (not UTF-8, a broken gzip): the rest of it is not read
                found.unreadable.append((name, default_run, exc))
    return found


def _read_file(found: Submissions, path: PathLike, name: str, default_run: str, answers_only: bool) -> None:
    """The runs of one file into ``found``; a line that cannot be read is kept as such."""
    first, lines = first_nonblank(iter_lines(path))
    if first is None:
        raise InputError(name, None, "the file is empty")
    jsonl = first.lstrip().startswith("{")
    for lineno, text in lines:
        try:
            if not text.strip():
                continue
            if jsonl or answers_only:
                if jsonl:
                    answer = _answer(parse_json(text, name, lineno), name, lineno, default_run)
                else:
                    tsv = parse_tsv_response(text, name, lineno, response_id(default_run, "run id (the file's name)",
                                                                             name, lineno))
                    answer = Answer(tsv.run_id, tsv.query_id, tsv.text, file=name, line=lineno)
                found.answers.setdefault(answer.run_id, []).append(answer)
                run_id = answer.run_id
            else:
                result = parse_run_line(text, name, lineno)
                if result is None:
                    continue
                found.ranked.setdefault(result.runid, []).append(Ranked(result, name, lineno))
                run_id = result.runid
        except InputError as exc:
            found.unreadable.append((name, default_run, exc))
            continue
        files = found.files.setdefault(run_id, [])
        if name not in files:
            files.append(name)
