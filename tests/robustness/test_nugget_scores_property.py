"""Nugget scores on random assignments against the ``nuggetizer`` package's scorer (V_strict,
A_strict, V, A) and against the weighted formula written out (W_strict, W); nugget banks and
assignment files from hostile bytes give a bank (answers) or a located error."""
from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import strategies as st
from nuggetizer.core.metrics import calculate_global_metrics, calculate_nugget_scores

from exampp.analysis.nugget_scores import answer_scores
from exampp.api.nuggets import score_nuggets
from exampp.collection.questions import question_id_for
from exampp.formats.nugget_assignments import Answer, AssignedNugget, read_assignments, write_assignments
from exampp.formats.question_bank import read_question_bank

from .checks import assert_ids, read_file, scratch, tries
from .strategies import QUERIES, RUNS, field, hostile, jsonl, mostly, pool_ids, records, texts

PACKAGE = {"V_strict": "strict_vital_score", "A_strict": "strict_all_score", "V": "vital_score", "A": "all_score"}
IMPORTANCE = st.sampled_from(["vital", "okay"])
ASSIGNMENT = st.sampled_from(["support", "partial_support", "not_support"])


def weighted(nuggets: list[AssignedNugget], strict: bool) -> float:
    """W / W_strict written out: Σ weight x support / Σ weight, vital 1 and okay 0.5."""
    weight = {"vital": 1.0, "okay": 0.5}
    worth = {"support": 1.0, "partial_support": 0.0 if strict else 0.5, "not_support": 0.0}
    total = sum(weight[n.importance] for n in nuggets)
    return sum(weight[n.importance] * worth[n.assignment] for n in nuggets) / total if total else 0.0


def as_record(answer: Answer) -> dict:
    return {"qid": answer.query_id, "nuggets": [{"importance": n.importance, "assignment": n.assignment}
                                                for n in answer.nuggets]}


@st.composite
def assignments(draw) -> list[Answer]:
    """Answers of some runs to some topics (not every run every topic), each topic's nuggets the
    same in all its answers."""
    topics = {f"t{q}": draw(st.lists(IMPORTANCE, max_size=7)) for q in range(draw(st.integers(1, 4)))}
    queries = {qid: draw(st.sampled_from([f"topic {qid}", None])) for qid in topics}  # None: no text given
    answers = []
    for run in ("r1", "r2", "r3")[:draw(st.integers(1, 3))]:
        for qid, importance in topics.items():
            if draw(st.integers(0, 4)) == 0:
                continue  # this run did not answer this topic
            nuggets = tuple(AssignedNugget(f"nugget {i}", imp, draw(ASSIGNMENT)) for i, imp in enumerate(importance))
            answers.append(Answer(qid, run, f"{run} answers {qid}", nuggets, queries[qid]))
    if not answers:
        answers.append(Answer("t0", "r1", "the only answer", tuple(
            AssignedNugget(f"nugget {i}", imp, "support") for i, imp in enumerate(topics["t0"])), "topic t0"))
    return answers


@tries(100, nuggets=st.lists(st.tuples(IMPORTANCE, ASSIGNMENT), max_size=12))
def test_answer_scores_equal_the_package_and_the_weighted_formula(nuggets):
    assigned = [AssignedNugget(f"n{i}", importance, assignment) for i, (importance, assignment) in enumerate(nuggets)]
    scores = answer_scores(assigned)
    package = calculate_nugget_scores("q", [{"importance": i, "assignment": a} for i, a in nuggets])
    for measure, key in PACKAGE.items():
        assert math.isclose(scores[measure], getattr(package, key), abs_tol=1e-12), measure
    assert math.isclose(scores["W_strict"], weighted(assigned, True), abs_tol=1e-12)
    assert math.isclose(scores["W"], weighted(assigned, False), abs_tol=1e-12)


@pytest.mark.slow
@tries(60, answers=assignments())
def test_run_scores_equal_the_package_per_run(answers):
    result = score_nuggets(answers)
    complete = score_nuggets(answers, complete=True).leaderboard.set_index("run")
    board = result.leaderboard.set_index("run")
    topics = list(dict.fromkeys(a.query_id for a in answers))
    for run in {a.run_id for a in answers}:
        own = [a for a in answers if a.run_id == run]
        package = calculate_global_metrics([as_record(a) for a in own])
        expected = {**{m: package[key] for m, key in PACKAGE.items()},
                    "W_strict": sum(weighted(a.nuggets, True) for a in own) / len(own),
                    "W": sum(weighted(a.nuggets, False) for a in own) / len(own)}
        for measure, value in expected.items():
            assert math.isclose(board.at[run, measure], value, abs_tol=1e-12), (run, measure)
            # over every topic, an unanswered one scoring 0
            assert math.isclose(complete.at[run, measure], value * len(own) / len(topics), abs_tol=1e-12)
        assert board.at[run, "n_topics"] == len(own) and complete.at[run, "n_topics"] == len(topics)
    ordered = board["V_strict"].tolist()
    assert ordered == sorted(ordered, reverse=True)


@pytest.mark.slow
@tries(30, answers=assignments())
def test_scores_of_a_written_file_are_those_of_its_answers(answers):
    with scratch() as folder:
        write_assignments(answers, folder / "a.jsonl.gz")
        read = score_nuggets(folder / "a.jsonl.gz")
        assert read_assignments(folder / "a.jsonl.gz") == [
            Answer(a.query_id, a.run_id, a.text, a.nuggets, a.query, line) for line, a in enumerate(answers, 1)]
    direct = score_nuggets(answers)
    pd.testing.assert_frame_equal(read.leaderboard, direct.leaderboard)
    pd.testing.assert_frame_equal(read.per_answer, direct.per_answer)


_text = mostly(st.sampled_from(["Cats purr", "Dogs bark", " padded "]), texts)
_nugget = records({"text": field(_text), "importance": field(mostly(IMPORTANCE, texts)),
                   "assignment": field(mostly(ASSIGNMENT, st.none() | texts))})
nugget_lines = jsonl(records({"qid": field(pool_ids(QUERIES, first_column=True)), "query": field(_text),
                              "run_id": field(pool_ids(RUNS)), "answer_text": field(_text),
                              "nuggets": field(st.lists(_nugget, max_size=3))}))


@pytest.mark.slow
@tries(60, data=hostile(nugget_lines))
def test_read_nugget_bank_gives_a_bank_or_a_located_error(data):
    bank = read_file(lambda p: read_question_bank(p, "nuggetizer"), "nuggets.jsonl", data)
    if bank is not None:
        assert_ids((q.query_id for q in bank), first_column=True)
        assert all(q.question_id == question_id_for(q.query_id, q.text) for q in bank)
        assert all(q.info["importance"] in ("vital", "okay") for q in bank)


@pytest.mark.slow
@tries(60, data=hostile(nugget_lines))
def test_read_assignments_gives_answers_or_a_located_error(data):
    answers = read_file(read_assignments, "assignments.jsonl", data)
    if answers is not None:
        assert_ids((a.query_id for a in answers), first_column=True)
        assert_ids(a.run_id for a in answers)
        result = score_nuggets(answers)
        assert len(result.per_answer) == len(answers)
        assert result.leaderboard[["V_strict", "A_strict", "V", "A", "W_strict", "W"]].stack().between(0, 1).all()
