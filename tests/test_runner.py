"""The grading runner: incremental grading (counting the pairs the grader sees), chunked commits,
deduplication, skipped questions, direct graders."""
from __future__ import annotations

from pathlib import Path

import pytest

from exampp.collection.corpus import MemoryCorpus
from exampp.collection.questions import Question, QuestionBank
from exampp.collection.runs import from_scores
from exampp.grading.base import Pair
from exampp.grading.runner import build_exam, grade_pairs, grade_pool, pool_grades, pool_records
from exampp.pool import build_pool
from exampp.stores.grade_store import GradeStore
from fake_grader import FakeGrader, fake_grade

TEXTS = {"d1": "coral bleaching heat", "d2": "printing press", "d3": "vaccines", "d4": "more coral"}
RUN_A = from_scores("a", {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0}})
RUN_B = from_scores("b", {"q1": {"d4": 3.0, "d1": 1.0}})
QUESTIONS = [
    Question("q1", "q1/a", "Why do corals bleach?", answers=("heat",)),
    Question("q1", "q1/b", "Who printed first?"),
    Question("q2", "q2/a", "How do vaccines work?", answers=("antigens",)),
]


def grade(tmp_path: Path, runs, questions, texts=TEXTS, grader=None, **kwargs):
    grader = grader or FakeGrader()
    pool = build_pool(runs, MemoryCorpus(texts), depth=20)
    exam = build_exam(grader, QuestionBank(questions))
    with GradeStore(tmp_path / "grades.sqlite") as store:
        summary = grade_pool(pool, exam, grader, store, progress=False, **kwargs)
        frame = pool_grades(store, pool, exam, grader.method.method_id)
    return grader, summary, frame


def expected_frame(runs, questions, texts=TEXTS):
    """(query, passage, question) -> grade worked out from the fake grader's formula."""
    pooled = {(q, d.docid) for run in runs for q, docs in run.rankings.items() for d in docs}
    return {(q, p, qu.question_id): float(fake_grade(texts[p], qu.text))
            for q, p in pooled for qu in questions if qu.query_id == q}


def as_dict(frame):
    return {(q, p, qu): g for q, p, qu, g in zip(frame.query_id, frame.passage_id, frame.question_id, frame.grade)}


def test_first_run_grades_every_pair_then_nothing(tmp_path):
    grader, summary, frame = grade(tmp_path, [RUN_A, RUN_B], QUESTIONS)
    # q1 pools d1, d2, d4 x 2 questions; q2 pools d3 x 1 question
    assert (summary.pairs, summary.graded, summary.reused, summary.shared) == (7, 7, 0, 0)
    assert len(grader.seen) == 7
    assert as_dict(frame) == expected_frame([RUN_A, RUN_B], QUESTIONS)
    again, summary, frame2 = grade(tmp_path, [RUN_A, RUN_B], QUESTIONS)
    assert again.seen == [] and again.calls == 0
    assert (summary.pairs, summary.graded, summary.reused) == (7, 0, 7)
    assert "7 pairs: 0 new pairs graded" in str(summary)
    assert frame2.equals(frame)


def test_adding_a_run_grades_only_its_new_passages(tmp_path):
    grade(tmp_path, [RUN_A], QUESTIONS)
    grader, summary, frame = grade(tmp_path, [RUN_A, RUN_B], QUESTIONS)
    assert sorted(grader.seen) == sorted([("more coral", "Why do corals bleach?"),
                                          ("more coral", "Who printed first?")])
    assert (summary.graded, summary.reused) == (2, 5)
    assert as_dict(frame) == expected_frame([RUN_A, RUN_B], QUESTIONS)


def test_adding_questions_grades_only_the_new_questions(tmp_path):
    grade(tmp_path, [RUN_A, RUN_B], QUESTIONS)
    extra = Question("q1", "q1/c", "When did bleaching start?")
    grader, summary, frame = grade(tmp_path, [RUN_A, RUN_B], [*QUESTIONS, extra])
    assert sorted(grader.seen) == sorted((TEXTS[d], extra.text) for d in ("d1", "d2", "d4"))
    assert as_dict(frame) == expected_frame([RUN_A, RUN_B], [*QUESTIONS, extra])


def test_editing_a_passage_regrades_exactly_its_pairs(tmp_path):
    grade(tmp_path, [RUN_A, RUN_B], QUESTIONS)
    edited = {**TEXTS, "d2": "printing press, edited"}
    grader, summary, frame = grade(tmp_path, [RUN_A, RUN_B], QUESTIONS, texts=edited)
    assert sorted(grader.seen) == [("printing press, edited", "Who printed first?"),
                                   ("printing press, edited", "Why do corals bleach?")]
    assert as_dict(frame) == expected_frame([RUN_A, RUN_B], QUESTIONS, edited)


def test_editing_a_question_regrades_exactly_its_pairs(tmp_path):
    grade(tmp_path, [RUN_A, RUN_B], QUESTIONS)
    changed = [QUESTIONS[0], Question("q1", "q1/b", "Who printed first in Europe?"), QUESTIONS[2]]
    grader, summary, frame = grade(tmp_path, [RUN_A, RUN_B], changed)
    assert sorted(grader.seen) == sorted((TEXTS[d], "Who printed first in Europe?") for d in ("d1", "d2", "d4"))
    assert as_dict(frame) == expected_frame([RUN_A, RUN_B], changed)


def test_identical_texts_are_graded_once(tmp_path):
    texts = {**TEXTS, "d4": TEXTS["d1"]}  # d4 is a copy of d1
    grader, summary, frame = grade(tmp_path, [RUN_A, RUN_B], QUESTIONS, texts=texts)
    assert (summary.pairs, summary.graded, summary.shared, summary.reused) == (7, 5, 2, 0)
    assert len(grader.seen) == 5 and len(set(grader.seen)) == 5
    assert "2 shared a grade with an identical pair" in str(summary)
    assert as_dict(frame) == expected_frame([RUN_A, RUN_B], QUESTIONS, texts)


def test_chunks_are_committed_longest_first_and_a_crash_keeps_them(tmp_path):
    class Crashing(FakeGrader):
        def grade(self, pairs):
            if self.calls == 2:
                raise RuntimeError("boom")
            return super().grade(pairs)

    crashing = Crashing()
    with pytest.raises(RuntimeError):
        grade(tmp_path, [RUN_A, RUN_B], QUESTIONS, grader=crashing, chunk_size=3)
    assert len(crashing.seen) == 6  # two chunks of 3 committed, the third failed
    # longest passage first, its questions together, longest question first
    assert crashing.seen == [(TEXTS["d1"], QUESTIONS[0].text), (TEXTS["d1"], QUESTIONS[1].text),
                             (TEXTS["d2"], QUESTIONS[0].text), (TEXTS["d2"], QUESTIONS[1].text),
                             (TEXTS["d4"], QUESTIONS[0].text), (TEXTS["d4"], QUESTIONS[1].text)]
    grader, summary, frame = grade(tmp_path, [RUN_A, RUN_B], QUESTIONS, chunk_size=3)
    assert len(grader.seen) == 1 and (summary.graded, summary.reused) == (1, 6)
    assert as_dict(frame) == expected_frame([RUN_A, RUN_B], QUESTIONS)


def test_chunk_size_sets_the_grader_calls(tmp_path):
    grader, summary, _ = grade(tmp_path, [RUN_A, RUN_B], QUESTIONS, chunk_size=2)
    assert grader.calls == 4  # 7 pairs in chunks of 2


def test_questions_lacking_the_answer_key_are_skipped(tmp_path):
    grader, summary, frame = grade(tmp_path, [RUN_A, RUN_B], QUESTIONS, grader=FakeGrader(requires_answers=True))
    assert summary.skipped_questions == 1 and summary.pairs == 4
    assert set(frame.question_id) == {"q1/a", "q2/a"}
    assert "skipped: 1 questions lacking the grader's answer key or choices" in str(summary)


def test_direct_grader_grades_passages_against_the_query_title(tmp_path):
    grader = FakeGrader(direct=True)
    pool = build_pool([RUN_A, RUN_B], MemoryCorpus(TEXTS))
    exam = build_exam(grader, topics={"q1": "coral reefs"})
    assert exam.question_ids() == {"q1": ["direct"]}
    with GradeStore(tmp_path / "g.sqlite") as store:
        summary = grade_pool(pool, exam, grader, store, progress=False)
        frame = pool_grades(store, pool, exam, grader.method.method_id)
    assert sorted(grader.seen) == sorted((TEXTS[d], "coral reefs") for d in ("d1", "d2", "d4"))
    assert summary.queries_without_questions == 1  # q2 has no title
    assert as_dict(frame) == {("q1", d, "direct"): float(fake_grade(TEXTS[d], "coral reefs"))
                              for d in ("d1", "d2", "d4")}


def test_pool_grades_leave_out_passages_no_longer_pooled(tmp_path):
    grade(tmp_path, [RUN_A, RUN_B], QUESTIONS)
    grader = FakeGrader()
    pool = build_pool([RUN_A], MemoryCorpus(TEXTS))
    exam = build_exam(grader, QuestionBank(QUESTIONS[:2]))
    with GradeStore(tmp_path / "grades.sqlite") as store:
        frame = pool_grades(store, pool, exam, grader.method.method_id)
        records = pool_records(store, pool, exam, grader.method.method_id)
    assert sorted(as_dict(frame)) == [("q1", d, q) for d in ("d1", "d2") for q in ("q1/a", "q1/b")]
    assert {(g.query_id, g.passage_id, g.question_id): g.grade for g in records} == as_dict(frame)
    assert {g.answer for g in records} == {f"g{int(g)}" for g in frame.grade}


def test_grade_collection_is_the_step_by_step_job(tmp_path):
    from exampp.api.grade import grade_collection
    from exampp.errors import InputError
    from exampp.labels import exam_labels
    from exampp.scoring import exam_cover, summarize

    run_c = from_scores("c", {"q1": {"d1": 1.0, "d9": 0.5}, "q7": {"d2": 1.0}})  # d9: no text; q7: no questions
    runs = {r.name: r for r in (RUN_A, RUN_B, run_c)}
    with GradeStore(tmp_path / "grades.sqlite") as store:
        result = grade_collection(runs, MemoryCorpus(TEXTS), FakeGrader(), store, QuestionBank(QUESTIONS),
                                  progress=False)
    assert as_dict(result.grades) == expected_frame([RUN_A, RUN_B], QUESTIONS)
    assert (result.summary.pairs, result.summary.graded) == (7, 7)
    assert any("query 'q7'" in w for w in result.warnings) and any("d9" in w for w in result.warnings)
    # labels, qrels and cover follow from the grades, at the fake method's tau (4: it grades 0-5)
    questions = {q: [x.question_id for x in QUESTIONS if x.query_id == q] for q in {x.query_id for x in QUESTIONS}}
    assert result.tau == 4 and result.labels == result.qrels == exam_labels(result.grades, questions)
    assert result.leaderboard.equals(summarize(exam_cover(runs, result.grades, questions, tau=4)))
    with GradeStore(tmp_path / "strict.sqlite") as store, pytest.raises(InputError, match="query 'q7'"):
        grade_collection(runs, MemoryCorpus(TEXTS), FakeGrader(), store, QuestionBank(QUESTIONS),
                         strict=True, progress=False)


def test_grade_pairs_refuses_an_id_with_two_texts_and_grades_nothing(tmp_path):
    question = Question("q1", "x", "what is a cat?")
    pairs = [Pair("q1", "p1", "A cat purrs.", question), Pair("q1", "p1", "A dog barks.", question)]
    grader = FakeGrader()
    with GradeStore(tmp_path / "grades.sqlite") as store:
        with pytest.raises(ValueError, match="^query 'q1': passage 'p1' or question 'x' comes with two "
                                             "different texts$"):
            grade_pairs(pairs, grader, store, progress=False)
        assert grader.calls == 0 and store.grades().empty
