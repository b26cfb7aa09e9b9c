"""A synthetic graded workspace for the assess tests, with a known truth: 8 runs over 5 queries of 24
passages each; every passage has a human grade 0-3 (the truth, written as qrels) and a judge grade 0-5
that tracks it with noise; run r<n> ranks the passages by human grade plus noise that shrinks with n,
so better runs have higher P@10."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from exampp.collection.grades import Grade
from exampp.stores.grade_store import GradeStore

METHOD = "synthetic-judge|m|p"  # unknown to the registry, 0-5 grades: relevant from 4
QUERIES = [f"q{i}" for i in range(5)]
PASSAGES = 24
RUNS = 8


def truth() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
    """(human grade, judge grade) of every passage, query -> passage -> grade."""
    rng = np.random.default_rng(7)
    human, judge = {}, {}
    for q in QUERIES:
        grades = rng.choice(4, size=PASSAGES, p=[0.5, 0.2, 0.2, 0.1])
        noisy = np.clip(np.round(grades * 5 / 3 + rng.normal(0, 1.3, PASSAGES)), 0, 5).astype(int)
        human[q] = {f"{q}d{i}": int(g) for i, g in enumerate(grades)}
        judge[q] = {f"{q}d{i}": int(g) for i, g in enumerate(noisy)}
    return human, judge


def write_workspace(root: Path) -> Path:
    """runs/, the bank, the judge's grades (one question per query) and qrels/truth.qrels under ``root``."""
    human, judge = truth()
    rng = np.random.default_rng(11)
    (root / "runs").mkdir(parents=True)
    for n in range(RUNS):
        lines = []
        for q in QUERIES:
            ids = list(human[q])
            score = np.array([human[q][d] for d in ids]) * (n + 1) / RUNS + rng.normal(0, 1.0, len(ids))
            for rank, i in enumerate(np.argsort(-score)[:15]):
                lines.append(f"{q} Q0 {ids[i]} {rank + 1} {15 - rank} r{n}\n")
        (root / "runs" / f"r{n}.run").write_text("".join(lines))
    (root / "question_banks").mkdir()
    questions = [(q, f"{q}/u", f"What about {q}?") for q in QUERIES]
    (root / "question_banks" / "questions.jsonl").write_text(
        "".join(json.dumps({"query_id": q, "question_id": i, "text": t}) + "\n" for q, i, t in questions))
    with GradeStore(root / "grades.sqlite") as store:
        phash = {q: store.register_passages(q, {d: f"passage {d}" for d in judge[q]}) for q in QUERIES}
        qhash = store.register_questions(questions)
        store.put_many([(Grade(q, d, f"{q}/u", float(g), METHOD), phash[q][d], qhash[q, f"{q}/u"])
                        for q in QUERIES for d, g in judge[q].items()])
    (root / "qrels").mkdir()
    (root / "qrels" / "truth.qrels").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q in QUERIES for d, g in human[q].items()))
    return root
