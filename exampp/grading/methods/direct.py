"""Direct-grading baselines: the model labels a passage against the query itself, without exam questions.

One method, ``direct:PROMPT``, parameterised by a prompt of :data:`~exampp.grading.method_prompts.DIRECT_PROMPTS`
(thomas, faggiolib, helm, sun and the few-shot faggiolib_few/sun_few). Pairs carry the query title as their
question text (see :mod:`exampp.grading.base`). The model answers by greedy generation of at most
:data:`MAX_NEW_TOKENS` tokens, parsed into a label:

- Thomas: the first digit 0, 1 or 2 in the output is the label; an output without one is 0.
- the others: 1 when the first word is "yes" (case-insensitive), else 0. The first word is the run of
  letters after leading spaces and punctuation; an output that starts with a digit has none.

There is no first-token shortcut as for self-rating: with the T5 vocabulary "0" is generated as two
tokens ("▁", "0") and a first token "Yes" may still continue into another word, so one decoder
step rarely settles the label, while the encoder pass — the bulk of the cost — is the same.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from exampp.grading.base import Judgment, Pair
from exampp.grading.method import GradingMethod, param, register
from exampp.grading.method_prompts import DIRECT_PROMPTS
from exampp.llm.backend import Backend

__all__ = ["Direct", "MAX_NEW_TOKENS", "first_word", "parse_thomas", "parse_yes_no"]

MAX_NEW_TOKENS = 16  # a label is a word or a digit; the rest of the output is never read
_THOMAS_LABEL = re.compile(r"[0-2]")
_FIRST_WORD = re.compile(r"\W*([^\W\d_]+)")  # letters after leading spaces and punctuation (not digits)


def parse_thomas(text: str) -> int:
    """Thomas et al.'s 0-2 scale: the first digit 0-2 in the output, else 0."""
    match = _THOMAS_LABEL.search(text)
    return int(match.group()) if match else 0


def first_word(text: str) -> str | None:
    """The output's first word, lower-cased (letters after leading spaces and punctuation); None without one."""
    match = _FIRST_WORD.match(text)
    return match.group(1).lower() if match is not None else None


def parse_yes_no(text: str) -> int:
    """1 when the output's first word is "yes" (any case), else 0 ("No", other words, no word)."""
    return int(first_word(text) == "yes")


@register
@dataclass(frozen=True)
class Direct(GradingMethod):
    """A direct-grading baseline; ``prompt`` names its prompt in :data:`DIRECT_PROMPTS`."""

    prompt: str = field(metadata=param("the baseline's prompt", choices=tuple(DIRECT_PROMPTS)))

    name = "direct"
    description = "the LLM labels the passage against the query itself, without exam questions"
    shorthand = "prompt"
    direct = True

    @property
    def store_name(self) -> str:
        return f"{self.name}:{self.prompt}"

    @property
    def prompt_id(self) -> str:
        return DIRECT_PROMPTS[self.prompt].prompt_id

    @property
    def top_grade(self) -> int:  # type: ignore[override]  # Thomas et al. label 0-2, the others 0/1
        return 2 if self.prompt == "thomas" else 1

    def grade(self, backend: Backend | None, pairs: Sequence[Pair]) -> list[Judgment]:
        assert backend is not None  # a method with a model is bound to one (BoundGrader)
        template = DIRECT_PROMPTS[self.prompt]
        parse = parse_thomas if self.prompt == "thomas" else parse_yes_no
        prompts = [backend.fit(template, context=pair.passage, query_title=pair.question.text) for pair in pairs]
        return [Judgment(float(parse(output)), answer=output)
                for output in backend.generate(prompts, max_new_tokens=MAX_NEW_TOKENS)]
