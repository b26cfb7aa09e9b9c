"""The untouched collections the audit benchmarks read: the DL19 workspace's pool and the TREC
2024 RAG answers, in the shapes :func:`exampp.audit.audit_texts` takes (texts per query, query
texts, the exam's questions per query, the runs' rankings). Shared by
benchmarks/audit_false_positives.py and benchmarks/gaming.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from exampp.collection.questions import QuestionBank
from exampp.formats.nugget_assignments import read_assignments
from exampp.formats.question_bank import read_question_bank

ANSWERS = "nugget-assignments.dev.jsonl.gz"


def exam_of(bank: QuestionBank) -> dict[str, dict[str, str]]:
    """query id -> question id -> question text."""
    return {query_id: {q.question_id: q.text for q in questions} for query_id, questions in bank.by_query().items()}


@dataclass(frozen=True)
class Answers:
    """RAG answers as pooled texts: each answer a text of its run (its id the run's name: one answer
    per run and topic), its topic's nuggets the exam."""

    texts: dict[str, dict[str, str]]  # topic -> answer id -> answer
    topics: dict[str, str]  # topic -> its text
    exam: dict[str, dict[str, str]]  # topic -> nugget id -> nugget
    rankings: dict[str, dict[str, list[str]]]  # run -> topic -> [its answer's id]

    @property
    def count(self) -> int:
        return sum(len(by_id) for by_id in self.texts.values())


def rag_answers(folder: str | Path) -> Answers:
    """The answers and nuggets of ``folder``/:data:`ANSWERS`."""
    path = Path(folder) / ANSWERS
    answers = read_assignments(path)
    texts: dict[str, dict[str, str]] = {}
    rankings: dict[str, dict[str, list[str]]] = {}
    for answer in answers:
        texts.setdefault(answer.query_id, {})[answer.run_id] = answer.text
        rankings.setdefault(answer.run_id, {})[answer.query_id] = [answer.run_id]
    topics = {a.query_id: a.query or "" for a in answers}
    return Answers(texts, topics, exam_of(read_question_bank(path)), rankings)
