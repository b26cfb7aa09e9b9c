"""The model-based injection check: the judge model asked whether a pooled text addresses its grader.

``injection-check`` is a grading method so that it runs wherever grading runs (every backend, Ray
workers, the Batch API) and its answers are stored, resumed and shared like grades; but it judges
no relevance (:attr:`~exampp.grading.method.GradingMethod.judges_relevance` is False): no measure,
qrels or leaderboard takes its grades, and ``exampp audit`` reads them as flags of class
``injection`` (:mod:`exampp.audit.model_check`), beside the rule set's.

Like a direct method it asks once per pooled text (the pair's question is the query title, which
the prompt leaves out), with :data:`~exampp.grading.method_prompts.INJECTION_CHECK`: the text fenced as
data (:func:`~exampp.grading.method_prompts.fence`), the instruction as a system turn where the backend
sends conversations. The answer is read as the direct methods read yes/no
(:func:`~exampp.grading.methods.direct.parse_yes_no`): grade 1 when its first word is "yes", the
text addresses a grader; else 0. An answer whose first word is neither yes nor no is 0 as well and
counted (:class:`CheckSummary`): a model that cannot follow the format shows it.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from exampp.grading.base import Judgment, Pair
from exampp.grading.method import GradingMethod, register
from exampp.grading.method_prompts import INJECTION_CHECK, INJECTION_CHECK_SYSTEM, fence
from exampp.grading.methods.direct import MAX_NEW_TOKENS, first_word, parse_yes_no
from exampp.llm.backend import Backend
from exampp.llm.prompt import Conversation

__all__ = ["CheckSummary", "InjectionCheck", "check_summary", "unparsed"]


def unparsed(answer: str | None) -> bool:
    """Whether an answer's first word is neither yes nor no (it counts as 0, "does not address a grader");
    no answer stored (None, or NaN in a frame) is none either."""
    return not isinstance(answer, str) or first_word(answer) not in ("yes", "no")


@register
@dataclass(frozen=True)
class InjectionCheck(GradingMethod):
    """Whether a pooled text holds instructions or requests addressed to an evaluator or AI model."""

    name = "injection-check"
    description = ("not a relevance judgement: the LLM says whether the text addresses a grader "
                   "(how to rate it, to ignore its instructions); exampp audit flags it")
    direct = True
    judges_relevance = False

    @property
    def prompt_id(self) -> str:
        return INJECTION_CHECK.prompt_id

    def grade(self, backend: Backend | None, pairs: Sequence[Pair]) -> list[Judgment]:
        assert backend is not None  # a method with a model is bound to one (BoundGrader)
        texts = [backend.fit(INJECTION_CHECK, context=fence(pair.passage)) for pair in pairs]
        # the system turn apart, where the backend sends conversations; elsewhere the template as written
        prompts: list[Conversation] = [
            (("system", INJECTION_CHECK_SYSTEM), ("user", text.removeprefix(INJECTION_CHECK_SYSTEM + "\n\n")))
            for text in texts]
        return [Judgment(float(parse_yes_no(output)), answer=output)
                for output in backend.generate(prompts, max_new_tokens=MAX_NEW_TOKENS)]


@dataclass(frozen=True)
class CheckSummary:
    """What a check found over the pool: the texts checked, those graded 1, the answers it could not read."""

    texts: int
    flagged: int
    unparsed: int

    def __str__(self) -> str:
        text = f"checked {self.texts} pooled texts: {self.flagged} address a grader (grade 1)"
        if self.unparsed:
            text += (f"; {self.unparsed} answer{' was' if self.unparsed == 1 else 's were'} neither yes nor no "
                     "(counted as 0)")
        return text


def check_summary(grades: pd.DataFrame) -> CheckSummary:
    """The summary of a check's pool grades (a frame as :meth:`exampp.stores.grade_store.GradeStore.grades` gives)."""
    return CheckSummary(len(grades), int((grades["grade"] >= 1).sum()), sum(map(unparsed, grades["answer"])))
