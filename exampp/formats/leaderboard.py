"""Leaderboard files: one score per system (run), higher is better.

Text: ``run<whitespace>score`` per line; ``#`` lines are comments; a first line whose score
field is not a number is a header. A table with several measure columns (``run nDCG@10
P@20``, header required) gives one leaderboard per column, picked by name. JSON:
``{"run": score}``, ``{"run": {"measure": score}}``, or a list of records
``[{"run": .., "score": ..}]`` (or a measure name instead of ``score``).
With ``ranks=True`` the number is a rank (1 = best), turned into the score ``-rank``.

A *per-query table* (a header with ``run`` and ``query_id`` columns, or JSON records with those
keys, as ``exampp leaderboard --per-query`` and ``exampp cover --per-query`` write them) gives
each run's mean over the table's queries (a query a run lacks scores 0), and
:func:`read_leaderboard_file` also returns the run x query table. Its score is ``column``: a
measure of a ``measure, value`` table, or a column of another table (default: its only score
column, else ``cover``).
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import pandas as pd

from exampp.collection.ids import check_id
from exampp.errors import InputError
from exampp.files.io import PathLike, atomic_write, display_name, held_lines, iter_lines, parse_json
from exampp.means import exact_mean

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

    A per-query table gives each run's mean.

    :param path: The leaderboard file.
    :param column: The measure column of a multi-column table (or a measure key in JSON) to read.
    :param ranks: Read the numbers as ranks (1 = best) and return ``-rank`` as the score.
    """
    return read_leaderboard_file(path, column=column, ranks=ranks)[0]


def read_leaderboard_file(path: PathLike, *, column: str | None = None, ranks: bool = False
                          ) -> tuple[Leaderboard, pd.DataFrame | None]:
    """:func:`read_leaderboard`, and for a per-query table also its run x query scores (index
    run, one column per query; else None).

    :param path: The leaderboard file.
    :param column: The measure column to read, as :func:`read_leaderboard` takes it.
    :param ranks: Read the numbers as ranks (1 = best), as :func:`read_leaderboard` does.
    """
    name = display_name(path)
    what = "rank" if ranks else SCORE
    lines = held_lines(iter_lines(path), name)  # read once (a pipe cannot be read twice); leaderboards are small
    first = next((line.lstrip() for _, line in lines if line.strip()), "")
    records = _per_query_records(lines, name, first)
    if records is not None:
        if ranks:
            raise InputError(name, None, "a per-query table holds scores, not ranks")
        scores = _per_query_scores(records, name, column)
        return {cast(str, run): exact_mean(row) for run, row in scores.iterrows()}, scores
    reader = _read_json if first[:1] in ("{", "[") else _read_text
    board = reader(lines, name, column, ranks, what)
    if not board:
        raise InputError(name, None, "empty leaderboard: no runs")
    return board, None


QUERY = "query_id"


def _per_query_records(lines: list[tuple[int, str]], path: str, first: str
                       ) -> list[tuple[int | None, dict[str, Any]]] | None:
    """``(line, record)`` of a per-query table (None when the file is not one)."""
    if first[:1] == "[":
        data = parse_json("\n".join(line for _, line in lines), path)
        if not (isinstance(data, list) and data and all(isinstance(r, dict) for r in data)
                and all("run" in r and QUERY in r for r in data)):
            return None
        return [(None, record) for record in data]
    if first[:1] == "{":
        return None
    rows = [(lineno, line.split()) for lineno, line in lines if line.strip() and not line.lstrip().startswith("#")]
    header = rows[0][1] if rows else []
    if "run" not in header or QUERY not in header:
        return None
    out: list[tuple[int | None, dict[str, Any]]] = []
    for lineno, fields in rows[1:]:
        if len(fields) != len(header):
            raise InputError(path, lineno, f"expected {len(header)} fields, found {len(fields)}")
        out.append((lineno, dict(zip(header, fields))))
    return out


def _per_query_scores(records: list[tuple[int | None, dict[str, Any]]], path: str, column: str | None
                      ) -> pd.DataFrame:
    """The run x query table of one score of per-query records."""
    if not records:
        raise InputError(path, None, "empty per-query table: no runs")
    keys = [k for k in records[0][1] if k not in ("run", QUERY)]
    if "measure" in keys and "value" in keys:  # long table of several measures
        measures = list(dict.fromkeys(str(r["measure"]) for _, r in records))
        if column is None and len(measures) > 1:
            raise InputError(path, None, f"several measures ({', '.join(measures)}); pick one by name")
        if column is not None and column not in measures:
            raise InputError(path, None, f"no measure {column!r}; measures are {', '.join(measures)}")
        measure = column or measures[0]
        records = [(line, r) for line, r in records if str(r["measure"]) == measure]
        key = "value"
    else:
        if column is not None and column not in keys:
            raise InputError(path, None, f"no column {column!r}; columns are {', '.join(keys)}")
        if column is None and len(keys) > 1 and "cover" not in keys:
            raise InputError(path, None, f"several score columns ({', '.join(keys)}); pick one by name")
        key = column or (keys[0] if len(keys) == 1 else "cover")
    scores: dict[str, dict[str, float]] = {}
    for line, record in records:
        run, query = str(record.get("run")), str(record.get(QUERY))
        if key not in record:
            raise InputError(path, line, f"no {key!r} in this record")
        if query in scores.setdefault(run, {}):
            raise InputError(path, line, f"duplicate run {run!r} and query {query!r}")
        scores[run][query] = _number(path, line, record[key], key)
    for run in scores:  # the run names' checks of leaderboards
        try:
            check_id(run, "run name")
        except ValueError as exc:
            raise InputError(path, None, str(exc)) from None
    table = pd.DataFrame.from_dict(scores, orient="index").fillna(0.0).sort_index()
    table.index.name = "run"
    return table[sorted(table.columns)]


def write_leaderboard(board: Mapping[str, float] | pd.DataFrame, path: PathLike) -> None:
    """Write a leaderboard best-first, atomically. Floats keep full precision.

    :param board: ``{run: score}``, written as ``run<TAB>score`` (JSON: ``{run: score}``); or a
        DataFrame (index = run, one column per measure, ordered by its first column), written with a
        ``run`` header naming the measures (JSON: a list of ``{"run", measure: value}`` records).
    :param path: The file to write: JSON when it ends in .json(.gz), else TSV.
    """

    path = Path(path)
    table = board if isinstance(board, pd.DataFrame) else pd.DataFrame({SCORE: pd.Series(board, dtype=float)})
    order = sorted(table.index, key=lambda run: (-cast(float, table.at[run, table.columns[0]]), str(run)))
    table = table.loc[order]
    as_json = path.name.removesuffix(".gz").endswith(".json")
    _check_names(table, as_json)
    with atomic_write(path) as fh:
        if as_json:
            if isinstance(board, pd.DataFrame):
                records = [{"run": str(run), **{str(c): float(v) for c, v in row.items()}}
                           for run, row in table.iterrows()]
                json.dump(records, fh, indent=1)
            else:
                json.dump({str(run): float(cast(float, table.at[run, SCORE])) for run in table.index}, fh, indent=1)
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
