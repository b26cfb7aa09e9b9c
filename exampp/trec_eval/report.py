"""Writing evaluation results: trec_eval's text, JSON, TSV and a pandas DataFrame."""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence

from exampp.trec_eval.engine import Score
from exampp.trec_eval.measure import Value

COLUMNS = ("run", "measure", "query", "value")


def format_trec(scores: Sequence[Score]) -> str:
    """Lines exactly as trec_eval prints them: ``printf("%-22s\\t%s\\t<fmt>\\n", measure, query, value)``.

    :param scores: The scores, as :func:`~exampp.trec_eval.engine.evaluate` returns them.
    """

    return "".join(f"{s.measure:<22}\t{s.query}\t{printf(s.fmt, s.value)}\n" for s in scores)


def printf(fmt: str, value: Value) -> str:
    """``fmt % value`` as glibc's printf writes it: a NaN whose sign bit is set prints as ``-nan``
    (Python prints every NaN as ``nan``)."""
    if isinstance(value, float) and value != value and math.copysign(1.0, value) < 0:
        width = _WIDTH.match(fmt)
        return "-nan".rjust(int(width.group(1)) if width and width.group(1) else 0)
    return fmt % value


_WIDTH = re.compile(r"%(\d*)")


def records(results: Mapping[str, Sequence[Score]]) -> list[dict]:
    """One dict per value, ``run``/``measure``/``query``/``value``, values at full precision."""
    return [{"run": run, "measure": s.measure, "query": s.query, "value": s.value}
            for run, scores in results.items() for s in scores]


def format_json(results: Mapping[str, Sequence[Score]]) -> str:
    return json.dumps(records(results), indent=1) + "\n"


def format_tsv(results: Mapping[str, Sequence[Score]]) -> str:
    lines = ["\t".join(COLUMNS)]
    lines += [f"{r['run']}\t{r['measure']}\t{r['query']}\t{r['value']}" for r in records(results)]
    return "\n".join(lines) + "\n"


def to_dataframe(results: Mapping[str, Sequence[Score]]):
    """A long-format pandas DataFrame with columns run, measure, query, value.

    ``df.pivot_table(index="run", columns="measure", values="value")`` (on the ``all`` rows)
    gives a leaderboard.
    """
    import pandas as pd

    return pd.DataFrame(records(results), columns=list(COLUMNS))
