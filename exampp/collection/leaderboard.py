"""Leaderboard files: one score per system (run), higher is better.

Text: ``run<whitespace>score`` per line; ``#`` lines are comments; a first line whose score
field is not a number is a header. A table with several measure columns (``run nDCG@10
P@20``, header required) gives one leaderboard per column, picked by name. JSON:
``{"run": score}``, ``{"run": {"measure": score}}``, or a list of records
``[{"run": .., "score": ..}]`` (or a measure name instead of ``score``).
With ``ranks=True`` the number is a rank (1 = best), turned into the score ``-rank``.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from exampp.collection.ids import check_id
from exampp.collection.io import PathLike, atomic_write, display_name, iter_lines, parse_json
from exampp.errors import InputError

Leaderboard = dict[str, float]
"""``{run: score}``, higher is better."""

SCORE = "score"


def _number(path: str, line: int | None, text: Any, what: str) -> float:
    if isinstance(text, bool):  # json true/false would pass float()
        raise InputError(path, line, f"{what} {text!r} is not a number")
    try:
        value = float(text)
    except (TypeError, ValueError, OverflowError):
        raise InputError(path, line, f"{what} {str(text)[:40]!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(path, line, f"{what} {text!r} is not a finite number")
    return value


def _is_number(text: str) -> bool:
    try:
        float(text)
    except (ValueError, OverflowError):
        return False
    return True


def _add(board: Leaderboard, path: str, line: int | None, run: Any, value: float, ranks: bool) -> None:
    try:  # run names are printed in tables and matched against run files' runids
        run = check_id(run if isinstance(run, str) else str(run), "run name")
    except ValueError as exc:
        raise InputError(path, line, str(exc)) from None
    if run in board:
        raise InputError(path, line, f"duplicate run {run!r}")
    board[run] = -value if ranks else value


def _read_text(lines: list[tuple[int, str]], path: str, column: str | None, ranks: bool, what: str) -> Leaderboard:
    board: Leaderboard = {}
    width: int | None = None
    index = 1
    for lineno, line in lines:
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if width is None:  # first data line: header or not
            width = len(fields)
            if width < 2:
                raise InputError(path, lineno, f"expected 'run {what}', found {len(fields)} field(s)")
            is_header = not all(_is_number(f) for f in fields[1:])
            if column is not None:
                if not is_header:
                    raise InputError(path, lineno, f"no header line naming the columns, cannot pick {column!r}")
                if column not in fields[1:]:
                    raise InputError(path, lineno, f"no column {column!r}; columns are {', '.join(fields[1:])}")
                index = fields.index(column, 1)
            elif width > 2:
                names = ", ".join(fields[1:]) if is_header else f"{width - 1} unnamed columns"
                raise InputError(path, lineno, f"several score columns ({names}); pick one by name")
            if is_header:
                continue
        if len(fields) != width:
            raise InputError(path, lineno, f"expected {width} fields, found {len(fields)}")
        _add(board, path, lineno, fields[0], _number(path, lineno, fields[index], what), ranks)
    return board


def _line_of(text: str, pattern: str, occurrence: int = 1) -> int | None:
    """Line of the ``occurrence``-th match of ``pattern`` (JSON gives no positions for values)."""
    for count, match in enumerate(re.finditer(pattern, text), start=1):
        if count == occurrence:
            return text.count("\n", 0, match.start()) + 1
    return None


def _key_pattern(key: Any) -> str:
    return re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:"


def _pick(path: str, line: int | None, run: Any, value: Any, column: str | None, what: str) -> Any:
    if isinstance(value, Mapping):
        if column is None:
            if len(value) != 1:
                raise InputError(path, line,
                                 f"run {run!r}: several scores ({', '.join(map(repr, value))}); pick one by name")
            return next(iter(value.values()))
        if column not in value:
            raise InputError(path, line, f"run {run!r}: no {column!r}")
        return value[column]
    if column is not None:
        raise InputError(path, line, f"run {run!r}: a bare {what}, no column {column!r}")
    return value


def _read_json(lines: list[tuple[int, str]], path: str, column: str | None, ranks: bool, what: str) -> Leaderboard:
    text = "\n".join(line for _, line in lines)
    duplicates: list[str] = []

    def note_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                duplicates.append(key)
            seen.add(key)
        return dict(pairs)

    data = parse_json(text, path, object_pairs_hook=note_duplicates)
    if duplicates:
        key = duplicates[0]
        raise InputError(path, _line_of(text, _key_pattern(key), 2), f"duplicate key {key!r}")
    board: Leaderboard = {}
    if isinstance(data, dict):
        for run, value in data.items():
            line = _line_of(text, _key_pattern(run))
            score = _number(path, line, _pick(path, line, run, value, column, what), f"run {run!r}: {what}")
            _add(board, path, line, run, score, ranks)
    elif isinstance(data, list):
        key = column or SCORE
        for position, record in enumerate(data, start=1):
            if not isinstance(record, dict) or "run" not in record:
                raise InputError(path, None, f"record {position}: expected an object with 'run' and {key!r}")
            # records before this one each had one "run" key, so the n-th such key is this record's
            line = _line_of(text, _key_pattern("run"), position)
            if key not in record:
                raise InputError(path, line, f"record {position}: expected an object with 'run' and {key!r}")
            _add(board, path, line, record["run"], _number(path, line, record[key], what), ranks)
    else:
        raise InputError(path, None, "expected a JSON object {run: score} or a list of {run, score} records")
    return board


def read_leaderboard(path: PathLike, *, column: str | None = None, ranks: bool = False) -> Leaderboard:
    """Read a leaderboard file (text or JSON, detected by content; gzip allowed; ``-`` is stdin).

    ``column`` picks a measure column of a multi-column table (or a measure key in JSON);
    ``ranks`` reads the numbers as ranks (1 = best) and returns ``-rank`` as the score.
    """
    name = display_name(path)
    what = "rank" if ranks else SCORE
    lines = list(iter_lines(path))  # read once (a pipe cannot be read twice); leaderboards are small
    first = next((line.lstrip() for _, line in lines if line.strip()), "")
    reader = _read_json if first[:1] in ("{", "[") else _read_text
    board = reader(lines, name, column, ranks, what)
    if not board:
        raise InputError(name, None, "empty leaderboard: no runs")
    return board


def write_leaderboard(board: Mapping[str, float] | pd.DataFrame, path: PathLike) -> None:
    """Write a leaderboard best-first, atomically: JSON when ``path`` ends in .json(.gz), else TSV.

    A mapping is written as ``run<TAB>score`` (JSON: ``{run: score}``); a DataFrame (index = run,
    one column per measure, ordered by its first column) with a ``run`` header naming the
    measures (JSON: a list of ``{"run", measure: value}`` records). Floats keep full precision.
    """
    path = Path(path)
    table = board if isinstance(board, pd.DataFrame) else pd.DataFrame({SCORE: pd.Series(board, dtype=float)})
    order = sorted(table.index, key=lambda run: (-table.at[run, table.columns[0]], str(run)))
    table = table.loc[order]
    as_json = path.name.removesuffix(".gz").endswith(".json")
    _check_names(table, as_json)
    with atomic_write(path) as fh:
        if as_json:
            if isinstance(board, pd.DataFrame):
                records = [{"run": str(run), **{str(c): float(v) for c, v in row.items()}} for run, row in table.iterrows()]
                json.dump(records, fh, indent=1)
            else:
                json.dump({str(run): float(table.at[run, SCORE]) for run in table.index}, fh, indent=1)
            fh.write("\n")
        else:
            fh.write("\t".join(["run", *map(str, table.columns)]) + "\n")
            for run, row in table.iterrows():
                fh.write("\t".join([str(run), *(repr(float(v)) for v in row)]) + "\n")


def _check_names(table: pd.DataFrame, as_json: bool) -> None:
    """ValueError for a run or measure name that would not read back as itself: whitespace would
    split it, '#' start a comment line (text), a number as measure name make the header a data
    line, and a measure named 'run' take the run's place in a JSON record."""
    for run in table.index:
        check_id(str(run), "run name", first_column=not as_json)
    for column in table.columns:
        check_id(str(column), "measure name")
        if str(column) == "run" or _is_number(str(column)):
            raise ValueError(f"measure name {str(column)!r} would not be read back as a measure name")
