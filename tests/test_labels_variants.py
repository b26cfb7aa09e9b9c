"""EXAM label variants (max, count, sum, expected) and expected EXAM-Cover, on a grades table whose
labels are worked out by hand; the labels as nDCG gains through ir_measures, also by hand."""
from __future__ import annotations

import itertools
import json
import math

import pandas as pd
import pytest
from click.testing import CliRunner

from exampp.cli import main
from exampp.collection.grades import Grade, Method
from exampp.collection.runs import from_scores
from exampp.errors import ExamppError
from exampp.labels import LABELS, NoProbabilities, exam_labels, expected_cover
from exampp.scoring import exam_cover, per_query_measures
from exampp.stores.grade_store import GradeStore


def p(**mass: float) -> tuple[float, ...]:
    """P(grade = 0..5) from e.g. p(g3=0.6, g4=0.4)."""
    return tuple(mass.get(f"g{g}", 0.0) for g in range(6))


# (query, passage, question, grade, P(grade = 0..5)); E = expected grade
ROWS = [
    ("q1", "a", "u1", 5, p(g5=1)),              # E 5
    ("q1", "a", "u2", 4, p(g3=0.5, g4=0.5)),    # E 3.5
    ("q1", "a", "u3", 0, p(g0=1)),              # E 0
    ("q1", "b", "u1", 3, p(g3=0.6, g4=0.4)),    # E 3.4
    ("q1", "b", "u2", 3, p(g2=0.5, g4=0.5)),    # E 3
    ("q1", "b", "u3", 3, p(g3=1)),              # E 3
    ("q1", "c", "u1", 0, p(g0=1)),
    ("q1", "c", "u2", 0, p(g0=1)),
    ("q1", "c", "u3", 4, p(g4=0.75, g5=0.25)),  # E 4.25
    ("q2", "d", "v1", 1, p(g0=0.1, g1=0.9)),    # E 0.9
    ("q2", "d", "v2", 0, p(g0=1)),
    ("q2", "e", "v1", 5, p(g5=1)),              # E 5
    ("q2", "e", "v2", 5, p(g4=0.2, g5=0.8)),    # E 4.8
]
METHOD = Method("self-rating", "tiny", "v1").method_id
GRADES = pd.DataFrame([(q, d, u, METHOD, float(g), None, probs) for q, d, u, g, probs in ROWS],
                      columns=["query_id", "passage_id", "question_id", "method_id", "grade", "answer",
                               "probabilities"])

# by hand: max = best grade; count = grades >= 4; sum = sum of grades; expected = round(100 * best E)
LABELS_BY_HAND = {
    "max": {"q1": {"a": 5, "b": 3, "c": 4}, "q2": {"d": 1, "e": 5}},
    "count": {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"d": 0, "e": 2}},
    "sum": {"q1": {"a": 9, "b": 9, "c": 4}, "q2": {"d": 1, "e": 10}},
    "expected": {"q1": {"a": 500, "b": 340, "c": 425}, "q2": {"d": 90, "e": 500}},
}


@pytest.mark.parametrize("label", LABELS)
def test_label_variants_by_hand(label):
    labels = exam_labels(GRADES, label=label, tau=4)
    assert labels == LABELS_BY_HAND[label]
    assert all(type(v) is int for docs in labels.values() for v in docs.values())


def test_labels_restricted_to_the_exam_and_count_at_another_tau():
    exam = {"q1": ["u1", "u2"], "q2": ["v2"]}
    # without u3: c has only zeros; b's best E is 3.4 (u1); count at tau 3: a 2 (5, 4), b 2 (3, 3), c 0
    assert exam_labels(GRADES, exam, label="max") == {"q1": {"a": 5, "b": 3, "c": 0}, "q2": {"d": 0, "e": 5}}
    assert exam_labels(GRADES, exam, label="count", tau=3) == {"q1": {"a": 2, "b": 2, "c": 0}, "q2": {"d": 0, "e": 1}}
    assert exam_labels(GRADES, exam, label="expected") == {"q1": {"a": 500, "b": 340, "c": 0},
                                                           "q2": {"d": 0, "e": 480}}


def test_count_needs_tau_and_unknown_labels_are_named():
    with pytest.raises(ValueError, match="label 'count' needs tau"):
        exam_labels(GRADES, label="count")
    with pytest.raises(ExamppError, match="label 'mean': choose one of max, count, sum, expected"):
        exam_labels(GRADES, label="mean")


def test_a_grade_without_probabilities_is_certain_and_a_method_without_any_is_refused():
    grades = GRADES.copy()
    grades.at[4, "probabilities"] = None  # q1 b u2, grade 3 (E was 3): generated text, no probabilities
    # b's best E is still 3.4 (u1); its count at tau 3 now has u2 = 3 for sure
    assert exam_labels(grades, label="expected") == LABELS_BY_HAND["expected"]
    run = {"r": from_scores("r", {"q1": {"b": 1}})}
    # q1 by b: P(u1 >= 3) = 1, P(u2 >= 3) = 1 (certain), P(u3 >= 3) = 1 -> 3 of 3
    assert expected_cover(run, grades, tau=3).set_index("query_id").loc["q1", "covered"] == pytest.approx(3.0)
    grades["probabilities"] = None  # a method that stores none
    for call in (lambda: exam_labels(grades, label="expected"), lambda: expected_cover(run, grades, tau=4)):
        with pytest.raises(NoProbabilities) as err:
            call()
        assert f"the grades of method {METHOD!r} carry none (e.g. query 'q1' passage 'a')" in str(err.value)


# A run ranking q1: c, a, b and q2: d, e.
RUN = from_scores("R", {"q1": {"c": 3, "a": 2, "b": 1}, "q2": {"d": 2, "e": 1}})
L3 = math.log2(3)


@pytest.mark.parametrize("label, q1, q2", [
    # nDCG@3 (pytrec_eval: gain = label, discount log2(rank + 1)), ideal = labels sorted descending
    # count: q1 c1 a2 b0 -> (1 + 2/log2 3) / (2 + 1/log2 3); q2 d0 e2 -> (2/log2 3) / 2
    ("count", (1 + 2 / L3) / (2 + 1 / L3), (2 / L3) / 2),
    # sum: q1 c4 a9 b9 -> (4 + 9/log2 3 + 9/2) / (9 + 9/log2 3 + 4/2); q2 d1 e10 -> (1 + 10/log2 3) / (10 + 1/log2 3)
    ("sum", (4 + 9 / L3 + 9 / 2) / (9 + 9 / L3 + 4 / 2), (1 + 10 / L3) / (10 + 1 / L3)),
    # expected: q1 c425 a500 b340 -> (425 + 500/log2 3 + 340/2) / (500 + 425/log2 3 + 340/2);
    # q2 d90 e500 -> (90 + 500/log2 3) / (500 + 90/log2 3)
    ("expected", (425 + 500 / L3 + 170) / (500 + 425 / L3 + 170), (90 + 500 / L3) / (500 + 90 / L3)),
])
def test_label_variants_as_ndcg_gains(label, q1, q2):
    assert round(q1, 4) == {"count": 0.8597, "sum": 0.8501, "expected": 0.9705}[label]  # the arithmetic, evaluated
    values = per_query_measures({"R": RUN}, exam_labels(GRADES, label=label, tau=4), ["nDCG@3"])
    assert dict(zip(values["query_id"], values["value"])) == pytest.approx({"q1": q1, "q2": q2}, abs=1e-12)


# --- expected EXAM-Cover -------------------------------------------------------------------------

def brute_force_cover(ranking, grades, questions, tau):
    """E[number of questions answered by a passage of ``ranking``] by enumerating every joint grade
    outcome of the (passage, question) pairs, each with the product of its grades' probabilities."""
    pairs = [(r.passage_id, r.question_id, r.probabilities) for r in grades.itertuples()
             if r.passage_id in ranking and r.question_id in questions]
    total = 0.0
    for outcome in itertools.product(*(range(len(probs)) for _, _, probs in pairs)):
        weight = math.prod(probs[g] for (_, _, probs), g in zip(pairs, outcome))
        answered = {question for (_, question, _), g in zip(pairs, outcome) if g >= tau}
        total += weight * len(answered)
    return total


def test_expected_cover_against_brute_force():
    # q1: three passages on three questions with uncertain grades on a 0-2 scale; x has no grade on w3
    rows = [("x", "w1", (0.2, 0.3, 0.5)), ("x", "w2", (0.6, 0.4, 0.0)),
            ("y", "w1", (0.5, 0.25, 0.25)), ("y", "w2", (0.1, 0.1, 0.8)), ("y", "w3", (0.0, 0.7, 0.3)),
            ("z", "w1", (1.0, 0.0, 0.0)), ("z", "w3", (0.3, 0.3, 0.4))]
    grades = pd.DataFrame([("q", d, w, "m", 0.0, None, probs) for d, w, probs in rows],
                          columns=["query_id", "passage_id", "question_id", "method_id", "grade", "answer",
                                   "probabilities"])
    runs = {"r": from_scores("r", {"q": {"x": 3, "y": 2, "z": 1}})}
    questions = ["w1", "w2", "w3"]
    for tau, depth in [(1, 3), (2, 3), (2, 2), (1, 1)]:
        ranking = ["x", "y", "z"][:depth]
        table = expected_cover(runs, grades, tau=tau, depth=depth)
        assert table["covered"].tolist() == pytest.approx([brute_force_cover(ranking, grades, questions, tau)])
        assert table["cover"].tolist() == pytest.approx([table["covered"][0] / 3])
    # one worked by hand, tau 2, depth 2: w1 1 - 0.5*0.75; w2 1 - 1*0.2; w3 1 - 0.7
    assert expected_cover(runs, grades, tau=2, depth=2)["covered"][0] == pytest.approx(0.625 + 0.8 + 0.3)


def test_expected_cover_of_certain_grades_is_exam_cover():
    certain = GRADES.assign(probabilities=[tuple(float(g == grade) for g in range(6)) for grade in GRADES["grade"]])
    runs = {"R": RUN, "S": from_scores("S", {"q1": {"b": 1}})}
    for depth in (1, 2, None):
        expected = expected_cover(runs, certain, tau=4, depth=depth)
        exact = exam_cover(runs, certain, tau=4, depth=depth)
        assert expected["covered"].tolist() == pytest.approx(exact["covered"].tolist())
        assert expected[["run", "query_id", "total"]].equals(exact[["run", "query_id", "total"]])


# --- the commands, on a store holding grades with probabilities ---------------------------------

@pytest.fixture
def ws(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "r.run").write_text("q1 Q0 c 1 3 R\nq1 Q0 a 2 2 R\nq1 Q0 b 3 1 R\n"
                                             "q2 Q0 d 1 2 R\nq2 Q0 e 2 1 R\n")
    texts = {"q1": {"a": "A", "b": "B", "c": "C"}, "q2": {"d": "D", "e": "E"}}
    with GradeStore(tmp_path / "grades.sqlite") as store:
        passage_hash = {q: store.register_passages(q, t) for q, t in texts.items()}
        question_hash = store.register_questions({(q, u, u.upper() + "?") for q, _, u, _, _ in ROWS})
        store.put_many((Grade(q, d, u, g, METHOD, probabilities=probs), passage_hash[q][d], question_hash[q, u])
                       for q, d, u, g, probs in ROWS)
    return tmp_path


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_store_gives_probabilities_when_asked(ws):
    with GradeStore(ws / "grades.sqlite") as store:
        plain, full = store.grades(), store.grades(probabilities=True)
    assert "probabilities" not in plain.columns
    assert full.drop(columns="probabilities").equals(plain)
    assert dict(zip(zip(full["passage_id"], full["question_id"]), full["probabilities"]))[("b", "u1")] == \
        p(g3=0.6, g4=0.4)


@pytest.mark.parametrize("label", LABELS)
def test_qrels_command_writes_each_label(ws, label):
    result = run("qrels", "-w", ws, "--label", label, "--tau", 4, "-o", ws / f"{label}.qrels")
    assert result.exit_code == 0, result.output
    lines = [f"{q} 0 {d} {v}" for q, docs in LABELS_BY_HAND[label].items() for d, v in docs.items()]
    assert (ws / f"{label}.qrels").read_text() == "\n".join(lines) + "\n"


def test_qrels_count_defaults_to_the_methods_tau_and_binary_expected(ws):
    assert run("qrels", "-w", ws, "--label", "count", "-o", ws / "c.qrels").exit_code == 0  # self-rating: tau 4
    assert (ws / "c.qrels").read_text() == "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq2 0 d 0\nq2 0 e 2\n"
    # --min-grade on the expected grade: E >= 4.25 (label >= 425): a 5, c 4.25, e 5
    assert run("qrels", "-w", ws, "--label", "expected", "--min-grade", 4.25, "-o", ws / "e.qrels").exit_code == 0
    assert (ws / "e.qrels").read_text() == "q1 0 a 1\nq1 0 b 0\nq1 0 c 1\nq2 0 d 0\nq2 0 e 1\n"


def test_cover_expected_command(ws):
    result = run("cover", "-w", ws, "--expected", "--tau", 4, "--per-query", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = {r["query_id"]: r for r in json.loads(result.stdout)}
    # q1 (c, a, b): u1 1 - (1-0)(1-1)(1-0.4) = 1; u2 1 - 1*(1-0.5)*(1-0.5) = 0.75; u3 1 - (1-1)... = 1
    # q2 (d, e): v1 1 - (1-0)(1-1) = 1; v2 1 - 1*(1-1) = 1
    assert rows["q1"]["covered"] == pytest.approx(2.75) and rows["q1"]["cover"] == pytest.approx(2.75 / 3)
    assert rows["q2"]["covered"] == pytest.approx(2.0)
    both = run("cover", "-w", ws, "--expected", "--normalized")
    assert both.exit_code == 2 and "--expected has no --normalized (n-EXAM) variant" in both.output


def test_expected_refused_for_grades_without_probabilities(ws):
    with GradeStore(ws / "grades.sqlite") as store:  # the same grades under a method without probabilities
        hashes = store.register_passages("q1", {"a": "A"}), store.register_questions([("q1", "u1", "U1?")])
        store.put_many([(Grade("q1", "a", "u1", 5.0, "embedding|x|v1"), hashes[0]["a"], hashes[1]["q1", "u1"])])
    for command in (["qrels", "--label", "expected", "-o", ws / "x.qrels"], ["cover", "--expected"]):
        result = run(*command, "-w", ws, "--method", "embedding|x|v1")
        assert result.exit_code == 1
        assert "grade probabilities, and the grades of method 'embedding|x|v1' carry none" in result.stderr
        assert "Traceback" not in result.output
