"""IRT response matrices from grades: worked by hand, agreeing with EXAM-Cover."""
from __future__ import annotations

import pandas as pd
import pytest

from exampp.analysis.irt.responses import responses_from_grades
from exampp.collection.runs import from_scores
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


def test_select_keeps_matrix_order_and_queries():
    responses = responses_from_grades(GRADES, RUNS, tau=4, depth=2).select(["q2/e", "q1/a"])
    assert responses.items == ["q1/a", "q2/e"]
    assert responses.question_query == {"q1/a": "q1", "q2/e": "q2"}
