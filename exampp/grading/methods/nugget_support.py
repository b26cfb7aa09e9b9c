"""Nugget assignment as the AutoNuggetizer does it (Pradeep et al. 2024; the ``nuggetizer`` package 0.0.5):
an LLM labels a topic's nuggets support, partial_support or not_support for one answer.

``nugget-support`` sends the ``nuggetizer``'s assignment prompt, verbatim: a system turn ("You are
NuggetizeAssignerLLM, ...") and a user turn with the query, the answer as "Passage" and the nuggets as a
Python list, asking for a Python list of labels. Each request holds up to ``window`` nuggets of one
answer (10, as the track used); ``window=1`` asks per nugget, one label a request. ``labels=2`` is the
package's two-label variant (support / not_support). The grade is the label's index in
:data:`~exampp.formats.nugget_assignments.ASSIGNMENTS`: 0 not_support, 1 partial_support, 2 support.

Pairs come from the runner in chunks; with ``window`` > 1 the runner keeps all of an answer's
pairs in one chunk (:attr:`NuggetSupport.whole_passages`), and they go in windows in the order of
their ``position`` (the topic's order, where the pairs carry it): the requests are the package's own,
window for window. Nuggets already in the store are not asked again, so a resumed answer's windows
hold the nuggets still missing. A pair's question is the nugget; the query text comes from the question's
``info["query"]`` (``exampp nuggets assign`` puts it there; a pair without it is not gradable, see
:meth:`NuggetSupport.usable`). An empty answer supports nothing and is not sent, as in the package.

The model's text is untrusted: code fences are dropped, and the labels are read in order from the
last bracketed list holding any (else from the whole text), each a word ``support``,
``partial_support`` or ``not_support`` in any case, with a space or ``-`` for ``_`` and an optional
``ed`` (no Python is evaluated). A reply whose label count is not the window's is asked again at
temperature 0.2, as the package does, up to ``attempts`` requests; then its nuggets get
not_support and keep the reply, cut to :data:`KEPT_CHARS` characters (a lone surrogate, which no
UTF-8 store holds, as U+FFFD) and marked with
:data:`UNPARSED` in the judgment's ``answer``, so people can inspect it and jobs can count it. A
read label is kept as the judgment's ``answer``. Replies are bounded by :func:`max_new_tokens`.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from exampp.collection.ids import valid_text
from exampp.collection.questions import Question
from exampp.formats.nugget_assignments import ASSIGNMENTS
from exampp.grading.base import Judgment, Pair
from exampp.grading.method import GradingMethod, MethodError, param, register
from exampp.llm.backend import Backend
from exampp.llm.prompt import Conversation, Prompt

__all__ = ["NuggetSupport", "UNPARSED", "assign_conversation", "max_new_tokens", "parse_labels"]

QUERY_KEY = "query"  # the question info's key for the query text
POSITION_KEY = "position"  # the question info's key for the nugget's place in its topic's list
UNPARSED = "unparsed: "  # what the answer of a judgment whose reply had no readable labels starts with
KEPT_CHARS = 300  # characters of an unreadable reply kept for people to inspect
RETRY_TEMPERATURE = 0.2  # the package's temperature when it asks again

SYSTEM = ("You are NuggetizeAssignerLLM, an intelligent assistant that can label a list of atomic nuggets based on "
          "if they are captured by a given passage.")
INSTRUCTIONS = {
    3: ("Based on the query and passage, label each of the {n} nuggets either as support, partial_support, or "
        "not_support using the following criteria. A nugget that is fully captured in the passage should be labeled "
        "as support. A nugget that is partially captured in the passage should be labeled as partial_support. If "
        "the nugget is not captured at all, label it as not_support. Return the list of labels in a Pythonic list "
        "format (type: List[str]). The list should be in the same order as the input nuggets. Make sure to provide "
        "a label for each nugget."),
    2: ("Based on the query and passage, label each of the {n} nuggets either as support or not_support using the "
        "following criteria. A nugget that is fully captured in the passage should be labeled as support; "
        "otherwise, label them as not_support. Return the list of labels in a Pythonic list format (type: "
        "List[str]). The list should be in the same order as the input nuggets. Make sure to provide a label for "
        "each nugget."),
}
# The system turn, a blank line, the user turn: what a model without a chat format reads (as_text), and
# what is fitted to the judge's input (only the passage is cut).
ASSIGN = Prompt("nuggetizer-assign", "v1", SYSTEM + "\n\n{instruction}\n\nSearch Query: {query}\nPassage: {context}\n"
                "Nugget List: {nuggets}\nOnly return the list of labels (List[str]). Do not explain.\nLabels:")

_FENCE = re.compile(r"```[A-Za-z]*")
_LIST = re.compile(r"\[([^\[\]]*)\]")
_LABEL = re.compile(r"(?<!\w)(?:(not|partial(?:ly)?)[\s_-]*)?support(?:ed)?(?!\w)", re.IGNORECASE)


def parse_labels(text: str, count: int) -> list[int] | None:
    """The grades of the ``count`` labels in a reply, in order; None when it holds another number."""
    text = _FENCE.sub(" ", text)
    lists = [inner for inner in _LIST.findall(text) if _LABEL.search(inner)]
    found = _LABEL.findall(lists[-1] if lists else text)
    if len(found) != count:
        return None
    return [0 if qualifier.lower() == "not" else 1 if qualifier else 2 for qualifier in found]


def max_new_tokens(window: int) -> int:
    """Tokens a reply to ``window`` nuggets may take: a fenced list of the longest label takes ~6 a label."""
    return 32 + 16 * window


def assign_conversation(backend: Backend, query: str, passage: str, nuggets: Sequence[str],
                        labels: int = 3) -> Conversation:
    """The package's assignment prompt (system and user turn) for ``nuggets`` of one answer, the
    passage cut to fit the judge's input with the system turn counted."""
    fitted = backend.fit(ASSIGN, context=passage, instruction=INSTRUCTIONS[labels].format(n=len(nuggets)),
                         query=query, nuggets=str(list(nuggets)))
    return (("system", SYSTEM), ("user", fitted.removeprefix(SYSTEM + "\n\n")))


def _info(question: Question, key: str):
    return (question.info or {}).get(key)


def _position(question: Question) -> int:
    position = _info(question, POSITION_KEY)
    return position if isinstance(position, int) else 0


@register
@dataclass(frozen=True)
class NuggetSupport(GradingMethod):
    """The AutoNuggetizer's listwise (or per-nugget) support assignment."""

    window: int = field(default=10, metadata=param("nuggets of one answer per request (1: one request per nugget)"))
    labels: int = field(default=3, metadata=param(
        "labels asked for: 3 (support, partial_support, not_support) or 2 (support, not_support)", choices=("2", "3")))
    attempts: int = field(default=3, metadata=param(
        "requests per window at most: a reply without the right number of labels is asked again at temperature 0.2"))

    name = "nugget-support"
    description = "the LLM labels an answer's nuggets support/partial_support/not_support (AutoNuggetizer)"
    top_grade = 2
    tau = 2.0

    def __post_init__(self) -> None:
        if self.window < 1:
            raise ValueError("window must be at least 1")
        if self.labels not in INSTRUCTIONS:
            raise ValueError("labels must be 2 or 3")
        if self.attempts < 1:
            raise ValueError("attempts must be at least 1")

    @property
    def prompt_id(self) -> str:
        return f"{ASSIGN.prompt_id}:labels={self.labels},window={self.window},attempts={self.attempts}"

    @property
    def whole_passages(self) -> bool:
        # An answer's nuggets in one chunk: the windows are then the AutoNuggetizer's own.
        return self.window > 1

    def usable(self, question: Question) -> bool:
        """A nugget whose query text the pair carries (in ``info["query"]``)."""
        return bool(_info(question, QUERY_KEY))

    def grade(self, backend: Backend | None, pairs: Sequence[Pair]) -> list[Judgment]:
        assert backend is not None  # a method with a model is bound to one (BoundGrader)
        judgments: list[Judgment | None] = [None] * len(pairs)
        asked: list[tuple[Conversation, list[int], str]] = []  # a request, its pairs, its last reply
        for window in self._windows(pairs):
            first = pairs[window[0]]
            if not first.passage.strip():
                for i in window:
                    judgments[i] = Judgment(0.0, answer=ASSIGNMENTS[0])
                continue
            asked.append((assign_conversation(backend, _info(first.question, QUERY_KEY), first.passage,
                                              [pairs[i].question.text for i in window], self.labels), window, ""))
        for attempt in range(self.attempts):
            if not asked:
                break
            replies = backend.generate([conversation for conversation, _, _ in asked],
                                       max_new_tokens=max_new_tokens(self.window),
                                       temperature=0.0 if attempt == 0 else RETRY_TEMPERATURE)
            again = []
            for (conversation, window, _), reply in zip(asked, replies):
                labels = parse_labels(reply, len(window))
                if labels is None:
                    again.append((conversation, window, reply))
                    continue
                for i, grade in zip(window, labels):
                    judgments[i] = Judgment(float(grade), answer=ASSIGNMENTS[grade])
            asked = again
        for _, window, reply in asked:
            for i in window:
                judgments[i] = Judgment(0.0, answer=UNPARSED + valid_text(reply[:KEPT_CHARS]))
        return judgments  # type: ignore[return-value]  # every pair is in a window

    def _windows(self, pairs: Sequence[Pair]) -> list[list[int]]:
        """Indices of ``pairs`` by request: one answer's nuggets (same query, same passage) in their
        topic's order, ``window`` at a time."""
        answers: dict[tuple[str, str], list[int]] = {}
        for i, pair in enumerate(pairs):
            query = _info(pair.question, QUERY_KEY)
            if not query:
                raise MethodError(f"method {self}: nugget {pair.question.question_id!r} carries no query text "
                                  f"(question info {QUERY_KEY!r}); exampp nuggets assign gives it")
            answers.setdefault((query, pair.passage), []).append(i)
        windows = []
        for indices in answers.values():
            indices.sort(key=lambda i: _position(pairs[i].question))
            windows += [indices[start:start + self.window] for start in range(0, len(indices), self.window)]
        return windows
