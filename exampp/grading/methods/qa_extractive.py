"""Extractive question answering: a SQuAD2-fine-tuned reader (the ``extractive`` backend, e.g.
sjrhuschlee/flan-t5-large-squad2, as in the reference EXAM++ tool) extracts a span; an empty
span means unanswerable (grade 0); any other span is verified by string matching. Grades are
filed under the name ``qa``, distinguished from generative QA by the prompt part of the id.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from exampp.grading.base import Judgment, Pair
from exampp.grading.method import GradingMethod, register
from exampp.grading.methods.qa import STRING_VERIFIER, require_answers
from exampp.grading.verify import is_correct
from exampp.llm.backend import Backend, Capability

EXTRACTIVE_ID = "extractive-squad2@v1"


@register
@dataclass(frozen=True)
class ExtractiveQA(GradingMethod):
    name = "qa-extractive"
    description = "a SQuAD2 span reader extracts the answer; 1 when it matches the key"
    needs = ("answers",)
    default_backend = "extractive"

    @property
    def store_name(self) -> str:
        return "qa"

    @property
    def prompt_id(self) -> str:
        return f"{EXTRACTIVE_ID}+{STRING_VERIFIER}"

    @property
    def requires(self) -> frozenset[Capability]:
        return frozenset({Capability.EXTRACT})

    def grade(self, backend: Backend | None, pairs: Sequence[Pair]) -> list[Judgment]:
        assert backend is not None  # a method with a model is bound to one (BoundGrader)
        require_answers(pairs)
        answers = backend.extract([pair.question.text for pair in pairs], [pair.passage for pair in pairs])
        return [Judgment(float(bool(answer) and is_correct(answer, pair.question.answers)), answer=answer)
                for pair, answer in zip(pairs, answers)]
