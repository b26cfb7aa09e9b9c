"""Direct-grading baselines: the model labels a passage against the query itself, without exam questions.

One grader, parameterised by a prompt of :data:`~exampp.grading.prompts.DIRECT_PROMPTS` (Thomas,
FaggioliB, HELM, Sun and the few-shot FaggioliB/Sun). Pairs carry the query title as their
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

from exampp.grades import DIRECT_PREFIX, Method
from exampp.grading.base import Grader, Judgment, Pair
from exampp.grading.prompts import DIRECT_PROMPTS

__all__ = ["DirectGrader", "MAX_NEW_TOKENS", "parse_thomas", "parse_yes_no"]

MAX_NEW_TOKENS = 16  # a label is a word or a digit; the rest of the output is never read
_THOMAS_LABEL = re.compile(r"[0-2]")
_FIRST_WORD = re.compile(r"\W*([^\W\d_]+)")  # letters after leading spaces and punctuation (not digits)


def parse_thomas(text: str) -> int:
    """Thomas et al.'s 0-2 scale: the first digit 0-2 in the output, else 0."""
    match = _THOMAS_LABEL.search(text)
    return int(match.group()) if match else 0


def parse_yes_no(text: str) -> int:
    """1 when the output's first word is "yes" (any case), else 0 ("No", other words, no word)."""
    match = _FIRST_WORD.match(text)
    return int(match is not None and match.group(1).lower() == "yes")


class DirectGrader(Grader):
    """A direct-grading baseline; ``key`` names its prompt in :data:`DIRECT_PROMPTS`."""

    direct = True

    def __init__(self, model, key: str, *, max_new_tokens: int = MAX_NEW_TOKENS) -> None:
        if key not in DIRECT_PROMPTS:
            raise ValueError(f"unknown direct prompt {key!r}: use one of {', '.join(DIRECT_PROMPTS)}")
        self.model = model
        self.key = key
        self.prompt = DIRECT_PROMPTS[key]
        self.name = DIRECT_PREFIX + key
        self.parse = parse_thomas if key == "thomas" else parse_yes_no
        self.max_new_tokens = max_new_tokens

    @property
    def method(self) -> Method:
        return Method(self.name, self.model.name, self.prompt.prompt_id)

    def grade(self, pairs: Sequence[Pair]) -> list[Judgment]:
        prompts = [self.model.fit(self.prompt, context=pair.passage, query_title=pair.question.text)
                   for pair in pairs]
        outputs = self.model.generate(prompts, max_new_tokens=self.max_new_tokens)
        return [Judgment(float(self.parse(output)), answer=output) for output in outputs]
