"""Canary questions (``exampp grade --canaries N``, ``exampp audit``'s ``canary`` class): which
questions are a passage's canaries, that their grades are filed apart from the measures' and
resumed like all grades, and that the audit flags a text the judge finds to answer unrelated
questions, on the example collection with the offline embedding grader."""
from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from click.testing import CliRunner

from conftest import EXAMPLES, jsonl
from exampp.api.grade import GradeJob
from exampp.api.workspace import stored_grades
from exampp.audit.canary import canary_flags, pool_rate, tail
from exampp.cli import main
from exampp.collection.questions import Question
from exampp.formats.question_bank import read_question_bank
from exampp.grading.canaries import (
    CanaryGrader,
    canary_method_id,
    canary_order,
    canary_pairs,
    canary_query_id,
    choose_canaries,
    is_canary_method,
    pooled_query_id,
)
from exampp.stores.grade_store import GradeStore

pytestmark = pytest.mark.slow  # its graded workspace takes most of a minute to set up


N = 4


def question(query_id: str, question_id: str, text: str | None = None) -> Question:
    return Question(query_id, question_id, text or f"what about {query_id} {question_id}?")


# -- which questions -----------------------------------------------------------------------------

def example_exam() -> dict[str, list[Question]]:
    return read_question_bank(EXAMPLES / "question_banks" / "questions.jsonl").by_query()


def test_the_order_is_by_a_stable_hash_of_query_and_question_ids():
    exam = example_exam()
    order = canary_order("Q1", exam)
    # the same order by another route: sha256 of "Q1 <tab> other query <tab> question id", first 8 bytes
    expected = sorted(((hashlib.sha256(f"Q1\t{q.query_id}\t{q.question_id}".encode()).digest()[:8], q)
                       for other, questions in exam.items() if other != "Q1" for q in questions),
                      key=lambda item: item[0])
    assert [q.question_id for q in order] == [f"{q.query_id}/{q.question_id}" for _, q in expected]
    assert len(order) == 50 and all(q.query_id == "Q1" for q in order)  # the 10 questions of Q2..Q6, as Q1's
    assert [q.text for q in order] == [q.text for _, q in expected]


def test_a_passage_takes_n_consecutive_questions_from_its_own_offset():
    exam = example_exam()
    order = canary_order("Q1", exam)
    # golden: a rerun (another process, another day) chooses the same
    assert [q.question_id for q in choose_canaries("Q1", "d-Q1-001", order, 3)] == [
        "Q5/Q5/8cb9d348050d8f76a30b757c1aaa253d", "Q5/Q5/97a6810dfe3875864348dc620ac4432a",
        "Q4/Q4/a74165881fa176d2ebc289a89c55485d"]
    start = int.from_bytes(hashlib.sha256(b"Q1\td-Q1-002").digest()[:8], "big") % 50
    assert choose_canaries("Q1", "d-Q1-002", order, 4) == [order[(start + i) % 50] for i in range(4)]
    assert choose_canaries("Q1", "d-Q1-002", order, 0) == []


def test_never_the_querys_own_questions_and_n_capped_by_what_exists():
    exam = {"a": [question("a", "1", "What is x?"), question("a", "b/2")],
            "b": [question("b", "1", "What is x?"),  # the text of one of a's own questions
                  question("b", "2"),  # its canary id b/2 is the id of one of a's own questions
                  question("b", "3")],
            "c": [question("c", "1")]}
    order = canary_order("a", exam)
    assert sorted(q.question_id for q in order) == ["b/3", "c/1"]
    assert sorted(q.question_id for q in choose_canaries("a", "p", order, 10)) == ["b/3", "c/1"]
    assert canary_order("z", exam) != []  # a query without an exam of its own still gets the others'
    assert canary_order("a", {"a": exam["a"]}) == [] and choose_canaries("a", "p", [], 3) == []
    # every pooled passage with its canaries, in pool order
    pairs = canary_pairs({"a": {"p": "text p", "q": "text q"}, "c": {"r": "text r"}}, exam, 1)
    # Filed under the query's canary id, passages and questions alike, apart from the query's own.
    assert [(p.query_id, p.passage_id, p.passage) for p in pairs] == [
        ("a+canaries", "p", "text p"), ("a+canaries", "q", "text q"), ("c+canaries", "r", "text r")]
    assert all(p.question.query_id == p.query_id for p in pairs)
    assert all(p.question.question_id.split("/")[0] != pooled_query_id(p.query_id) for p in pairs)


def test_the_canary_method_id_is_marked_and_another_method():
    method = "self-rating|flan-t5-large|self-rating@v1"
    assert canary_method_id(method) == "self-rating|flan-t5-large|self-rating@v1+canaries"
    assert is_canary_method(canary_method_id(method)) and not is_canary_method(method)


# -- the audit's rule ------------------------------------------------------------------------------

def test_binomial_tail_by_hand():
    assert tail(3, 4, 0.1) == pytest.approx(4 * 0.1 ** 3 * 0.9 + 0.1 ** 4)  # 0.0037
    assert tail(0, 4, 0.3) == pytest.approx(1.0)
    assert tail(2, 4, 0.0) == 0.0


def test_a_text_answering_far_beyond_the_pools_rate_is_flagged():
    def text(answered: int) -> dict[str, float]:
        return {f"o/{i}": 5.0 if i < answered else 1.0 for i in range(4)}

    # 96 texts answer none, 2 one, 1 two, 1 three: the pool's rate from those answering at most one: 2/392
    grades = {("q", f"t{i}"): text(0) for i in range(96)}
    grades.update({("q", "one-a"): text(1), ("q", "one-b"): text(1), ("q", "two"): text(2), ("q", "three"): text(3)})
    rate = 2 / 392
    assert pool_rate({k: sum(g >= 4 for g in v.values()) for k, v in grades.items()},
                     {k: 4 for k in grades}) == pytest.approx(rate)
    # two of four: 6 r^2 (1-r)^2 + ... = 1.55e-4 <= 0.001; three of four: 5.3e-7
    flags = canary_flags(grades, 4.0)
    assert [(f.kind, f.query_id, f.text_id, f.strength, f.other) for f in flags] == [
        ("canary", "q", "three", 0.75, "o/0"), ("canary", "q", "two", 0.5, "o/0")]
    assert flags[0].evidence == "answers 3 of 4 unrelated questions (o/0, o/1, o/2); the pool answers 0.5%"
    # where honest texts answer one in four, two of four is within the pool's chance (0.26), three too (0.05)
    common = {("q", f"t{i}"): text(1) for i in range(50)}
    assert canary_flags({**common, ("q", "two"): text(2), ("q", "three"): text(3)}, 4.0) == []
    # one answered canary never flags, even where the pool answers none
    assert canary_flags({("q", "t"): text(0), ("q", "one"): text(1)}, 4.0) == []


# -- grading on the example collection ------------------------------------------------------------

def copy_example(root):
    for folder in ("runs", "corpus", "topics", "question_banks"):
        shutil.copytree(EXAMPLES / folder, root / folder)
    return root


def grade(root, canaries: int = 0):
    """The example collection's pool graded by the embedding grader (the repository's config), the
    corpus and runs those under ``root``."""
    return GradeJob.configure(EXAMPLES / "exampp.toml", root, runs=(str(root / "runs"),),
                              corpus=str(root / "corpus" / "passages.jsonl"), canaries=canaries,
                              progress=False).run()


def plant(root) -> list[Question]:
    """bm25 ranks for Q1, in place of d-Q1-032, a text made of two of its four canaries (another
    query's question on T cells and one on Apollo 11): as much as one embedding can be close to
    (stuffed with three or four, it is close to one at most). Its canaries, all four."""
    canaries = choose_canaries("Q1", "planted-Q1", canary_order("Q1", example_exam()), N)
    with (root / "corpus" / "passages.jsonl").open("a") as fh:
        fh.write(jsonl({"docid": "planted-Q1", "text": f"{canaries[0].text} {canaries[3].text}"}))
    run = root / "runs" / "bm25.run"
    assert "Q1 Q0 d-Q1-032 " in run.read_text()
    run.write_text(run.read_text().replace("Q1 Q0 d-Q1-032 ", "Q1 Q0 planted-Q1 "))
    return canaries


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The example collection with a planted text graded without canaries, and, elsewhere, with 4
    and again with 4."""
    plain = copy_example(tmp_path_factory.mktemp("plain"))
    marked = copy_example(tmp_path_factory.mktemp("canaries"))
    plant(plain)
    canaries = plant(marked)
    return plain, grade(plain), marked, grade(marked, N), grade(marked, N), canaries


def test_canary_grades_change_no_label_qrels_or_leaderboard(graded):
    plain, without, marked, with_canaries = graded[:4]
    assert without.canaries is None
    assert (marked / "qrels" / "exam.qrels").read_bytes() == (plain / "qrels" / "exam.qrels").read_bytes()
    assert with_canaries.leaderboard.equals(without.leaderboard)
    assert with_canaries.grades.equals(without.grades)
    assert with_canaries.method_id == without.method_id
    # the measures' default choice: the only method that is not canaries
    assert stored_grades(marked).method_id == with_canaries.method_id


def test_canary_grades_are_filed_apart_under_the_marked_method(graded):
    marked, result = graded[2:4]
    pooled = len(result.pool)
    assert (result.canaries.pairs, result.canaries.graded) == (pooled * N, pooled * N)  # 218 texts, 50 candidates each
    with GradeStore(marked / "grades.sqlite", read_only=True) as store:
        assert store.methods() == [result.method_id, canary_method_id(result.method_id)]
        frame = store.grades(canary_method_id(result.method_id))
    assert len(frame) == pooled * N
    exam = example_exam()
    for filed, pid, question_id in zip(frame["query_id"], frame["passage_id"], frame["question_id"]):
        qid = pooled_query_id(filed)
        assert filed == canary_query_id(qid) != qid
        assert question_id in {q.question_id for q in choose_canaries(qid, pid, canary_order(qid, exam), N)}
        assert question_id.split("/")[0] != qid


def test_a_rerun_grades_no_pair_again(graded):
    rerun = graded[4]
    assert (rerun.summary.graded, rerun.canaries.graded, rerun.canaries.reused) == (0, 0, len(rerun.pool) * N)


def test_the_canary_grader_is_the_grader_under_another_id():
    from exampp.grading.registry import make_grader

    with make_grader("embedding") as inner:  # its model loads on first use: never here
        marked = CanaryGrader(inner)
        assert marked.method.method_id == canary_method_id(inner.method.method_id)
        assert (marked.name, marked.direct, marked.whole_passages, marked.usage) == (
            inner.name, inner.direct, inner.whole_passages, inner.usage)


# -- the audit -----------------------------------------------------------------------------------

def test_a_text_stuffed_with_unrelated_questions_is_flagged(graded):
    marked, canaries = graded[2], graded[5]
    result = CliRunner().invoke(main, ["audit", "-w", str(marked), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    flags = [f for f in report["flagged"] if f["kind"] == "canary"]
    # the honest texts answer none of their canaries: the planted one alone is flagged
    assert [(f["query_id"], f["text_id"], f["runs"]) for f in flags] == [("Q1", "planted-Q1", ["bm25"])]
    assert flags[0]["evidence"] == (f"answers 2 of 4 unrelated questions ({canaries[0].question_id}, "
                                    f"{canaries[3].question_id}); the pool answers 0.0%")
    rows = {row["run"]: row["canary"] for row in report["runs"]}
    assert rows == {"bm25": 1, "dense-like": 0, "keyword-stuffed": 0, "oracle-ish": 0, "random": 0, "weak": 0}


def test_a_real_grade_of_a_text_pooled_for_two_queries_never_shows_as_a_canarys(tmp_path):
    # P is pooled for q1 and q2; q2's question Q7 is a canary of q1. The store joins grades by content,
    # so were the canary filed under q1, q2's real grade of (P, Q7) would show as q1's grade of "q2/Q7".
    from exampp.collection.grades import Grade
    from exampp.stores.grade_store import HashedGrade

    method = "self-rating|judge|self-rating@v1"
    with GradeStore(tmp_path / "grades.sqlite") as store:
        pair, = canary_pairs({"q1": {"P": "the passage"}}, {"q1": [], "q2": [question("q2", "Q7", "seven?")]}, 1)
        hashes = {qid: store.register_passages(qid, {"P": "the passage"}) for qid in ("q2", pair.query_id)}
        asked = store.register_questions([("q2", "Q7", "seven?"), (pair.query_id, pair.question.question_id, "seven?")])
        store.put_many([HashedGrade(Grade("q2", "P", "Q7", 5.0, method), hashes["q2"]["P"], asked["q2", "Q7"])])
    stored = stored_grades(tmp_path, method)
    assert list(zip(stored.grades["query_id"], stored.grades["question_id"])) == [("q2", "Q7")]
