"""Systems' components tables: which retriever, reranker, generator… each system is made of.

TSV with the header ``system<TAB>component…`` and one line per system, e.g.::

    system	retriever	reranker
    bm25+monot5	bm25	monot5

The IRT analysis reads a system's ability as the sum of its components' effects
(:class:`exampp.analysis.irt.hierarchical.HierarchicalAbility`).
"""
from __future__ import annotations

import pandas as pd

from exampp.errors import InputError
from exampp.files.io import PathLike, display_name, iter_lines


def read_systems(path: PathLike) -> pd.DataFrame:
    """The components table: a ``system`` column, then one column per component (all strings).

    :param path: The TSV file (see the module docstring).
    """

    rows: list[list[str]] = []
    header: list[str] | None = None
    seen: set[str] = set()
    name = display_name(path)  # '-' (standard input) is named <stdin>
    for number, line in iter_lines(path):
        if not line.strip():
            continue
        fields = line.rstrip("\r\n").split("\t")
        if header is None:
            if fields[0] != "system" or len(fields) < 2:
                raise InputError(name, number, "header must be 'system<TAB>component…' with at least one component")
            header = fields
            continue
        if len(fields) != len(header):
            raise InputError(name, number, f"expected {len(header)} tab-separated fields, got {len(fields)}")
        if fields[0] in seen:
            raise InputError(name, number, f"system {fields[0]!r} listed twice")
        seen.add(fields[0])
        rows.append(fields)
    if header is None:
        raise InputError(name, None, "empty systems file")
    return pd.DataFrame(rows, columns=header)
