"""IRT response matrices: respondents (e.g. systems) x items (questions), 1 = correct, 0 = wrong,
NaN = missing.

A file holds any exam: CSV or TSV, one row per respondent, one column per item, a header of item
names (optional: without one, items are named ``item1..itemN``), an optional id column
(``id_column``, or found by itself when the first column holds values other than 0/1), an
optional weight column (``weight_column``: how many respondents share the row's pattern, as in
the LSAT data). ``""``, ``NA``, ``NaN`` and ``.`` are missing responses.

:func:`exampp.analysis.irt.responses.responses_from_grades` builds one from grades and runs.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from exampp.errors import InputError
from exampp.files.io import PathLike, display_name, excerpt, held_lines, is_stdio, iter_lines

MISSING = frozenset({"", "na", "nan", "."})


@dataclass(frozen=True)
class Responses:
    """A 0/1 response matrix with what is known about its rows and columns.

    :param matrix: Index = respondent ids, columns = item ids, values 0.0/1.0/NaN.
    :param weights: Each row's frequency (None: every row counts once).
    :param question_query: Each item's query id (empty for matrices read from a file).
    """

    matrix: pd.DataFrame
    weights: np.ndarray | None = None
    question_query: dict[str, str] = field(default_factory=dict)

    @property
    def values(self) -> np.ndarray:
        return self.matrix.to_numpy(dtype=float)

    @property
    def respondents(self) -> list[str]:
        return [str(r) for r in self.matrix.index]

    @property
    def items(self) -> list[str]:
        return [str(c) for c in self.matrix.columns]

    @property
    def total_weight(self) -> float:
        """How many respondents the rows stand for: the summed weights, else the row count."""
        return float(self.weights.sum()) if self.weights is not None else float(len(self.matrix))

    def select(self, items: Collection[str]) -> "Responses":
        """The same respondents on a subset of the items (kept in matrix order)."""
        wanted = set(items)
        keep = [c for c in self.matrix.columns if c in wanted]
        return Responses(self.matrix[keep], self.weights,
                         {q: self.question_query[q] for q in keep if q in self.question_query})

    def without(self, respondents: Collection[str]) -> "Responses":
        """The same items without the given respondents (rows)."""
        keep = ~self.matrix.index.isin(list(respondents))
        return Responses(self.matrix[keep], None if self.weights is None else self.weights[keep], self.question_query)


def _split(line: str, delimiter: str) -> list[str]:
    return [cell.strip() for cell in line.split(delimiter)]


def _binary(cell: str) -> float | None:
    """0.0, 1.0, NaN for missing, or None when the cell is none of these."""
    if cell.lower() in MISSING:
        return np.nan
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if value in (0.0, 1.0) else None


def _delimiter(suffixes: list[str], header: str) -> str:
    suffixes = [s.lower() for s in suffixes]
    if ".csv" in suffixes:
        return ","
    if ".tsv" in suffixes or "\t" in header:
        return "\t"
    return ","


def read_response_matrix(path: PathLike, *, id_column: str | None = None,
                         weight_column: str | None = None) -> Responses:
    """Read a 0/1 response matrix file (CSV/TSV, gzip-aware); see the module docstring.

    The file is held whole, within the bounds of :func:`~exampp.files.io.held_lines`.

    :param path: The matrix file.
    :param id_column: The column of respondent ids; by default the first column when it holds
        values other than 0/1, else none (rows are numbered).
    :param weight_column: A column saying how many respondents share the row's pattern (as in the
        LSAT data); none by default.
    :raises InputError: A bad cell, naming the file, line and column.
    """

    suffixes = [] if is_stdio(path) else Path(path).suffixes
    source, path = path, display_name(path)  # as the file is named in messages
    lines = held_lines(((n, line) for n, line in iter_lines(source) if line.strip()), path)
    if not lines:
        raise InputError(path, None, "empty response matrix")
    delimiter = _delimiter(suffixes, lines[0][1])
    first_line, first = lines[0][0], _split(lines[0][1], delimiter)
    has_header = any(_binary(cell) is None for cell in first)
    if has_header:
        header, rows = first, lines[1:]
        duplicates = sorted(name for name, count in Counter(header).items() if count > 1)
        if duplicates:
            raise InputError(path, first_line,
                             f"duplicate column name(s) in the header: {', '.join(map(repr, duplicates))}")
        if "" in header:
            raise InputError(path, first_line, f"empty column name in the header (column {header.index('') + 1})")
    else:
        if id_column or weight_column:
            raise InputError(path, first_line, "--id-column/--weight-column need a header line naming the columns")
        header, rows = [f"item{j + 1}" for j in range(len(first))], lines
    if not rows:
        raise InputError(path, None, "no respondent rows after the header")
    table = []
    for lineno, line in rows:
        cells = _split(line, delimiter)
        if len(cells) != len(header):
            raise InputError(path, lineno, f"{len(cells)} fields, expected {len(header)} as in the header")
        table.append((lineno, cells))

    def position(name: str | None, option: str) -> int | None:
        if name is None:
            return None
        if name not in header:
            raise InputError(path, first_line,
                             f"{option} {name!r} is not a column (have: {', '.join(map(repr, header))})")
        return header.index(name)

    id_at = position(id_column, "--id-column")
    weight_at = position(weight_column, "--weight-column")
    if id_at is not None and id_at == weight_at:
        raise InputError(path, first_line,
                         f"column {excerpt(header[id_at])} cannot be both the id and the weight column")
    if id_at is None and weight_at != 0 and any(_binary(cells[0]) is None for _, cells in table):
        id_at = 0  # a first column with other values than 0/1 names the respondents
    item_at = [j for j in range(len(header)) if j not in (id_at, weight_at)]
    if not item_at:
        raise InputError(path, first_line, "no item columns")

    values = np.empty((len(table), len(item_at)))
    weights = np.ones(len(table)) if weight_at is not None else None
    ids: list[str] = []
    seen: dict[str, int] = {}
    for i, (lineno, cells) in enumerate(table):
        for k, j in enumerate(item_at):
            value = _binary(cells[j])
            if value is None:
                hint = " (a weight column? use --weight-column)" if _is_count(cells[j]) else ""
                raise InputError(path, lineno, f"column {j + 1} ({excerpt(header[j])}): {excerpt(cells[j])} is not "
                                               f"0, 1 or missing (empty, NA){hint}")
            values[i, k] = value
        if weights is not None and weight_at is not None:  # both or neither
            weights[i] = _weight(path, lineno, weight_at, header, cells[weight_at])
        name = cells[id_at] if id_at is not None else str(i + 1)
        if id_at is not None and not name:
            raise InputError(path, lineno, f"column {id_at + 1} ({excerpt(header[id_at])}): empty respondent id")
        if name in seen:
            raise InputError(path, lineno, f"duplicate respondent id {excerpt(name)} (first on line {seen[name]})")
        seen[name] = lineno
        ids.append(name)
    index_name = header[id_at] if id_at is not None and has_header else "respondent"
    frame = pd.DataFrame(values, index=pd.Index(ids, name=index_name), columns=[header[j] for j in item_at])
    return Responses(frame, weights)


def _is_count(cell: str) -> bool:
    try:
        return float(cell) >= 0 and float(cell).is_integer()
    except ValueError:
        return False


def _weight(path: str, lineno: int, at: int, header: list[str], cell: str) -> float:
    try:
        value = float(cell)
    except ValueError:
        value = np.nan
    if not np.isfinite(value) or value < 0:
        raise InputError(path, lineno, f"column {at + 1} ({excerpt(header[at])}): weight {excerpt(cell)} is not a "
                                       "non-negative number")
    return value
