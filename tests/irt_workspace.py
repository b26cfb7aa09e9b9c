"""A tiny graded workspace for the IRT tests: 6 runs over 2 queries x 3 questions, where passage p<k>
answers question k (at grade ``correct``, every other pair at 0) and run r<n> retrieves a growing mix."""
from __future__ import annotations

import json
from pathlib import Path

from exampp.collection.grades import Grade
from exampp.stores.grade_store import GradeStore

PASSAGES = {"q1": {f"p{k}": f"passage {k}" for k in range(3)}, "q2": {f"p{k}": f"passage {k}" for k in range(3, 6)}}
QUESTIONS = [("q1", f"q1/u{k}", f"What is {k}?") for k in range(3)] + \
            [("q2", f"q2/u{k}", f"How to explain {k}?") for k in range(3, 6)]
RETRIEVED = {"r0": [], "r1": ["p0"], "r2": ["p0", "p3"], "r3": ["p0", "p1", "p3"],
             "r4": ["p0", "p1", "p3", "p4"], "r5": ["p0", "p1", "p2", "p3", "p4", "p5"]}
# EXAM-Cover of each run: the mean over q1, q2 of the fraction of their 3 questions retrieved
COVER = {"r0": 0.0, "r1": 1 / 6, "r2": 1 / 3, "r3": 0.5, "r4": 2 / 3, "r5": 1.0}


def graded_workspace(root: Path, method_id: str, correct: float) -> Path:
    """Write runs/, the question bank, the grades of ``method_id`` and official.tsv under ``root``."""
    (root / "runs").mkdir(parents=True)
    for run, docs in RETRIEVED.items():
        lines = [f"{'q1' if int(d[1]) < 3 else 'q2'} Q0 {d} 1 1 {run}\n" for d in docs] or [f"q1 Q0 zzz 1 1 {run}\n"]
        (root / "runs" / f"{run}.run").write_text("".join(lines))
    (root / "question_banks").mkdir()
    (root / "question_banks" / "questions.jsonl").write_text(
        "".join(json.dumps({"query_id": q, "question_id": i, "text": t}) + "\n" for q, i, t in QUESTIONS))
    with GradeStore(root / "grades.sqlite") as store:
        phash = {q: store.register_passages(q, texts) for q, texts in PASSAGES.items()}
        qhash = store.register_questions(QUESTIONS)
        store.put_many([(Grade(q, p, i, correct if p[1:] == i[-1] else 0.0, method_id), phash[q][p], qhash[q, i])
                        for q, texts in PASSAGES.items() for p in texts for (qq, i, _) in QUESTIONS if qq == q])
    (root / "official.tsv").write_text("".join(f"r{k}\t{k / 10}\n" for k in range(6)))
    return root
