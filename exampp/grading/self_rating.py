"""Self-rating: the LLM rates 0-5 how well the passage answers the question (DESIGN.md §2).

Slow path (``fast=False``), the method as defined: greedy generation, parsed by
:func:`exampp.grading.parsing.parse_self_rating`.

Fast path (default): one forward pass gives the distribution of the first generated token.
Every vocabulary token is mapped to the grade its decoded text starts with (decoded exactly as
generation output is decoded, so "▁5" and "5" both map to 5, "▁2018" maps to 2, and "▁" or
"▁6" map to nothing). Where the most likely token of the *whole* vocabulary maps to a grade,
greedy generation would emit that token first, its output would start with that digit, and so
parsing would return it: the grade is read off without generating. The judgment then carries
``probabilities[g]`` = the summed probability of the tokens mapped to grade g, renormalised over
g = 0..5 (the distribution over grades given that the answer starts with a grade). The other
pairs (most likely token not a grade: "▁", "no", text...) fall back to generation + parsing in
the same batch (a seq2seq model's generation reuses the encoder output) and carry no
probabilities. Both paths give the same grade on every pair (tests/test_self_rating.py, in fp32;
in bf16 a near-tie between the top two first tokens could round differently in the two code
paths). The fast path is used only when the model's generation config leaves the first greedy
step raw (:attr:`HFModel.first_step_is_raw`); otherwise every pair is generated.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch

from exampp.grades import SELF_RATING as SELF_RATING_METHOD
from exampp.grades import Method
from exampp.grading.base import Grader, Judgment, Pair
from exampp.grading.parsing import GRADE_DIGITS, leading_grade, parse_self_rating
from exampp.grading.prompts import SELF_RATING
from exampp.llm.hf import HFModel

NO_GRADE = -1
MAX_NEW_TOKENS = 32  # a rating is one token; room for models that explain themselves


def self_rating_prompt(model: HFModel, pair: Pair) -> str:
    """The self-rating prompt for ``pair``, its passage cut to fit the model."""
    return model.fit(SELF_RATING, context=pair.passage, question=pair.question.text)


def token_grades(tokenizer, vocab_size: int) -> torch.Tensor:
    """``[vocab_size]`` long: the grade each token's decoded text starts with, :data:`NO_GRADE` for none.

    Tokens are decoded one by one the way generated output is (special tokens skipped), so ids
    beyond the tokenizer's vocabulary and special tokens decode to "" and get no grade.
    """
    texts = tokenizer.batch_decode([[i] for i in range(vocab_size)], skip_special_tokens=True)
    grades = [leading_grade(text) for text in texts]
    return torch.tensor([NO_GRADE if g is None else g for g in grades], dtype=torch.long)


def grade_probabilities(logprobs: torch.Tensor, grades: torch.Tensor) -> tuple[float, ...]:
    """P(grade = g) for g = 0..5 from one first-token distribution (``[vocab]`` log-probabilities): the summed
    probability of the tokens mapped to g (``grades`` from :func:`token_grades`), renormalised over 0..5."""
    graded = grades >= 0
    mass = torch.zeros(len(GRADE_DIGITS), dtype=logprobs.dtype).index_add_(0, grades[graded], logprobs[graded].exp())
    return tuple((mass / mass.sum()).tolist())


class SelfRatingGrader(Grader):
    """Answerability self-rated 0-5 by an LLM (the EXAM++ self-rating prompt)."""

    name = SELF_RATING_METHOD

    def __init__(self, model: HFModel, fast: bool = True) -> None:
        self.model = model
        self.fast = fast
        self._grades: torch.Tensor | None = None  # token -> grade, built on first use

    @property
    def method(self) -> Method:
        return Method(self.name, self.model.name, SELF_RATING.prompt_id)

    def grade(self, pairs: Sequence[Pair]) -> list[Judgment]:
        prompts = [self_rating_prompt(self.model, pair) for pair in pairs]
        if not (self.fast and self.model.first_step_is_raw):
            texts = self.model.generate(prompts, max_new_tokens=MAX_NEW_TOKENS)
            return [Judgment(grade=parse_self_rating(text), answer=text) for text in texts]
        results = self.model.first_token_or_generate(prompts, self._no_grade, max_new_tokens=MAX_NEW_TOKENS)
        judgments = []
        for logprobs, text in results:
            if text is not None:  # the most likely first token is no grade: generated
                judgments.append(Judgment(grade=parse_self_rating(text), answer=text))
                continue
            grades = self._token_grades(len(logprobs))
            grade = int(grades[logprobs.argmax()])
            probabilities = grade_probabilities(logprobs, grades)
            judgments.append(Judgment(grade=grade, answer=str(grade), probabilities=probabilities))
        return judgments

    def _no_grade(self, logprobs: torch.Tensor) -> torch.Tensor:
        """Rows whose most likely first token maps to no grade: these need generation."""
        grades = self._token_grades(logprobs.shape[1]).to(logprobs.device)
        return grades[logprobs.argmax(dim=1)] == NO_GRADE

    def _token_grades(self, vocab_size: int) -> torch.Tensor:
        if self._grades is None or len(self._grades) != vocab_size:
            self._grades = token_grades(self.model.tokenizer, vocab_size)
        return self._grades
