"""Honest texts for the injection classifier: DL19's judged passages and the TREC 2024 RAG answers
of ``../shared/data``, each split once, by a hash of its id, into the half the classifier is fitted
on (``fit``) and the half its false positives are measured on (``measure``). Shared by
benchmarks/train_addressing.py and benchmarks/injection_multilingual.py.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import shared_data
from exampp.formats.nugget_assignments import read_assignments
from exampp.formats.reference_grades import read_reference_grades

SHARED = shared_data.SHARED / "data"
DL19 = "dl19/DL19-graded-t5-rating-genq-exam-qrels-runs-with-text.jsonl.gz"
RAG = "rag24/nugget-assignments.dev.jsonl.gz"


def half(source: str, text_id: str) -> str:
    """``fit`` or ``measure``: the half a text belongs to, by the MD5 of its source and id."""
    return "fit" if hashlib.md5(f"{source}:{text_id}".encode()).digest()[0] % 2 == 0 else "measure"


def dl19_passages(shared: Path = SHARED) -> dict[str, str]:
    """Passage id -> text of every passage of the DL19 graded file (its first text, per id)."""
    passages: dict[str, str] = {}
    for line in read_reference_grades(shared / DL19):
        for paragraph in line.paragraphs:
            passages.setdefault(paragraph.paragraph_id, paragraph.text)
    return passages


def rag_answer_texts(shared: Path = SHARED) -> dict[str, str]:
    """``run/topic`` -> answer text of every RAG 2024 answer."""
    return {f"{answer.run_id}/{answer.query_id}": answer.text for answer in read_assignments(shared / RAG)}


def honest(part: str, shared: Path = SHARED) -> dict[str, dict[str, str]]:
    """Source (``dl19``, ``rag24``) -> text id -> text of the ``part`` (``fit`` or ``measure``) half."""
    sources = {"dl19": dl19_passages(shared), "rag24": rag_answer_texts(shared)}
    return {name: {text_id: text for text_id, text in texts.items() if half(name, text_id) == part}
            for name, texts in sources.items()}
