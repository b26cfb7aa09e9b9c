"""IRT response matrices: from grades (worked by hand, agreeing with EXAM-Cover) and from files."""
from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from exampp.analysis.irt.responses import Responses, read_responses, responses_from_grades
from exampp.collection.runs import from_scores
from exampp.errors import InputError
from exampp.scoring import exam_cover

# Query q1: questions a, b, c; query q2: questions d, e.
GRADES = pd.DataFrame(
    [
        ("q1", "p1", "q1/a", 5), ("q1", "p1", "q1/b", 2), ("q1", "p1", "q1/c", 0),
        ("q1", "p2", "q1/a", 0), ("q1", "p2", "q1/b", 4), ("q1", "p2", "q1/c", 3),
        ("q1", "p3", "q1/a", 0), ("q1", "p3", "q1/b", 0), ("q1", "p3", "q1/c", 4),
        ("q2", "p4", "q2/d", 4), ("q2", "p4", "q2/e", 1),
        ("q2", "p5", "q2/d", 0), ("q2", "p5", "q2/e", 5),
    ],
    columns=["query_id", "passage_id", "question_id", "grade"],
).astype({"grade": float})

RUNS = {
    # top-2 of q1 = p1, p2 (p3 at rank 3 is cut at depth 2); q2 only p5
    "s1": from_scores("s1", {"q1": {"p1": 3, "p2": 2, "p3": 1}, "q2": {"p5": 1}}),
    # q1 top-2 = p3, p1; no answer for q2
    "s2": from_scores("s2", {"q1": {"p3": 9, "p1": 8, "p2": 1}}),
    # q1: nothing answered at tau 4; q2: p4, p5
    "s3": from_scores("s3", {"q1": {"p9": 1}, "q2": {"p4": 2, "p5": 1}}),
}

EXPECTED = pd.DataFrame(
    # q1/a q1/b q1/c q2/d q2/e
    [[1, 1, 0, 0, 1],
     [1, 0, 1, 0, 0],
     [0, 0, 0, 1, 1]],
    index=["s1", "s2", "s3"],
    columns=["q1/a", "q1/b", "q1/c", "q2/d", "q2/e"],
    dtype=float,
)


def test_matrix_by_hand():
    responses = responses_from_grades(GRADES, RUNS, tau=4, depth=2)
    pd.testing.assert_frame_equal(responses.matrix, EXPECTED, check_names=False)
    assert responses.question_query == {"q1/a": "q1", "q1/b": "q1", "q1/c": "q1", "q2/d": "q2", "q2/e": "q2"}
    assert responses.weights is None


def test_depth_and_tau_change_the_matrix():
    deeper = responses_from_grades(GRADES, RUNS, tau=4, depth=3).matrix
    assert deeper.loc["s1"].tolist() == [1, 1, 1, 0, 1]  # p3 now in s1's top 3 answers q1/c
    lower = responses_from_grades(GRADES, RUNS, tau=3, depth=2).matrix
    assert lower.loc["s1"].tolist() == [1, 1, 1, 0, 1]  # p2 answers q1/c at grade 3


def test_bank_questions_nobody_answers_are_zero_columns():
    bank = {"q1": ["q1/a", "q1/b", "q1/c", "q1/z"], "q2": ["q2/d", "q2/e"]}
    matrix = responses_from_grades(GRADES, RUNS, bank, tau=4, depth=2).matrix
    assert list(matrix.columns) == ["q1/a", "q1/b", "q1/c", "q1/z", "q2/d", "q2/e"]
    assert matrix["q1/z"].tolist() == [0, 0, 0]


@pytest.mark.parametrize(("tau", "depth"), [(4, 2), (3, 2), (1, 1), (5, None)])
def test_row_means_per_query_equal_exam_cover(tau, depth):
    bank = {"q1": ["q1/a", "q1/b", "q1/c", "q1/z"], "q2": ["q2/d", "q2/e"]}
    responses = responses_from_grades(GRADES, RUNS, bank, tau=tau, depth=depth)
    cover = exam_cover(RUNS, GRADES, bank, tau=tau, depth=depth).set_index(["run", "query_id"])["cover"]
    by_query = responses.matrix.T.groupby(pd.Series(responses.question_query)).mean().T
    for run in RUNS:
        for query in bank:
            assert by_query.loc[run, query] == pytest.approx(cover[(run, query)], abs=1e-12)


def test_without_drops_rows_and_their_weights():
    responses = Responses(pd.DataFrame([[1, 0], [0, 1], [1, 1]], index=["x", "y", "z"], columns=["a", "b"]),
                          np.array([2.0, 3.0, 4.0]))
    kept = responses.without(["y"])
    assert kept.respondents == ["x", "z"] and kept.weights.tolist() == [2.0, 4.0]


def test_select_keeps_matrix_order_and_queries():
    responses = responses_from_grades(GRADES, RUNS, tau=4, depth=2).select(["q2/e", "q1/a"])
    assert responses.items == ["q1/a", "q2/e"]
    assert responses.question_query == {"q1/a": "q1", "q2/e": "q2"}


# --- files ---------------------------------------------------------------------------------------

def test_tsv_with_header_id_and_missing(write):
    path = write("m.tsv", "system\tx1\tx2\tx3\nbm25\t1\t0\tNA\nbert\t1\t1\t1\nt5\t0\t\t0\n")
    responses = read_responses(path)
    assert responses.respondents == ["bm25", "bert", "t5"]
    assert responses.items == ["x1", "x2", "x3"]
    np.testing.assert_array_equal(responses.values, [[1, 0, np.nan], [1, 1, 1], [0, np.nan, 0]])
    assert responses.weights is None


def test_csv_with_id_column_by_name_and_weights(write):
    path = write("m.csv", "i1,who,i2,n\n1,a,0,3\n0,b,1,2.5\n")
    responses = read_responses(path, id_column="who", weight_column="n")
    assert responses.respondents == ["a", "b"]
    assert responses.items == ["i1", "i2"]
    np.testing.assert_array_equal(responses.values, [[1, 0], [0, 1]])
    np.testing.assert_array_equal(responses.weights, [3, 2.5])


def test_headerless_gzipped_matrix(tmp_path):
    path = tmp_path / "m.txt.gz"
    path.write_bytes(gzip.compress(b"1\t0\n0\t1\n1\t1\n"))
    responses = read_responses(path)
    assert responses.items == ["item1", "item2"]
    assert responses.respondents == ["1", "2", "3"]
    np.testing.assert_array_equal(responses.values, [[1, 0], [0, 1], [1, 1]])


def test_lsat7_frequencies():
    from conftest import shared_path

    responses = read_responses(shared_path("data", "irt", "lsat7.tsv"), weight_column="frequency")
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
        read_responses(path, **options)
    assert str(error.value).startswith(f"{path.parent}/{message}")


def test_responses_values_are_floats():
    responses = Responses(pd.DataFrame([[1, 0]], columns=["a", "b"]))
    assert responses.values.dtype == float
