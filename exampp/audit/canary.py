"""Canary flags: pooled texts the judge finds to answer questions of other queries far more often
than the pool's texts do (the canaries ``exampp grade --canaries N`` grades; see
:mod:`exampp.grading.canaries`).

An honest text answers an unrelated question now and then (a general passage, a question close to
its topic); a text that moves the judge by an instruction, or by the questions stuffed into it,
answers most of them whatever its wording. The pool's own rate is the yardstick: the share of
canaries answered by the texts that answer at most one (so that the gamed texts, however many, do
not raise the bar they are measured against). A text is flagged when it answers at least
:data:`MIN_ANSWERED` and, were it answering each at the pool's rate independently, so many or more
would come about with probability at most :data:`ALPHA`: an honest text is then flagged about once
in a thousand (the issue's goal is 1% false positives), and one lucky answer never flags a text,
even where the pool answers none.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

from exampp.audit.flags import Flag

MIN_ANSWERED = 2
ALPHA = 0.001
_SHOWN = 5  # answered canaries named in the evidence; the count says how many in all


def tail(answered: int, asked: int, rate: float) -> float:
    """P(X >= ``answered``) for X ~ Binomial(``asked``, ``rate``)."""
    return sum(math.comb(asked, j) * rate ** j * (1 - rate) ** (asked - j) for j in range(answered, asked + 1))


def pool_rate(answered: Mapping[tuple[str, str], int], asked: Mapping[tuple[str, str], int]) -> float:
    """The share of canaries answered by the texts that answer at most one (all texts where none does)."""
    honest = [text for text, k in answered.items() if k <= 1] or list(answered)
    total = sum(asked[text] for text in honest)
    return sum(answered[text] for text in honest) / total if total else 0.0


def canary_flags(grades: Mapping[tuple[str, str], Mapping[str, float]], tau: float, *,
                 min_answered: int = MIN_ANSWERED, alpha: float = ALPHA) -> list[Flag]:
    """The ``canary`` flags of the pooled texts whose canary grades are ``grades`` ((query id, text
    id) -> canary question id -> grade), a canary answered at grade >= ``tau``; sorted by query and text."""
    hits = {text: sorted(qid for qid, grade in by_question.items() if grade >= tau)
            for text, by_question in grades.items()}
    answered = {text: len(ids) for text, ids in hits.items()}
    asked = {text: len(by_question) for text, by_question in grades.items()}
    rate = pool_rate(answered, asked)
    flags = []
    for (query_id, text_id), ids in sorted(hits.items()):
        k, n = len(ids), asked[query_id, text_id]
        if k < min_answered or tail(k, n, rate) > alpha:
            continue
        shown = ", ".join(ids[:_SHOWN]) + (", ..." if k > _SHOWN else "")
        flags.append(Flag("canary", query_id, text_id,
                          f"answers {k} of {n} unrelated questions ({shown}); the pool answers {rate:.1%}",
                          k / n, other=ids[0]))
    return flags
