"""Question-answering grading: the judge answers the question from the passage, the answer is verified.

``qa`` prompts the judge with the method's QUESTION_ANSWERING prompt (greedy decoding) and verifies
the extracted answer against the question's answer key, either by normalised string matching
(``verify=string``, :mod:`exampp.grading.verify`) or by asking the judge the ANSWER_VERIFICATION
prompt for each gold answer in turn until it says yes (``verify=llm``). Grades are 1 (correct) or
0; the extracted answer is kept. Questions without an answer key are left out of the exam.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from exampp.grading.base import Judgment, Pair
from exampp.grading.method import GradingMethod, param, register
from exampp.grading.method_prompts import ANSWER_VERIFICATION, QUESTION_ANSWERING
from exampp.grading.rating_parsing import is_unanswerable
from exampp.grading.verify import is_correct, is_ill_formed
from exampp.llm.backend import Backend, Capability, Labels

__all__ = ["QA", "STRING_VERIFIER", "YES_NO", "llm_verify", "require_answers"]

STRING_VERIFIER = "string@v1"  # the version of exampp.grading.verify's rules; bump it when they change
MAX_NEW_TOKENS = 32
_YES, _NO = ("yes", "Yes", "YES"), ("no", "No", "NO")


def _yes_no(token: str) -> int | None:
    word = token.strip()
    return 0 if word in _YES else 1 if word in _NO else None


YES_NO = Labels(("yes", "no"), _yes_no)


def require_answers(pairs: Sequence[Pair]) -> None:
    """ValueError naming how many questions lack an answer key (the runner leaves such questions out)."""
    missing = sorted({pair.question.question_id for pair in pairs if not pair.question.answers})
    if missing:
        examples = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
        raise ValueError(f"{len(missing)} question(s) have no answer key ('answers'), e.g. {examples}: "
                         "question-answering grading verifies answers against it; leave them out or "
                         "grade them with another grader")


def llm_verify(backend: Backend, pairs: Sequence[Pair], answers: Sequence[str]) -> list[bool]:
    """Per pair: does the judge call its answer an equally correct response for one of the gold answers?

    The judge is asked ANSWER_VERIFICATION for gold answers in order until it says yes. Its yes/no is
    read at the first generated token: yes when the "yes" tokens are more likely than the "no" tokens
    (from the text's first word where the backend reports no probabilities). Ill-formed and
    unanswerable answers are wrong without asking.
    """
    correct = [False] * len(pairs)
    pending = [i for i, answer in enumerate(answers) if not (is_unanswerable(answer) or is_ill_formed(answer))]
    round_ = 0
    while pending:
        prompts = [ANSWER_VERIFICATION.render(question=pairs[i].question.text,
                                              correct_answer=pairs[i].question.answers[round_],
                                              answer=answers[i]) for i in pending]
        for i, seen in zip(pending, backend.next_token_labels(prompts, YES_NO, max_new_tokens=MAX_NEW_TOKENS)):
            if seen.logprobs is not None:
                correct[i] = seen.logprobs[0] > seen.logprobs[1]
            else:
                first = (seen.text or "").split()
                correct[i] = bool(first) and _yes_no(first[0].strip(".,!:;")) == 0
        round_ += 1
        pending = [i for i in pending if not correct[i] and round_ < len(pairs[i].question.answers)]
    return correct


@register
@dataclass(frozen=True)
class QA(GradingMethod):
    verify: str = field(default="string", metadata=param(
        "how the extracted answer is checked against the answer key", choices=("string", "llm")))

    name = "qa"
    description = "the LLM answers the question from the passage; 1 when the answer matches the key"
    needs = ("answers",)

    @property
    def prompt_id(self) -> str:
        verifier = STRING_VERIFIER if self.verify == "string" else ANSWER_VERIFICATION.prompt_id
        return f"{QUESTION_ANSWERING.prompt_id}+{verifier}"

    @property
    def requires(self) -> frozenset[Capability]:
        if self.verify == "llm":
            return frozenset({Capability.GENERATE, Capability.LABEL_LOGPROBS})
        return frozenset({Capability.GENERATE})

    def extract(self, backend: Backend, pairs: Sequence[Pair]) -> list[str]:
        """The judge's answer to each pair's question from its passage (greedy decoding)."""
        prompts = [backend.fit(QUESTION_ANSWERING, context=pair.passage, question=pair.question.text)
                   for pair in pairs]
        return [answer.strip() for answer in backend.generate(prompts, max_new_tokens=MAX_NEW_TOKENS)]

    def grade(self, backend: Backend | None, pairs: Sequence[Pair]) -> list[Judgment]:
        assert backend is not None  # a method with a model is bound to one (BoundGrader)
        require_answers(pairs)
        answers = self.extract(backend, pairs)
        if self.verify == "llm":
            correct = llm_verify(backend, pairs, answers)
        else:
            correct = [is_correct(answer, pair.question.answers) for pair, answer in zip(pairs, answers)]
        return [Judgment(float(ok), answer=answer) for ok, answer in zip(correct, answers)]
