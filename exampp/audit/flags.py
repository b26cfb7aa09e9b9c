"""What ``exampp audit`` reports about a pooled text: a :class:`Flag`, one per finding.

A flag names the class of gaming it suggests (:data:`CLASSES`), the text and query it was found
for, one line of evidence a person can check without opening the text (the matched span, quoted
from the text as submitted; the share of a question found in it; a density against the
collection's), and the detector's measure as a number, so that flags of one class can be ranked
and cut at another threshold. ``run`` is set only for what belongs to one ranking (a text
repeated within a run's ranking of a query); every other flag belongs to the text wherever it is
pooled.
"""
from __future__ import annotations

from dataclasses import dataclass

CLASSES = ("injection", "leakage", "stuffing", "duplicate", "canary")

# Evidence is one line: a quoted span longer than this is cut, keeping its start.
MAX_QUOTE_CHARS = 120


@dataclass(frozen=True)
class Flag:
    kind: str  # one of CLASSES
    query_id: str
    text_id: str  # passage id (an answer's id for RAG answers)
    evidence: str  # one line a person reads
    strength: float  # the detector's measure (1.0 for a rule match, containment, density ratio ...)
    run: str | None = None  # only for what belongs to one ranking
    other: str | None = None  # the question id leaked, or the text id duplicated


def quote(span: str) -> str:
    """``span`` as one line of evidence: whitespace runs (line breaks included) made one space, cut
    to :data:`MAX_QUOTE_CHARS` characters, and quoted; characters that are not printable (the
    zero-width and bidi controls an attack hides behind) are shown as escapes, so that what the
    evidence shows is what the text holds."""
    one_line = " ".join(span.split())
    if len(one_line) > MAX_QUOTE_CHARS:
        one_line = one_line[:MAX_QUOTE_CHARS - 3] + "..."
    shown = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in one_line)
    return f'"{shown}"'
