"""EXAM-Cover, EXAM labels/qrels and leaderboards on a tiny example worked out by hand."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from exampp.collection.runs import from_scores
from exampp.labels import exam_labels
from exampp.scoring import (
    MeasureError,
    exact_mean,
    exam_cover,
    exam_qrels,
    facet_labels,
    leaderboard,
    parse_measures,
    per_query_measures,
    questions_by_query,
    summarize,
)

# Grades (query, passage, question, grade); q1 has questions u1..u3, q2 has v1, v2.
GRADES = pd.DataFrame(
    [
        ("q1", "p1", "u1", 5), ("q1", "p1", "u2", 0), ("q1", "p1", "u3", 2),
        ("q1", "p2", "u1", 0), ("q1", "p2", "u2", 4), ("q1", "p2", "u3", 0),
        ("q1", "p3", "u1", 1), ("q1", "p3", "u2", 0), ("q1", "p3", "u3", 0),
        ("q1", "p4", "u1", 0), ("q1", "p4", "u2", 0), ("q1", "p4", "u3", 3),
        ("q2", "p5", "v1", 4), ("q2", "p5", "v2", 1),
    ],
    columns=["query_id", "passage_id", "question_id", "grade"],
)
RUNS = {
    "A": from_scores("A", {"q1": {"p1": 3.0, "p2": 2.0, "p3": 1.0}, "q2": {"p5": 1.0}}),
    "B": from_scores("B", {"q1": {"p3": 2.0, "p4": 1.0}}),  # returns nothing for q2
}


def _cover(**kw) -> dict[tuple[str, str], float]:
    table = exam_cover(RUNS, GRADES, **kw)
    return {(r, q): c for r, q, c in zip(table["run"], table["query_id"], table["cover"])}


def test_cover_by_hand():
    # tau 4: p1 answers u1, p2 answers u2, p5 answers v1.
    assert _cover(tau=4) == {("A", "q1"): 2 / 3, ("A", "q2"): 1 / 2, ("B", "q1"): 0.0, ("B", "q2"): 0.0}
    # depth 1: A keeps only p1 for q1
    assert _cover(tau=4, depth=1)[("A", "q1")] == 1 / 3
    # tau 3: p4 answers u3 for B
    assert _cover(tau=3)[("B", "q1")] == 1 / 3


def test_missing_query_counts_as_zero_in_the_mean_and_stderr_by_hand():
    board = summarize(exam_cover(RUNS, GRADES, tau=4)).set_index("run")
    assert board.loc["A", "mean"] == pytest.approx(7 / 12)
    # values 2/3 and 1/2: sample variance 1/72, standard error sqrt(1/72 / 2) = 1/12
    assert board.loc["A", "stderr"] == pytest.approx(1 / 12)
    assert board.loc["B", "mean"] == 0.0 and board.loc["B", "n_queries"] == 2
    assert list(board.index) == ["A", "B"]


def test_n_exam_denominator_is_what_the_pool_answers():
    # pool answers {u1, u2} for q1 and {v1} for q2 at tau 4
    table = exam_cover(RUNS, GRADES, tau=4, normalized=True)
    assert list(table["total"]) == [2, 1, 2, 1]
    assert _cover(tau=4, normalized=True) == {("A", "q1"): 1.0, ("A", "q2"): 1.0, ("B", "q1"): 0.0, ("B", "q2"): 0.0}


def test_bank_restricts_the_exam():
    # dropping u2 from the bank: A's q1 coverage becomes {u1} of {u1, u3}
    bank = {"q1": ["u1", "u3"], "q2": ["v1", "v2"]}
    assert _cover(tau=4, questions=bank)[("A", "q1")] == 1 / 2
    assert exam_labels(GRADES, bank)["q1"]["p2"] == 0


def test_labels_and_qrels():
    labels = exam_labels(GRADES)
    assert labels == {"q1": {"p1": 5, "p2": 4, "p3": 1, "p4": 3}, "q2": {"p5": 4}}
    assert all(isinstance(v, int) for docs in labels.values() for v in docs.values())
    assert exam_qrels(labels, min_grade=4) == {"q1": {"p1": 1, "p2": 1, "p3": 0, "p4": 0}, "q2": {"p5": 1}}
    assert exam_qrels(labels) == labels


def test_facet_labels():
    facets = {"u1": "f1", "u2": "f2", "u3": "f2", "v1": None, "v2": "g"}
    assert facet_labels(GRADES, facets) == {
        "q1/f1": {"p1": 5, "p2": 0, "p3": 1, "p4": 0},
        "q1/f2": {"p1": 2, "p2": 4, "p3": 0, "p4": 3},
        "q2/g": {"p5": 1},
    }


def test_leaderboard_by_hand_missing_query_is_zero():
    qrels = {"q1": {"p1": 1, "p2": 0, "p4": 1}, "q2": {"p5": 1}, "q3": {"x": 1}}
    board = leaderboard(RUNS, qrels, ["P@2", "RR"])
    # A: P@2 q1 1/2, q2 1/2 (P@k divides by k), q3 absent 0 -> 1/3. B: q1 p4 -> 1/2 -> 1/6.
    assert board.loc["A", "P@2"] == pytest.approx(1 / 3)
    assert board.loc["B", "P@2"] == pytest.approx(1 / 6)
    # RR: A q1 1, q2 1, q3 0 -> 2/3; B q1 1/2 -> 1/6
    assert board.loc["A", "RR"] == pytest.approx(2 / 3)
    assert board.loc["B", "RR"] == pytest.approx(1 / 6)
    # depth 1 cuts B to p3 (non-relevant)
    assert leaderboard(RUNS, qrels, ["P@2"], depth=1).loc["B", "P@2"] == 0.0


def test_trec_eval_names_translate_and_keep_the_given_name_as_column():
    qrels = {"q1": {"p1": 1, "p2": 0, "p4": 1}, "q2": {"p5": 1}, "q3": {"x": 1}}
    board = leaderboard(RUNS, qrels, ["P_2", "recip_rank", "RR", "P.1,2", "RR"])
    # one measure: the given name; several (P.1,2): one column each, as ir_measures names them; a repeat once
    assert list(board.columns) == ["P_2", "recip_rank", "RR", "P@1", "P@2"]
    reference = leaderboard(RUNS, qrels, ["P@2", "RR", "P@1"])
    assert list(board["P_2"]) == list(board["P@2"]) == list(reference["P@2"])
    assert board.loc["A", "P_2"] == pytest.approx(1 / 3)
    assert list(board["recip_rank"]) == list(board["RR"]) == list(reference["RR"])
    assert list(board["P@1"]) == list(reference["P@1"])
    per_query = per_query_measures(RUNS, qrels, ["ndcg_cut.2", "nDCG@2"])
    both = per_query.pivot(index=["run", "query_id"], columns="measure", values="value")
    assert list(both["ndcg_cut.2"]) == list(both["nDCG@2"]) and both["nDCG@2"].max() > 0


def test_leaderboard_without_runs_or_queries_is_an_empty_table():
    for runs, qrels in (({}, {"q1": {"p1": 1}}), (RUNS, {})):
        board = leaderboard(runs, qrels, ["P@1", "map"])
        assert list(board.columns) == ["P@1", "map"] and board.empty


def test_parse_measures_columns():
    assert [(c, str(m)) for c, m in parse_measures(["ndcg_cut.10", "P.5,10", "map", "P(rel=2)@10"])] == [
        ("ndcg_cut.10", "nDCG@10"), ("P@5", "P@5"), ("P@10", "P@10"), ("map", "AP"), ("P(rel=2)@10", "P(rel=2)@10")]


@pytest.mark.parametrize("name, message", [
    ("ndcg@10", "unknown measure 'ndcg@10'; did you mean nDCG@10?"),
    ("p(rel=2)@5", "unknown measure 'p(rel=2)@5'; did you mean P(rel=2)@5?"),
    ("mrr", "unknown measure 'mrr'; did you mean RR?"),
    ("precison@5", "unknown measure 'precison@5'; did you mean P@5?"),
    ("ndcg_cut10", "unknown measure 'ndcg_cut10'; did you mean ndcg_cut.10?"),  # trec_eval's dot left out
    ("recall100", "unknown measure 'recall100'; did you mean recall.100?"),
    ("bogus", "unknown measure 'bogus'; use ir_measures names (nDCG@10, P(rel=2)@10, AP) "
              "or trec_eval names (ndcg_cut.10, P.10, map)"),
    ("nDCG(foo=1)@10", "measure 'nDCG(foo=1)@10': unsupported params found: ['foo']"),
])
def test_unknown_measures_are_named_with_close_names(name, message):
    with pytest.raises(MeasureError) as error:
        leaderboard(RUNS, {"q1": {"p1": 1}}, ["AP", name])
    assert str(error.value) == message


def test_exact_mean_is_order_independent():
    # P@20-style values in two orders: a naive float sum differs, the exact mean must not.
    first = [1.0, 0.65, 0.05, 0.45, 0.2, 0.3, 0.05, 0.45, 0.1, 0.1, 0.45, 0.45, 0.25, 0.65, 0.9, 0.4, 0.2, 0.0]
    first += [0.85, 0.05, 0.9, 0.3, 0.9, 0.7, 0.25, 0.95, 0.8, 0.05, 0.6, 0.3, 0.55, 0.15, 0.3, 0.9, 0.65, 0.9]
    second = sorted(first, key=lambda v: (v * 7919) % 1)
    assert sum(first) != sum(second)
    assert exact_mean(first) == exact_mean(second)
    assert math.isclose(exact_mean(first), math.fsum(first) / 36)


def test_empty_grades_give_empty_labels_and_a_zero_cover():
    empty = GRADES.iloc[:0]
    assert exam_labels(empty) == {} and exam_labels(empty, {"q1": ["u1"]}) == {}
    assert facet_labels(empty, {"u1": "f"}) == {} and questions_by_query(empty) == {}
    assert summarize(exam_cover(RUNS, empty)).empty
    table = summarize(exam_cover(RUNS, empty, {"q1": ["u1", "u2"]}, normalized=True))
    assert list(table["run"]) == ["A", "B"] and list(table["mean"]) == [0.0, 0.0]
