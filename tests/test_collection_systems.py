"""Systems' components tables (collection.systems.read_systems)."""
from __future__ import annotations

import pandas as pd
import pytest

from exampp.errors import InputError
from exampp.formats.systems import read_systems


def test_reads_a_components_table(write):
    path = write("systems.tsv", "system\tretriever\treranker\nbm25+t5\tbm25\tmonot5\n\ndense\tdense\tnone\n")
    expected = pd.DataFrame([["bm25+t5", "bm25", "monot5"], ["dense", "dense", "none"]],
                            columns=["system", "retriever", "reranker"])
    pd.testing.assert_frame_equal(read_systems(path), expected)


@pytest.mark.parametrize(("text", "message"), [
    ("system\tretriever\nA\tbm25\textra\n", "systems.tsv:2: expected 2 tab-separated fields, got 3"),
    ("run\tretriever\nA\tbm25\n", "systems.tsv:1: header must be 'system<TAB>component…' with at least one component"),
    ("system\n", "systems.tsv:1: header must be 'system<TAB>component…' with at least one component"),
    ("system\tretriever\nA\tbm25\nA\tdense\n", "systems.tsv:3: system 'A' listed twice"),
    ("\n", "systems.tsv: empty systems file"),
])
def test_bad_tables_are_located_errors(write, text, message):
    path = write("systems.tsv", text)
    with pytest.raises(InputError) as error:
        read_systems(path)
    assert str(error.value) == f"{path.parent}/{message}"
