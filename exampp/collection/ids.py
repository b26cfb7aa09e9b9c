"""Ids that end up in whitespace-separated line formats (runs, qrels, leaderboards).

A query, passage, run or question id is written verbatim as a column of such a file, so an id
with whitespace in it would split into two columns, a newline in it would forge a line of its
own, and a control character reads differently in every tool. Readers check ids with
:func:`check_id` and report the file and line of a bad one; writers check again, so that nothing
built in Python can forge a line either.

Line formats are split on ASCII whitespace only, as trec_eval does; any other whitespace or
control character inside a line is refused (:func:`line_problem`), because tools that split on
Unicode whitespace (Python's ``str.split``) would read such a line differently.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

# Any whitespace (Python's \s is str.isspace) or control character (Unicode category Cc).
_NOT_IN_ID = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")
# In a line: any whitespace but the space and the tab (and the newline that ends it), any control
# character. A CR, VT or FF breaks the line for other tools (old Mac files, str.splitlines).
_NOT_IN_LINE = re.compile(r"[^\S \t\n]|[\x00-\x08\x0e-\x1f\x7f-\x9f]")
_LINE_BREAKS = "\r\x0b\x0c"
# A lone UTF-16 surrogate: JSON can escape one, but no UTF-8 file (run, qrels, TSV) or SQLite text holds it.
SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` with each lone UTF-16 surrogate replaced by U+FFFD, so that it can be written as UTF-8."""
    return SURROGATE.sub("\ufffd", text)


def _describe(char: str) -> str:
    return repr(char) if char.isprintable() else f"U+{ord(char):04X}"


def line_problem(line: str) -> str | None:
    """What is wrong with the first character in ``line`` that no line format may hold, else None."""
    match = _NOT_IN_LINE.search(line)
    if match is None:
        return None
    char = match.group()
    what = ("a line break inside a line (lines end with \\n)" if char in _LINE_BREAKS
            else "only spaces and tabs may separate the columns")
    return f"character {_describe(char)} at column {match.start() + 1}: {what}"


def id_problem(value: object, *, first_column: bool = False) -> str | None:
    """Why ``value`` cannot be an id in a line format, or None when it can.

    ``first_column``: the id starts a line (query ids), where a leading ``#`` makes the line a
    comment.
    """
    if not isinstance(value, str):
        return f"must be a string, found {type(value).__name__}"
    if not value:
        return "is empty"
    match = _NOT_IN_ID.search(value)
    if match is not None:
        what = "whitespace" if match.group().isspace() else "a control character"
        return (f"contains {what} ({_describe(match.group())}), which would break the line formats "
                "(runs, qrels) it is written to")
    surrogate = SURROGATE.search(value)
    if surrogate is not None:
        return f"contains an unpaired UTF-16 surrogate ({_describe(surrogate.group())}), which no UTF-8 file can hold"
    if first_column and value.startswith("#"):
        return "starts with '#': run and qrels files read such a line as a comment"
    return None


def check_id(value: object, what: str, *, first_column: bool = False) -> str:
    """``value`` when it can be an id (see :func:`id_problem`), else ValueError naming ``what``."""
    problem = id_problem(value, first_column=first_column)
    if problem is not None:
        raise ValueError(f"{what} {value!r} {problem}")
    return value  # type: ignore[return-value]


def check_query_id(value: object, what: str = "query id") -> str:
    return check_id(value, what, first_column=True)


def some_ids(ids: Iterable[str], shown: int = 3) -> str:
    """A few of ``ids`` for a message, sorted: ``'Q1', 'Q2', 'Q3' and 40 more`` (enough to see two
    files number their queries differently)."""
    unique = sorted(set(ids))
    if not unique:
        return "none"
    more = f" and {len(unique) - shown} more" if len(unique) > shown else ""
    return ", ".join(map(repr, unique[:shown])) + more
