"""Reading an LLM's free-text response (DESIGN.md §2, "Parsing a self-rating").

A self-rating response that starts with a digit 0-5 (after leading white space) is that grade;
otherwise a response that expresses unanswerability is 0, and any other text is 1.
A response expresses unanswerability when, lower-cased with punctuation turned into spaces and
white space collapsed, it *is* one of :data:`UNANSWERABLE` ("No." and "Unknown!" are, "no idea"
is not). The QA verifier counts such answers as wrong.
"""
from __future__ import annotations

import re
import string

UNANSWERABLE: tuple[str, ...] = (
    "unanswerable",
    "no",
    "no answer",
    "not enough information",
    "unknown",
    "it is not possible to tell",
    "it does not say",
    "no relevant information",
)
_UNANSWERABLE_SET = frozenset(UNANSWERABLE)
_PUNCTUATION = re.compile(f"[{re.escape(string.punctuation)}]")
GRADE_DIGITS = "012345"


def normalize_response(text: str) -> str:
    """Lower-cased, punctuation replaced by spaces, white space collapsed and stripped."""
    return " ".join(_PUNCTUATION.sub(" ", text.lower()).split())


def is_unanswerable(text: str) -> bool:
    """Whether ``text`` is one of the unanswerable expressions (after :func:`normalize_response`)."""
    return normalize_response(text) in _UNANSWERABLE_SET


def leading_grade(text: str) -> int | None:
    """The digit 0-5 that ``text`` starts with (leading white space ignored), else None."""
    stripped = text.lstrip()
    if stripped and stripped[0] in GRADE_DIGITS:
        return int(stripped[0])
    return None


def parse_self_rating(text: str) -> int:
    """The grade of a self-rating response: its leading digit 0-5; else 0 if unanswerable; else 1."""
    grade = leading_grade(text)
    if grade is not None:
        return grade
    return 0 if is_unanswerable(text) else 1
