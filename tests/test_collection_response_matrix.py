"""IRT response matrix files (collection.response_matrix): CSV/TSV, ids, weights, missing cells, errors."""
from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from exampp.errors import InputError
from exampp.formats.response_matrix import Responses, read_response_matrix


def test_without_drops_rows_and_their_weights():
    responses = Responses(pd.DataFrame([[1, 0], [0, 1], [1, 1]], index=["x", "y", "z"], columns=["a", "b"]),
                          np.array([2.0, 3.0, 4.0]))
    kept = responses.without(["y"])
    assert kept.respondents == ["x", "z"] and kept.weights.tolist() == [2.0, 4.0]


def test_tsv_with_header_id_and_missing(write):
    path = write("m.tsv", "system\tx1\tx2\tx3\nbm25\t1\t0\tNA\nbert\t1\t1\t1\nt5\t0\t\t0\n")
    responses = read_response_matrix(path)
    assert responses.respondents == ["bm25", "bert", "t5"]
    assert responses.items == ["x1", "x2", "x3"]
    np.testing.assert_array_equal(responses.values, [[1, 0, np.nan], [1, 1, 1], [0, np.nan, 0]])
    assert responses.weights is None


def test_csv_with_id_column_by_name_and_weights(write):
    path = write("m.csv", "i1,who,i2,n\n1,a,0,3\n0,b,1,2.5\n")
    responses = read_response_matrix(path, id_column="who", weight_column="n")
    assert responses.respondents == ["a", "b"]
    assert responses.items == ["i1", "i2"]
    np.testing.assert_array_equal(responses.values, [[1, 0], [0, 1]])
    np.testing.assert_array_equal(responses.weights, [3, 2.5])


def test_headerless_gzipped_matrix(tmp_path):
    path = tmp_path / "m.txt.gz"
    path.write_bytes(gzip.compress(b"1\t0\n0\t1\n1\t1\n"))
    responses = read_response_matrix(path)
    assert responses.items == ["item1", "item2"]
    assert responses.respondents == ["1", "2", "3"]
    np.testing.assert_array_equal(responses.values, [[1, 0], [0, 1], [1, 1]])


def test_lsat7_frequencies():
    from conftest import shared_path

    responses = read_response_matrix(shared_path("data", "irt", "lsat7.tsv"), weight_column="frequency")
    assert responses.items == [f"item{j}" for j in range(1, 6)]
    assert responses.values.shape == (32, 5)
    assert responses.weights.sum() == 1000
    # the first line of data: pattern 00000 seen 12 times
    assert responses.values[0].tolist() == [0, 0, 0, 0, 0] and responses.weights[0] == 12


@pytest.mark.parametrize(
    ("text", "options", "message"),
    [
        ("", {}, "m.tsv: empty response matrix"),
        ("a\tb\n", {}, "m.tsv: no respondent rows after the header"),
        ("a\tb\n1\t0\n1\t2\n", {}, "m.tsv:3: column 2 ('b'): '2' is not 0, 1 or missing (empty, NA) "
                                   "(a weight column? use --weight-column)"),
        ("id\ta\tb\ns1\t1\tyes\n", {}, "m.tsv:2: column 3 ('b'): 'yes' is not 0, 1 or missing (empty, NA)"),
        ("a\tb\n1\t0\n1\n", {}, "m.tsv:3: 1 fields, expected 2 as in the header"),
        ("a\ta\n1\t0\n", {}, "m.tsv:1: duplicate column name(s) in the header: 'a'"),
        ("id\ta\nx\t1\nx\t0\n", {}, "m.tsv:3: duplicate respondent id 'x' (first on line 2)"),
        ("a\tb\n1\t0\n", {"id_column": "sys"}, "m.tsv:1: --id-column 'sys' is not a column (have: 'a', 'b')"),
        ("a\tb\n1\t0\n", {"weight_column": "n"}, "m.tsv:1: --weight-column 'n' is not a column (have: 'a', 'b')"),
        ("a\tn\n1\t-2\n", {"weight_column": "n"}, "m.tsv:2: column 2 ('n'): weight '-2' is not a non-negative number"),
        ("a\tn\n1\tmany\n", {"weight_column": "n"},
         "m.tsv:2: column 2 ('n'): weight 'many' is not a non-negative number"),
        ("1\t0\n0\t1\n", {"weight_column": "n"}, "m.tsv:1: --id-column/--weight-column need a header line"),
        ("id\n1\n", {"id_column": "id"}, "m.tsv:1: no item columns"),
        ("id\ta\n\t1\n", {"id_column": "id"}, "m.tsv:2: column 1 ('id'): empty respondent id"),
    ],
)
def test_bad_matrix_files(write, text, options, message):
    path = write("m.tsv", text)
    with pytest.raises(InputError) as error:
        read_response_matrix(path, **options)
    assert str(error.value).startswith(f"{path.parent}/{message}")


def test_responses_values_are_floats():
    responses = Responses(pd.DataFrame([[1, 0]], columns=["a", "b"]))
    assert responses.values.dtype == float


def test_total_weight_counts_respondents():
    frame = pd.DataFrame([[1, 0], [0, 1]], columns=["a", "b"])
    assert Responses(frame).total_weight == 2.0
    assert Responses(frame, np.array([12.0, 0.5])).total_weight == 12.5
