"""Citation support: does the cited segment support the sentence citing it? 0 none, 1 partial, 2 full.

The judge of the TREC 2024 RAG track's support evaluation (Thakur et al. 2025, arXiv 2504.15205):
one (sentence, cited segment) pair per prompt, the model answering "Full Support", "Partial
Support" or "No Support". The prompt (:data:`CITATION_SUPPORT`) follows the track's GPT-4o prompt
in substance: the same three labels and what each means, the same test ("is it accurate to say
'according to the citation' before the statement?"), the same order (statement, then citation).
It is written here in its spirit, not copied, so grades may differ somewhat from the track's.
A pair's question is the sentence (question id ``question_id_for(topic, sentence)``), its passage
the segment's text.

A model's text is read by the labels it contains, whatever the case and whatever surrounds them
(quotes, "Answer:", an explanation). A text with none of the three, or with two different ones
("not Full Support but Partial Support"), is unusable: the model is asked again in the same
conversation with a corrective turn, up to :data:`MAX_ATTEMPTS` requests in all
(:func:`exampp.generation.asking.ask`). A pair still without a label then gets grade 0 (No
Support: support the judge does not state is not counted), its answer starting with
:data:`UNREAD` and its last text, so that it can be counted and inspected in the store.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from exampp.generation.asking import Asking, Unusable, ask
from exampp.grading.base import Judgment, Pair
from exampp.grading.method import GradingMethod, register
from exampp.llm.backend import Backend
from exampp.llm.prompt import Prompt

MAX_NEW_TOKENS = 32  # a label is two words; room for a model that explains itself briefly
MAX_ATTEMPTS = 3  # requests per pair: the first and two corrective turns
LABELS = {"no support": 0, "partial support": 1, "full support": 2}
UNREAD = "[no label read; graded No Support] "  # the answer of a pair that fell back to 0
_LABEL = re.compile(r"\b(no|partial|full)\s+support\b", re.IGNORECASE)

CITATION_SUPPORT = Prompt("citation-support", "v1", (
    "In this task you judge whether a statement is supported by the citation given for it. The "
    "statement comes from a system's answer: it may read fluently and still be slightly inaccurate, "
    "so read it as carefully as a proofreader would.\n\n"
    "Ask yourself whether it would be accurate to write \"according to the citation\" in front of the "
    "statement, and check every piece of information in it. Choose one of three options:\n"
    "- \"Full Support\": the citation supports all of the information in the statement.\n"
    "- \"Partial Support\": the citation supports some of the information, but other parts of it are "
    "missing from the citation.\n"
    "- \"No Support\": the citation supports no part of the statement.\n\n"
    "Judge from the citation alone; when unsure, use your best judgment. Answer with \"Full Support\", "
    "\"Partial Support\" or \"No Support\" and nothing else.\n\n"
    "Statement: {question}\n\n"
    "Citation: {context}\n\n"
    "Response:"
))
CORRECTIVE = ('That answer could not be read ({problem}). Reply with exactly one of "Full Support", '
              '"Partial Support" or "No Support", and nothing else.')


def parse_support(text: str) -> int:
    """The grade of the one label in ``text`` (0 No, 1 Partial, 2 Full Support); :class:`Unusable`
    when it holds none, or two different ones."""
    found = {LABELS[f"{word.lower()} support"] for word in _LABEL.findall(text)}
    if not found:
        raise Unusable("no label")
    if len(found) > 1:
        raise Unusable("more than one label")
    return found.pop()


@register
@dataclass(frozen=True)
class CitationSupport(GradingMethod):
    name = "citation-support"
    description = "the LLM judges whether a cited segment supports the sentence citing it: 0 no, 1 partial, 2 full"
    top_grade = 2
    tau = 2.0

    @property
    def prompt_id(self) -> str:
        return CITATION_SUPPORT.prompt_id

    def grade(self, backend: Backend | None, pairs: Sequence[Pair]) -> list[Judgment]:
        assert backend is not None  # a method with a model is bound to one (BoundGrader)
        prompts = [backend.fit(CITATION_SUPPORT, context=p.passage, question=p.question.text) for p in pairs]
        judgments: list[Judgment | None] = [None] * len(pairs)
        asking = Asking(max_new_tokens=MAX_NEW_TOKENS, temperature=0.0, max_attempts=MAX_ATTEMPTS)
        for answered in ask(backend, prompts, parse_support, lambda problem: CORRECTIVE.format(problem=problem),
                            asking):
            last = answered.answers[-1]
            judgments[answered.index] = (Judgment(0.0, answer=UNREAD + last) if answered.value is None
                                         else Judgment(float(answered.value), answer=last))
        return judgments  # type: ignore[return-value]  # ask settles every item
