"""Self-rating: the LLM rates 0-5 how well the passage answers the question (DESIGN.md §2).

Slow path (``fast=false``), the method as defined: greedy generation, parsed by
:func:`exampp.grading.rating_parsing.parse_self_rating`.

Fast path (default, on backends with label log-probabilities): the backend reports the first
generated token's distribution. A token stands for the grade its decoded text starts with ("5",
" 5", "2018" → 2; "", "6", "no" → none). Where the most likely token stands for a grade, greedy
generation starts with that digit, so parsing would return it: the grade is read off, and the
judgment carries ``probabilities[g]``, the summed probability of the tokens standing for g among
the :data:`~exampp.defaults.TOP_LOGPROBS` most likely first tokens, renormalised over 0..5 (the
most an OpenAI-compatible server reports, so every backend gives the same figures). Other pairs
get the generated text, parsed, and no probabilities. Both paths give the same grade on every
pair (tests/test_self_rating.py, in fp32).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from exampp.grading.base import Judgment, Pair
from exampp.grading.method import GradingMethod, param, register
from exampp.grading.method_prompts import SELF_RATING_PROMPTS, SELF_RATING_SYSTEM, fence
from exampp.grading.rating_parsing import GRADE_DIGITS, leading_grade, parse_self_rating
from exampp.llm.backend import Backend, Capability, Labels
from exampp.llm.prompt import Conversation

MAX_NEW_TOKENS = 32  # a rating is one token; room for models that explain themselves
GRADES = Labels(tuple(GRADE_DIGITS), leading_grade)


def grade_probabilities(logprobs: Sequence[float]) -> tuple[float, ...]:
    """P(grade = g) for g = 0..5 from per-grade log-masses, renormalised to sum to 1."""
    mass = [math.exp(v) for v in logprobs]
    total = sum(mass)
    return tuple(m / total for m in mass)


@register
@dataclass(frozen=True)
class SelfRating(GradingMethod):
    prompt: str = field(default="self-rating", metadata=param(
        "prompt variant (exampp.grading.method_prompts.SELF_RATING_PROMPTS)", choices=tuple(SELF_RATING_PROMPTS)))
    fast: bool = field(default=True, metadata=param(
        "read the grade and its probabilities off the first token where it is a grade", in_id=False))

    name = "self-rating"
    description = "the LLM rates 0-5 how well the passage answers the question (EXAM++)"
    top_grade = 5
    tau = 4.0

    @property
    def prompt_id(self) -> str:
        return SELF_RATING_PROMPTS[self.prompt].prompt_id

    def grade(self, backend: Backend | None, pairs: Sequence[Pair]) -> list[Judgment]:
        assert backend is not None  # a method with a model is bound to one (BoundGrader)
        template = SELF_RATING_PROMPTS[self.prompt]
        system = SELF_RATING_SYSTEM.get(self.prompt)
        fitted = [
            backend.fit(template, context=p.passage if system is None else fence(p.passage), question=p.question.text)
            for p in pairs]
        prompts: list[str | Conversation] = list(fitted)
        if system is not None:  # the system turn apart, where the backend sends conversations
            prompts = [(("system", system), ("user", text.removeprefix(system + "\n\n"))) for text in fitted]
        if not (self.fast and Capability.LABEL_LOGPROBS in backend.capabilities):
            return [Judgment(float(parse_self_rating(text)), answer=text)
                    for text in backend.generate(prompts, max_new_tokens=MAX_NEW_TOKENS)]
        judgments = []
        for seen in backend.next_token_labels(prompts, GRADES, max_new_tokens=MAX_NEW_TOKENS):
            if seen.top_label is None:  # the most likely first token is no grade: read the text
                judgments.append(Judgment(float(parse_self_rating(seen.text or "")), answer=seen.text))
            else:
                probabilities = grade_probabilities(seen.logprobs) if seen.logprobs is not None else None
                judgments.append(Judgment(float(seen.top_label), answer=str(seen.top_label),
                                          probabilities=probabilities))
        return judgments
