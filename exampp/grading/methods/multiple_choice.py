"""Multiple-choice grading: the choice the model finds most likely after question and passage.

Each choice is scored by its length-normalised log-likelihood as the model's answer to the
MULTIPLE_CHOICE prompt — the mean log-probability of its tokens, so long choices are not
penalised for their length — and the best-scoring choice is the model's pick (the first one
on a tie). Grade 1 when it is the answer key's choice (``correct_choice``), else 0; the
judgment keeps the picked choice's text.

Probabilities follow the grade scale, like every grader's: ``(P(wrong), P(right))``, where
P(right) is the softmax over the choices' normalised scores taken at the correct choice.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from exampp.grading.base import Judgment, Pair
from exampp.grading.method import GradingMethod, register
from exampp.grading.method_prompts import MULTIPLE_CHOICE
from exampp.llm.backend import Backend, Capability

__all__ = ["MultipleChoice", "choose"]


def choose(scores: Sequence[tuple[float, int]]) -> tuple[int, list[float]]:
    """The picked index and the softmax over the length-normalised scores, from (sum logprob, n tokens)
    per choice. A choice without tokens scores -inf (it cannot be an answer) unless all are empty."""
    normalised = [total / n if n else -math.inf for total, n in scores]
    if all(math.isinf(v) for v in normalised):
        normalised = [0.0] * len(normalised)
    top = max(normalised)
    weights = [math.exp(v - top) for v in normalised]
    total = sum(weights)
    return normalised.index(top), [w / total for w in weights]


@register
@dataclass(frozen=True)
class MultipleChoice(GradingMethod):
    """Picks the choice with the highest length-normalised log-likelihood given question and passage."""

    name = "multiple-choice"
    description = "the choice the LLM finds most likely; 1 when it is the answer key's"
    needs = ("choices",)

    @property
    def prompt_id(self) -> str:
        return MULTIPLE_CHOICE.prompt_id

    @property
    def requires(self) -> frozenset[Capability]:
        return frozenset({Capability.CONTINUATION})

    def grade(self, backend: Backend | None, pairs: Sequence[Pair]) -> list[Judgment]:
        assert backend is not None  # a method with a model is bound to one (BoundGrader)
        lacking = sorted({p.question.question_id for p in pairs if not self.usable(p.question)})
        if lacking:
            raise ValueError(f"{len(lacking)} question(s) have no choices with a 'correct_choice', e.g. "
                             f"{', '.join(lacking[:3])}: multiple-choice grading needs both")
        if not pairs:
            return []
        prompts, continuations = [], []
        lead = backend.answer_lead
        for pair in pairs:
            prompt = backend.fit(MULTIPLE_CHOICE, context=pair.passage, question=pair.question.text)
            prompts += [prompt] * len(pair.question.choices)
            continuations += [lead + choice for choice in pair.question.choices]
        scores = backend.continuation_logprobs(prompts, continuations)
        judgments, start = [], 0
        for pair in pairs:
            choices = pair.question.choices
            picked, probabilities = choose(scores[start:start + len(choices)])
            start += len(choices)
            correct = pair.question.correct_choice
            assert correct is not None  # every question is usable: checked above
            right = probabilities[correct]
            judgments.append(Judgment(float(picked == correct), answer=choices[picked],
                                      probabilities=(1.0 - right, right)))
        return judgments
