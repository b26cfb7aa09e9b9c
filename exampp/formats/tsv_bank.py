"""Question banks as TSV, for banks written by hand or in a spreadsheet: one question per line,

    query_id<TAB>question[<TAB>answer...]

Lines starting with ``#`` and blank lines are skipped; so is a header line, the first other
line when its first two columns are ``query_id`` and ``question`` (what a spreadsheet exports),
and a byte-order mark before the first line.
The question text is taken verbatim (its id hashes it as it is); answer columns that are blank
are left out (spreadsheets pad short rows with tabs). A question's id is
``<query_id>/<md5 of the text>`` (:func:`~exampp.collection.questions.question_id_for`).

TSV holds the query id, the text and the answers, nothing else: writing a question that would
read back as another one (choices, an id other than the one its text gives, a tab or line
break in its text) raises ValueError naming the question; facets, query texts, ``source`` and
``info`` are left out (:func:`left_out` says which a question loses).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator

from exampp.collection.questions import BankFile, Question, QuestionBank, question_id_for
from exampp.files.io import excerpt
from exampp.formats.exampp_bank import read_question_records

HEADER = ("query_id", "question")
_LAYOUT = "expected query_id<TAB>question[<TAB>answer...]"
_BREAKS = ("\t", "\n", "\r")
_NOT_HELD = ("facet_id", "facet_text", "source", "info")  # Question fields the format has no place for


def read_tsv(lines: Iterable[tuple[int, str]], path: str) -> BankFile:
    """A bank from numbered TSV lines; a line without question text, a bad query id or a
    repeated question is an InputError naming the line."""
    return read_question_records(_rows(lines), path, _question)


def _rows(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, list[str]]]:
    """The columns of each line that holds a question (no comment, blank line or header)."""
    first = True
    for lineno, line in lines:
        if lineno == 1:
            line = line.removeprefix("\ufeff")  # the byte-order mark spreadsheets put before UTF-8 text
        if not line.strip() or line.startswith("#"):
            continue
        columns = line.split("\t")
        if not (first and tuple(columns[:2]) == HEADER):
            yield lineno, columns
        first = False


def _question(columns: list[str]) -> tuple[Question, None]:
    query_id = columns[0]
    if len(columns) < 2 and any(c.isspace() for c in query_id.strip()):  # columns apart, but not by a tab
        raise ValueError(f"no tab: {_LAYOUT}")
    text = columns[1] if len(columns) > 1 else ""
    if not text.strip():
        raise ValueError(f"query {excerpt(query_id)} has no question text: {_LAYOUT}")
    answers = tuple(answer for answer in columns[2:] if answer.strip())
    return Question(query_id=query_id, question_id=question_id_for(query_id, text), text=text, answers=answers), None


def tsv_lines(bank: QuestionBank) -> Iterator[str]:
    """The lines of ``bank`` as TSV (each ending in a newline); ValueError for a question that
    TSV cannot hold (see the module's description)."""
    for q in bank:
        if q.choices:
            raise ValueError(f"question {q.question_id!r} has choices, which the tsv format cannot hold; "
                             "write the 'choices' or 'exampp' format")
        expected = question_id_for(q.query_id, q.text)
        if q.question_id != expected:
            raise ValueError(f"question {q.question_id!r}: the tsv format has no id column, and read back this "
                             f"question would be {expected!r}; write the 'choices' or 'exampp' format")
        for what, value in (("text", q.text), *((f"answer {i}", a) for i, a in enumerate(q.answers, start=1))):
            if any(c in value for c in _BREAKS):
                raise ValueError(f"question {q.question_id!r}: its {what} holds a tab or a line break, which "
                                 "the tsv format cannot hold; write the 'choices' or 'exampp' format")
            if not value.strip():
                raise ValueError(f"question {q.question_id!r}: its {what} is blank, which the tsv format "
                                 "cannot hold; write the 'choices' or 'exampp' format")
        yield "\t".join((q.query_id, q.text, *q.answers)) + "\n"


def left_out(question: Question) -> list[str]:
    """The fields of ``question`` that TSV leaves out (set ones only)."""
    return [name for name in _NOT_HELD if getattr(question, name) is not None]
