"""Per-topic evaluation results in the line formats of TREC AutoJudge's ``autojudge-evaluate``
(and ``autojudge_base``'s ``Leaderboard``): one value per run, topic and measure.

============== =========================================================================
``tot``        ``run measure topic value``
``ir_measures`` ``run topic measure value``
``jsonl``      ``{"run_id": .., "topic_id": .., "measure": .., "value": ..}`` per line
``trec_eval``  a folder of one file per run, ``measure topic value``; the run is the file's name
============== =========================================================================

Columns are tab-separated when written and split on whitespace when read, so no id may hold
whitespace. Besides its topics' rows, a run has one row per measure whose topic is ``all``: its
mean over the topics. ``autojudge-evaluate`` ranks runs by those rows and checks that every run
has the same topics and the same measures; so exampp writes a value for every run, topic and
measure, and a value a run lacks is written as 0, the score exampp gives a query a run does not
answer (its leaderboards' means count it as 0 too). No header line is written.

Read, one measure gives a leaderboard: each run's ``all`` row where it has one, else its mean over
its topics; and the run x topic table of its per-topic rows (a topic a run lacks scores 0), which
``exampp correlate`` uses query by query and for its bootstrap.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from numbers import Real
from pathlib import Path
from typing import TYPE_CHECKING, Any

from exampp.collection.ids import check_id
from exampp.errors import InputError
from exampp.files.io import PathLike, atomic_write, display_name, iter_lines, parse_json
from exampp.means import exact_mean

if TYPE_CHECKING:  # the CLI takes the format names from here: pandas waits until a table is read
    import pandas as pd

EVAL_FORMATS = ("tot", "ir_measures", "jsonl", "trec_eval")
LINE_FORMATS = EVAL_FORMATS[:3]
"""The formats of one file; ``trec_eval`` is a folder of one file per run."""
ALL = "all"
"""The topic of a run's mean."""

# where each column is in a line of each text format
_COLUMNS = {
    "tot": ("run", "measure", "topic", "value"),
    "ir_measures": ("run", "topic", "measure", "value"),
    "trec_eval": ("measure", "topic", "value"),
}


def eval_result_lines(values: pd.DataFrame, format: str) -> Iterator[str]:
    """The lines of ``values`` in a one-file format, each ending in a newline: for every run
    (by name) its topics' rows (by topic), then its ``all`` rows.

    :param values: Columns ``run, query_id, measure, value`` (as
        :func:`exampp.scoring.per_query_measures` returns them), or ``run, query_id`` and one column
        per measure.
    :param format: One of :data:`LINE_FORMATS`.
    :raises ValueError: An unknown format, an id the formats cannot hold (whitespace, a topic named
        ``all``), a value that is not a finite number.
    """
    if format not in LINE_FORMATS:
        raise ValueError(f"unknown format {format!r}; expected one of {', '.join(LINE_FORMATS)}")
    for run, rows in _complete(values):
        yield from _lines(run, rows, format)


def write_eval_results(values: pd.DataFrame, path: PathLike, format: str) -> int:
    """Write ``values`` atomically: a file, or for ``trec_eval`` a folder of one file per run.

    :param values: Per-topic values, as :func:`eval_result_lines` takes them.
    :param path: The file (``-``: standard output), or the folder for ``trec_eval``.
    :param format: One of :data:`EVAL_FORMATS`.
    :returns: The number of runs written.
    :raises ValueError: As :func:`eval_result_lines` (nothing is written then); for ``trec_eval`` also
        a run name that cannot name a file (``/``, a leading ``.``, which ``autojudge-evaluate`` skips
        as hidden).
    """
    if format not in EVAL_FORMATS:
        raise ValueError(f"unknown format {format!r}; expected one of {', '.join(EVAL_FORMATS)}")
    runs = _complete(values)
    if format != "trec_eval":
        with atomic_write(path) as fh:
            for run, rows in runs:
                fh.writelines(_lines(run, rows, format))
        return len(runs)
    for run, _ in runs:
        if "/" in run or run.startswith("."):
            raise ValueError(f"run name {run!r} cannot name a trec_eval file")
    folder = Path(path)
    # a run file left from another leaderboard would be read back as one of its runs
    stale = sorted(p.name for p in folder.iterdir() if not p.name.startswith(".") and p.name not in dict(runs)) \
        if folder.is_dir() else []
    if stale:
        raise ValueError(f"{folder} holds files of runs not in this leaderboard ({', '.join(stale[:5])}): "
                         "write the trec_eval format into an empty folder")
    folder.mkdir(parents=True, exist_ok=True)
    for run, rows in runs:
        with atomic_write(folder / run) as fh:
            fh.writelines(_lines(run, rows, format))
    return len(runs)


def _complete(values: pd.DataFrame) -> list[tuple[str, list[tuple[str, str, float]]]]:
    """Per run (by name), its ``(topic, measure, value)`` rows on every topic and measure of the
    table (0 where it has none), then its ``all`` rows."""
    if not {"run", "query_id"} <= set(values.columns):
        raise ValueError("per-topic values need the columns run and query_id")
    if not {"measure", "value"} <= set(values.columns):  # one column per measure
        values = values.melt(id_vars=["run", "query_id"], var_name="measure", value_name="value")
    cells: dict[tuple[str, str, str], float] = {}
    for run, topic, measure, value in values[["run", "query_id", "measure", "value"]].itertuples(index=False):
        run, topic, measure = str(run), str(topic), str(measure)
        check_id(run, "run name")
        check_id(topic, "topic id")
        check_id(measure, "measure name")
        if topic == ALL:
            raise ValueError(f"a topic named {ALL!r} would read as run {run!r}'s mean")
        if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
            raise ValueError(f"run {run!r}, topic {topic!r}, {measure}: {value!r} is not a finite number")
        if (run, topic, measure) in cells:
            raise ValueError(f"run {run!r}, topic {topic!r}, {measure}: two values")
        cells[run, topic, measure] = float(value)
    if not cells:
        raise ValueError("no values to write")
    runs = sorted({run for run, _, _ in cells})
    topics = sorted({topic for _, topic, _ in cells})
    measures = list(dict.fromkeys(measure for _, _, measure in cells))
    out = []
    for run in runs:
        rows = [(topic, measure, cells.get((run, topic, measure), 0.0)) for topic in topics for measure in measures]
        means = [(ALL, m, exact_mean(cells.get((run, t, m), 0.0) for t in topics)) for m in measures]
        out.append((run, rows + means))
    return out


def _lines(run: str, rows: list[tuple[str, str, float]], format: str) -> Iterator[str]:
    for topic, measure, value in rows:
        if format == "jsonl":
            yield json.dumps({"run_id": run, "topic_id": topic, "measure": measure, "value": value}) + "\n"
        else:
            fields = {"run": run, "measure": measure, "topic": topic, "value": repr(value)}
            yield "\t".join(fields[column] for column in _COLUMNS[format]) + "\n"


@dataclass(frozen=True)
class _Row:
    run: str
    topic: str
    measure: str
    value: Any  # as read: a string, or a JSON value
    where: str  # the file, for messages
    line: int


def read_eval_results(path: PathLike, format: str, *, measure: str | None = None
                      ) -> tuple[dict[str, float], pd.DataFrame | None]:
    """One measure of an evaluation results file: each run's score and its per-topic scores.

    :param path: The file (gzip allowed; ``-`` is standard input); for ``trec_eval`` a folder of
        one file per run, or one such file.
    :param format: One of :data:`EVAL_FORMATS`.
    :param measure: The measure to read; may be left out when the file holds one.
    :returns: ``{run: score}``: the run's ``all`` row, else its mean over its topics; and the run x
        topic table (index run, a column per topic, 0 where a run lacks the topic), None when the
        file has only ``all`` rows.
    :raises InputError: A malformed line, a duplicate row, a value that is not a number, a measure
        the file lacks, naming the file and the line.
    """
    if format not in EVAL_FORMATS:
        raise ValueError(f"unknown format {format!r}; expected one of {', '.join(EVAL_FORMATS)}")
    name = display_name(path)
    rows = list(_read_rows(path, format))
    if not rows:
        raise InputError(name, None, "no evaluation results: the file has no rows")
    measures = list(dict.fromkeys(row.measure for row in rows))
    if measure is None:
        if len(measures) > 1:
            raise InputError(name, None, f"several measures ({', '.join(measures)}); pick one by name")
        measure = measures[0]
    elif measure not in measures:
        raise InputError(name, None, f"no measure {measure!r}; measures are {', '.join(measures)}")
    means: dict[str, float] = {}
    scores: dict[str, dict[str, float]] = {}
    seen: dict[tuple[str, str], str] = {}
    for row in rows:
        if row.measure != measure:
            continue
        where = f"{row.where}:{row.line}"
        if (row.run, row.topic) in seen:
            raise InputError(row.where, row.line, f"run {row.run!r}, topic {row.topic!r}: {measure} again "
                                                  f"(first on {seen[row.run, row.topic]})")
        seen[row.run, row.topic] = where
        value = _number(row, measure)
        if row.topic == ALL:
            means[row.run] = value
        else:
            scores.setdefault(row.run, {})[row.topic] = value
    board = {run: means.get(run, exact_mean(scores.get(run, {}).values())) for run in sorted({*means, *scores})}
    if not scores:
        return board, None
    import pandas as pd

    table = pd.DataFrame.from_dict(scores, orient="index").fillna(0.0).sort_index()
    table.index.name = "run"
    return board, table[sorted(table.columns)]


def _number(row: _Row, measure: str) -> float:
    text = row.value
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise InputError(row.where, row.line, f"{measure}: value {json.dumps(text)[:40]} is not a number")
    try:
        value = float(text)
    except (ValueError, OverflowError):
        raise InputError(row.where, row.line, f"{measure}: value {str(text)[:40]!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(row.where, row.line, f"{measure}: value {text!r} is not a finite number")
    return value


def _read_rows(path: PathLike, format: str) -> Iterator[_Row]:
    if format == "trec_eval" and Path(path).is_dir():
        files = sorted(f for f in Path(path).iterdir() if f.is_file() and not f.name.startswith("."))
        if not files:
            raise InputError(display_name(path), None, "no run files in this folder")
        for file in files:
            yield from _file_rows(file, format)
        return
    if Path(path).is_dir():
        raise InputError(display_name(path), None, f"a folder: the {format} format is one file "
                                                   "(only trec_eval results are a folder of run files)")
    yield from _file_rows(path, format)


def _file_rows(path: PathLike, format: str) -> Iterator[_Row]:
    name = display_name(path)
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        if format == "jsonl":
            yield _json_row(parse_json(line, name, lineno), name, lineno)
            continue
        fields = line.split()
        columns = _COLUMNS[format]
        if len(fields) != len(columns):
            raise InputError(name, lineno, f"expected {len(columns)} columns '{' '.join(columns)}' ({format}), "
                                           f"found {len(fields)}")
        named = dict(zip(columns, fields))
        if lineno == 1 and named["value"] == "value":  # a header naming the columns
            continue
        run = Path(name).name if format == "trec_eval" else named["run"]
        yield _Row(_id(run, "run", name, lineno), _id(named["topic"], "topic", name, lineno), named["measure"],
                   named["value"], name, lineno)


def _json_row(record: Any, name: str, lineno: int) -> _Row:
    keys = ("run_id", "topic_id", "measure", "value")
    if not isinstance(record, Mapping) or any(key not in record for key in keys):
        raise InputError(name, lineno, "expected an object with run_id, topic_id, measure and value")
    run, topic, measure = (str(record[key]) if isinstance(record[key], (str, int)) else record[key]
                           for key in keys[:3])
    if not isinstance(measure, str):
        raise InputError(name, lineno, f"measure {json.dumps(measure)[:40]} is not a name")
    return _Row(_id(run, "run", name, lineno), _id(topic, "topic", name, lineno), measure, record["value"], name,
                lineno)


def _id(value: Any, what: str, name: str, lineno: int) -> str:
    try:
        return check_id(value, f"{what} id")
    except ValueError as exc:
        raise InputError(name, lineno, str(exc)) from None
