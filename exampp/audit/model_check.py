"""Model flags: the pooled texts a judge model says address a grader (``exampp grade --method
injection-check``; see :mod:`exampp.grading.methods.injection_check`).

The rule set (:mod:`exampp.audit.injection`) finds the phrasings it knows; a model reads what it
was not told about (a paraphrase, another language, an order spread over sentences). Its answers
are grades like any other, filed under the check's method id with the judge's name, so the audit
reads every judge the store holds: each judge's yes is a flag of class ``injection`` of its own,
strength 1.0, ``other`` the method id. A text flagged by the rules and by a model is one flagged
text carrying both flags.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

from exampp.audit.flags import Flag
from exampp.collection.grades import DIRECT_QUESTION_ID, Method
from exampp.grading.methods.injection_check import InjectionCheck

Pair = tuple[str, str]  # (query_id, text_id)


def is_check_method(method_id: str) -> bool:
    """Whether a store method id holds the injection check's answers (any judge, any prompt version)."""
    return method_id.split("|", 1)[0] == InjectionCheck.name


def check_flags(grades: Mapping[str, Mapping[Pair, float]]) -> list[Flag]:
    """The ``injection`` flags of ``grades`` (check method id -> (query id, text id) -> grade): one per
    text a judge graded 1; sorted by query, text and method id."""
    flags = [Flag("injection", query_id, text_id,
                  f"judge model {Method.parse(method_id).model} says it addresses a grader", 1.0, other=method_id)
             for method_id, by_text in grades.items()
             for (query_id, text_id), grade in by_text.items() if grade >= 1]
    return sorted(flags, key=lambda f: (f.query_id, f.text_id, f.other))


def stored_check_grades(store_path: Path, passages: Mapping[str, Collection[str]]) -> dict[str, dict[Pair, float]]:
    """The check's grades in the store at ``store_path`` of the pooled texts (``passages``: query id
    -> text ids), per check method id; empty without a store."""
    from exampp.stores.grade_store import GradeStore

    if not store_path.exists():
        return {}
    with GradeStore(store_path, read_only=True) as store:
        found: dict[str, dict[Pair, float]] = {}
        for method_id in filter(is_check_method, store.methods()):
            frame = store.grades(method_id, query_ids=list(passages))
            found[method_id] = {(qid, pid): grade for qid, pid, question_id, grade
                                in zip(frame["query_id"], frame["passage_id"], frame["question_id"], frame["grade"])
                                if question_id == DIRECT_QUESTION_ID and pid in passages.get(qid, ())}
    return found
