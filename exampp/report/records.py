"""Tables and values as the outputs hold them: JSON-ready values and records, and TSV, for the
commands' output and the jobs' files alike."""
from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from exampp.files.io import PathLike

if TYPE_CHECKING:  # tables come made: `exampp eval` writes its JSON without loading pandas
    import pandas as pd


SIGNIFICANT = 12
"""Significant digits of a float in the TSV and JSON outputs: a score's own precision (means are
rounded to 12 decimals), without the last bits of its arithmetic (0.8999999999999999 is 0.9)."""


def json_value(value: Any, *, infinite_as_null: bool = False) -> Any:
    """A value JSON can hold: numpy scalars become Python ones, floats :data:`SIGNIFICANT` digits,
    NaN null (JSON has no NaN), and with ``infinite_as_null`` ±inf too (e.g. the MLE ability of a
    perfect score)."""
    if hasattr(value, "item"):  # numpy scalar
        value = value.item()
    if isinstance(value, float):
        if math.isnan(value) or infinite_as_null and math.isinf(value):
            return None
        return significant(value)
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` of ``value`` with every number in it as :func:`json_value` gives it, however
    deep in dicts, lists and tuples (the JSON outputs of every command)."""
    return json.dumps(_ready(value), **kwargs)


def _ready(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_ready(item) for item in value]
    return json_value(value)


def records(table: pd.DataFrame, *, infinite_as_null: bool = False) -> list[dict[str, Any]]:
    """A table's rows as JSON-ready records."""
    return [{cast(str, k): json_value(v, infinite_as_null=infinite_as_null) for k, v in row.items()}  # column names
            for row in table.to_dict(orient="records")]


def table_rows(table: pd.DataFrame, *, index: bool = True) -> Iterable[Any]:
    """``table.itertuples(index=index)``: the rows as named tuples, typed Any: a field holds what its
    column holds (pandas' stubs would type it as any scalar at all)."""
    return table.itertuples(index=index)


def tsv(table: pd.DataFrame) -> str:
    """A table as TSV: a header line, then one line per row (floats :data:`SIGNIFICANT` digits, no
    index, NaN empty)."""
    return table.to_csv(sep="\t", index=False, lineterminator="\n",
                        float_format=lambda value: repr(significant(cast(float, value))))  # given floats only


def significant(value: float) -> float:
    """``value`` to :data:`SIGNIFICANT` digits (0.8999999999999999 is 0.9; 1e-20 stays)."""
    return float(f"{value:.{SIGNIFICANT}g}")


def write_tsv(table: pd.DataFrame, path: PathLike) -> None:
    """Write ``table`` as :func:`tsv` to ``path``, replaced atomically."""
    from exampp.files.io import atomic_write

    with atomic_write(path) as fh:
        fh.write(tsv(table))
