"""Tables and values as the outputs hold them: JSON-ready values and records, and TSV, for the
commands' output and the jobs' files alike."""
from __future__ import annotations

import math
from typing import Any

import pandas as pd

from exampp.collection.io import PathLike


def json_value(value: Any, *, infinite_as_null: bool = False) -> Any:
    """A value JSON can hold: numpy scalars become Python ones, NaN null (JSON has no NaN), and with
    ``infinite_as_null`` ±inf too (e.g. the MLE ability of a perfect score)."""
    if hasattr(value, "item"):  # numpy scalar
        value = value.item()
    if isinstance(value, float) and (math.isnan(value) or infinite_as_null and math.isinf(value)):
        return None
    return value


def records(table: pd.DataFrame, *, infinite_as_null: bool = False) -> list[dict[str, Any]]:
    """A table's rows as JSON-ready records."""
    return [{k: json_value(v, infinite_as_null=infinite_as_null) for k, v in row.items()}
            for row in table.to_dict(orient="records")]


def tsv(table: pd.DataFrame) -> str:
    """A table as TSV: a header line, then one line per row (full precision, no index, NaN empty)."""
    return table.to_csv(sep="\t", index=False, lineterminator="\n")


def write_tsv(table: pd.DataFrame, path: PathLike) -> None:
    """Write ``table`` as :func:`tsv` to ``path``, replaced atomically."""
    from exampp.collection.io import atomic_write

    with atomic_write(path) as fh:
        fh.write(tsv(table))
