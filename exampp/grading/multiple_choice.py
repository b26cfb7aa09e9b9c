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

from collections.abc import Sequence

import torch

from exampp.grades import Method
from exampp.grading.base import Grader, Judgment, Pair
from exampp.grading.prompts import Prompt

__all__ = ["MULTIPLE_CHOICE", "MultipleChoiceGrader", "choose"]

MULTIPLE_CHOICE = Prompt("multiple-choice", "v1", "Question: {question}\nContext: {context}\nAnswer:")


def choose(scores: Sequence[tuple[float, int]]) -> tuple[int, list[float]]:
    """The picked index and the softmax over the length-normalised scores, from (sum logprob, n tokens)
    per choice. A choice without tokens scores -inf (it cannot be an answer) unless all are empty."""
    normalised = torch.tensor([total / n if n else float("-inf") for total, n in scores], dtype=torch.float64)
    if torch.isinf(normalised).all():
        normalised.zero_()
    return int(normalised.argmax()), torch.softmax(normalised, dim=0).tolist()


class MultipleChoiceGrader(Grader):
    """Picks the choice with the highest length-normalised log-likelihood given question and passage."""

    name = "multiple-choice"
    requires_choices = True  # the runner leaves out questions without choices and answer key

    def __init__(self, model) -> None:
        self.model = model

    @property
    def method(self) -> Method:
        return Method(self.name, self.model.name, MULTIPLE_CHOICE.prompt_id)

    def grade(self, pairs: Sequence[Pair]) -> list[Judgment]:
        lacking = sorted({p.question.question_id for p in pairs
                          if not p.question.choices or p.question.correct_choice is None})
        if lacking:
            raise ValueError(f"{len(lacking)} question(s) have no choices with a 'correct_choice', e.g. "
                             f"{', '.join(lacking[:3])}: multiple-choice grading needs both")
        if not pairs:
            return []
        prompts, continuations = [], []
        # Causal LMs continue "Answer:" with a space-led token; seq2seq decoders start afresh.
        lead = "" if self.model.is_encoder_decoder else " "
        for pair in pairs:
            prompt = self.model.fit(MULTIPLE_CHOICE, context=pair.passage, question=pair.question.text)
            prompts += [prompt] * len(pair.question.choices)
            continuations += [lead + choice for choice in pair.question.choices]
        scores = self.model.continuation_logprobs(prompts, continuations)
        judgments, start = [], 0
        for pair in pairs:
            choices = pair.question.choices
            picked, probabilities = choose(scores[start:start + len(choices)])
            start += len(choices)
            right = probabilities[pair.question.correct_choice]
            judgments.append(Judgment(float(picked == pair.question.correct_choice), answer=choices[picked],
                                      probabilities=(1.0 - right, right)))
        return judgments
