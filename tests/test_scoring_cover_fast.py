"""The vectorised EXAM-Cover against a plain reference (the per-passage set unions it replaced),
on random collections: score ties, queries a run lacks, runs shorter than the depth, questions
no passage answers, queries without questions, a bank that drops or adds questions."""
from __future__ import annotations

import random
from collections import defaultdict

import pandas as pd
import pytest

from exampp.collection.runs import from_scores
from exampp.scoring import exam_cover, questions_by_query


def reference_cover(runs, grades, questions=None, *, tau=1, depth=20, normalized=False):
    """EXAM-Cover the plain way: each passage's answered questions as a set, unions per ranking."""
    if questions is None:
        questions = questions_by_query(grades)
    allowed = {(q, qu) for q, ids in questions.items() for qu in ids}
    answered = defaultdict(set)
    for q, p, qu, g in grades[["query_id", "passage_id", "question_id", "grade"]].itertuples(index=False):
        if g >= tau and (q, qu) in allowed:
            answered[q, p].add(qu)
    pooled = defaultdict(set)
    if normalized:
        for run in runs.values():
            for qid in questions:
                for doc in run.top(qid, depth):
                    pooled[qid] |= answered.get((qid, doc.docid), set())
    rows = []
    for name in sorted(runs):
        for qid in sorted(questions):
            total = len(pooled[qid]) if normalized else len(questions[qid])
            covered = set()
            for doc in runs[name].top(qid, depth):
                covered |= answered.get((qid, doc.docid), set())
            rows.append((name, qid, len(covered), total, len(covered) / total if total else 0.0))
    return pd.DataFrame(rows, columns=["run", "query_id", "covered", "total", "cover"])


def random_collection(seed: int):
    rng = random.Random(seed)
    queries = [f"q{i}" for i in range(rng.randint(1, 6))]
    rows = []
    for q in queries:
        passages = [f"{q}p{i}" for i in range(rng.randint(1, 12))] + ["shared"]  # one id in every query
        questions = [f"{q}/u{i}" for i in range(rng.randint(0, 70))]  # > 64: bit sets past one word
        for p in passages:
            for qu in rng.sample(questions, rng.randint(0, len(questions))):
                rows.append((q, p, qu, float(rng.choice([0, 1, 2, 3, 4, 5, 4.5]))))
    grades = pd.DataFrame(rows, columns=["query_id", "passage_id", "question_id", "grade"])
    runs = {}
    for r in range(rng.randint(1, 5)):
        scores = {}
        for q in rng.sample(queries + ["q_only_in_run"], rng.randint(0, len(queries))):
            docs = [f"{q}p{i}" for i in range(15)] + ["shared", "unjudged"]
            scores[q] = {d: float(rng.randint(0, 3)) for d in rng.sample(docs, rng.randint(1, len(docs)))}  # ties
        runs[f"run{r}"] = from_scores(f"run{r}", scores)
    return rng, queries, grades, runs


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(40))
def test_fast_cover_equals_the_reference(seed):
    rng, queries, grades, runs = random_collection(seed)
    bank = questions_by_query(grades)
    bank = {q: [qu for qu in ids if rng.random() < 0.7] + ["never/graded"] for q, ids in bank.items()}
    bank["q_without_grades"] = ["x/1", "x/2"]
    bank["q_without_questions"] = []
    for questions in (None, bank):
        for tau in (1, 4, 4.5, 6):
            for depth in (1, 3, 20, None):
                for normalized in (False, True):
                    options = dict(tau=tau, depth=depth, normalized=normalized)
                    got = exam_cover(runs, grades, questions, **options)
                    want = reference_cover(runs, grades, questions, **options)
                    pd.testing.assert_frame_equal(got, want, check_exact=True)


def test_fast_cover_of_nothing():
    grades = pd.DataFrame(columns=["query_id", "passage_id", "question_id", "grade"])
    run = {"A": from_scores("A", {"q": {"p": 1.0}})}
    pd.testing.assert_frame_equal(exam_cover(run, grades), reference_cover(run, grades), check_exact=True)
    pd.testing.assert_frame_equal(exam_cover({}, grades, {"q": ["u"]}), reference_cover({}, grades, {"q": ["u"]}))
