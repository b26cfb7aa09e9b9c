"""`exampp cover`, `qrels` and `leaderboard` through the CLI on a tiny workspace worked by hand."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from exampp.cli import main
from exampp.collection.grades import Grade, Method
from exampp.stores.grade_store import GradeStore

RATED = Method("self-rating", "tiny", "v1").method_id
# q1: questions u1, u2; q2: question v1. Passage p1 answers u1 (5), p2 answers u2 (3), p3 v1 (4).
GRADES = [("q1", "p1", "u1", 5), ("q1", "p1", "u2", 0), ("q1", "p2", "u1", 1), ("q1", "p2", "u2", 3),
          ("q2", "p3", "v1", 4)]


def tiny_workspace(root, method: str, grades):
    """Runs A and B, official qrels and a store of ``grades`` by ``method`` under ``root``."""
    for name, text in [("runs/a.run", "q1 Q0 p1 1 2 A\nq1 Q0 p2 2 1 A\nq2 Q0 p3 1 1 A\n"),
                       ("runs/b.run", "q1 Q0 p2 1 1 B\nq3 Q0 p9 1 1 B\n"),  # q3: in no exam, no qrels
                       ("qrels/official.qrels", "q1 0 p1 1\nq1 0 p2 0\nq2 0 p3 1\n")]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    texts = {"q1": {"p1": "one", "p2": "two"}, "q2": {"p3": "three"}}
    with GradeStore(root / "grades.sqlite") as store:
        passage_hash = {q: store.register_passages(q, t) for q, t in texts.items()}
        question_hash = store.register_questions([("q1", "u1", "U1?"), ("q1", "u2", "U2?"), ("q2", "v1", "V1?")])
        store.put_many((Grade(q, p, u, g, method), passage_hash[q][p], question_hash[q, u]) for q, p, u, g in grades)
    return root


@pytest.fixture
def ws(tmp_path):
    return tiny_workspace(tmp_path, RATED, GRADES)


QA = Method("qa", "m", "qa@v1+string@v1").method_id
# 0/1 correctness: p1 answers u1, p2 answers u2, p3 answers nothing.
QA_GRADES = [("q1", "p1", "u1", 1), ("q1", "p1", "u2", 0), ("q1", "p2", "u2", 1), ("q2", "p3", "v1", 0)]


@pytest.fixture
def qa_ws(tmp_path_factory):
    return tiny_workspace(tmp_path_factory.mktemp("qa"), QA, QA_GRADES)


def run(*args):
    result = CliRunner().invoke(main, list(args))
    return result


def test_cover_leaderboard_by_hand(ws):
    result = run("cover", "-w", str(ws), "--tau", "3", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = {r["run"]: r for r in json.loads(result.stdout)}
    # A: q1 {u1,u2} 2/2, q2 {v1} 1/1 -> 1.0; B: q1 {u2} 1/2, q2 missing 0 -> 0.25
    assert rows["A"]["mean"] == 1.0 and rows["B"]["mean"] == 0.25 and rows["B"]["n_queries"] == 2
    assert "runs/b.run:2: warning: query 'q3' not in the exam (question bank), left out" in result.stderr
    strict = run("cover", "-w", str(ws), "--tau", "3", "--strict")
    assert strict.exit_code == 1
    assert strict.stderr.strip().endswith("b.run:2: query 'q3' is not in the exam (question bank)")


def test_cover_tau_defaults_to_the_stored_methods_scale(ws, qa_ws):
    # self-ratings: tau 4. A: q1 u1 (p1: 5), not u2 (p2: 3) -> 1/2; q2 v1 (p3: 4) -> 1/1; mean 3/4.
    # B: q1 p2 rates u1 1, u2 3 -> 0; q2 nothing -> 0.
    rows = {r["run"]: r["mean"] for r in json.loads(run("cover", "-w", str(ws), "--format", "json").stdout)}
    assert rows == {"A": 0.75, "B": 0.0}
    # at tau 1 B covers u1 and u2 of q1 (p2 rates them 1 and 3): (2/2 + 0) / 2
    assert json.loads(run("cover", "-w", str(ws), "--tau", "1", "--format", "json").stdout)[-1]["mean"] == 0.5
    # 0/1 grades: tau 1. A: q1 u1 (p1), u2 (p2) -> 2/2, q2 -> 0: 1/2; B: q1 u2 (p2) -> 1/2, q2 -> 0: 1/4.
    rows = {r["run"]: r["mean"] for r in json.loads(run("cover", "-w", str(qa_ws), "--format", "json").stdout)}
    assert rows == {"A": 0.5, "B": 0.25}


def test_cover_per_query_tsv(ws):
    result = run("cover", "-w", str(ws), "--tau", "4", "--per-query", "--format", "tsv")
    assert result.stdout.splitlines() == [
        "run\tquery_id\tcovered\ttotal\tcover", "A\tq1\t1\t2\t0.5", "A\tq2\t1\t1\t1.0",
        "B\tq1\t0\t2\t0.0", "B\tq2\t0\t1\t0.0",
    ]


def test_qrels_graded_and_binary(ws):
    assert run("qrels", "-w", str(ws)).exit_code == 0
    assert (ws / "qrels" / "exam.qrels").read_text() == "q1 0 p1 5\nq1 0 p2 3\nq2 0 p3 4\n"
    assert run("qrels", "-w", str(ws), "--min-grade", "4", "-o", str(ws / "b.qrels")).exit_code == 0
    assert (ws / "b.qrels").read_text() == "q1 0 p1 1\nq1 0 p2 0\nq2 0 p3 1\n"


def test_leaderboard_and_unknown_method(ws):
    result = run("leaderboard", str(ws / "runs"), "--qrels", str(ws / "qrels" / "official.qrels"),
                 "-m", "P@1", "--format", "json")
    # A: q1 p1 rel, q2 p3 rel -> 1.0; B: q1 p2 non-rel, q2 missing -> 0.0 (q3 unjudged, left out)
    assert {r["run"]: r["P@1"] for r in json.loads(result.stdout)} == {"A": 1.0, "B": 0.0}
    bad = run("cover", "-w", str(ws), "--method", "nope")
    assert bad.exit_code == 1 and "no grades for method 'nope'" in bad.stderr


def test_leaderboard_takes_trec_eval_names(ws):
    result = run("leaderboard", str(ws / "runs"), "--qrels", str(ws / "qrels" / "official.qrels"),
                 "-m", "P_1", "-m", "P.1,2", "--format", "json")
    assert result.exit_code == 0, result.output
    # P_1 keeps its name; P.1,2 gives P@1 and P@2 (B: q1 p2 non-relevant; A: q1 p1 p2 -> 1/2, q2 p3 -> 1/2)
    rows = {r["run"]: r for r in json.loads(result.stdout)}
    assert rows["A"] == {"run": "A", "P_1": 1.0, "P@1": 1.0, "P@2": 0.5}
    assert rows["B"] == {"run": "B", "P_1": 0.0, "P@1": 0.0, "P@2": 0.0}


@pytest.mark.parametrize("measure, message", [
    ("ndcg@10", "unknown measure 'ndcg@10'; did you mean nDCG@10?"),
    ("ndcg_cut10", "unknown measure 'ndcg_cut10'; did you mean ndcg_cut.10?"),
    ("bogus", "unknown measure 'bogus'; use ir_measures names (nDCG@10, P(rel=2)@10, AP) "
              "or trec_eval names (ndcg_cut.10, P.10, map)"),
])
def test_unknown_measure_is_a_usage_error_before_reading_anything(ws, measure, message):
    # the qrels file does not exist: the measure is checked first
    result = run("leaderboard", str(ws / "runs"), "--qrels", str(ws / "missing.qrels"), "-m", "P@1", "-m", measure)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output.splitlines()[-1] == f"Error: Invalid value for '--measure' / '-m': {message}"


@pytest.mark.parametrize("command", [["cover"], ["qrels"], ["irt"]])
def test_a_store_without_grades_says_what_to_run(tmp_path, command):
    GradeStore(tmp_path / "grades.sqlite").close()  # created, nothing graded yet
    result = run(*command, "-w", str(tmp_path))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output == (f"Error: {tmp_path}/grades.sqlite: the store holds no grades yet: grade first with "
                             f"`exampp grade -w {tmp_path}`, or import graded JSONL with "
                             f"`exampp import FILE -w {tmp_path}`\n")


def test_leaderboard_excluding_every_run_is_a_usage_error(ws):
    result = run("leaderboard", str(ws / "runs"), "--qrels", str(ws / "qrels" / "official.qrels"),
                 "--exclude", "A", "--exclude", "B")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output.splitlines()[-1] == "Error: --exclude leaves no run: it names every run read (A, B)"


def test_method_by_name(tmp_path):
    """--method takes a method's name when one stored method has it; two of that name must be told apart."""
    ws = tiny_workspace(tmp_path, RATED, GRADES)
    other = Method("self-rating", "other-model", "v1").method_id
    by_id = run("cover", "-w", str(ws), "--method", RATED, "--format", "tsv").stdout
    tiny_workspace(tmp_path, QA, QA_GRADES)
    assert run("cover", "-w", str(ws), "--method", "self-rating", "--format", "tsv").stdout == by_id
    tiny_workspace(tmp_path, other, GRADES)
    twice = run("cover", "-w", str(ws), "--method", "self-rating")
    assert twice.exit_code == 1
    assert f"several methods named 'self-rating' (have: {other}, {RATED})" in twice.stderr
