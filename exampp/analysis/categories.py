"""Question categories for exam analysis: Bloom's revised taxonomy by keywords, and the question word.

A whole word of a question matches a keyword when their Porter stems are equal and the word
begins with the keyword less a final "e" or "y". So inflections match ("explains", "explained",
"explaining" → explain; "identified" → identify), words that merely contain a keyword do not
("listen" is not "list"), and the prefix rule undoes stemming's worst conflations of words
spelt differently ("general" is not generate, "original" not originate, "validity" not
validate, "experiment" not experience). Derived words that keep the keyword's spelling still
match — a known cost of the keyword method: "useful" → use, "measures" (noun) → measure,
"development" → develop, "settings" → set, "following" → follow, "states" → state.
A question can have several levels.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

import pandas as pd
from nltk.stem import PorterStemmer

from exampp.collection.questions import Question

# Guinet et al. (2024), as in DESIGN.md §2 (verbatim; "illustrate" is in two levels there).
BLOOM_KEYWORDS: dict[str, tuple[str, ...]] = {
    "Remembering": ("list", "identify", "name", "define", "state", "mention", "recall", "label", "repeat",
                    "recognize"),
    "Understanding": ("explain", "describe", "summarize", "predict", "interpret", "paraphrase", "translate",
                      "illustrate", "rephrase", "clarify", "check", "find", "experience", "suspect", "review",
                      "notice", "assume", "interact", "observe", "understand"),
    "Applying": ("demonstrate", "apply", "use", "write", "illustrate", "solve", "show", "execute", "implement",
                 "operate", "practice", "set", "configure", "try", "follow", "take", "run", "serve", "task",
                 "read", "work", "enable", "exist"),
    "Analyzing": ("analyze", "distinguish", "compare", "differentiate", "examine", "test", "question", "inspect",
                  "debate", "investigate", "manage", "optimize", "troubleshoot", "resolve"),
    "Evaluating": ("evaluate", "rate", "justify", "critique", "decide", "rank", "measure", "validate", "assess",
                   "choose", "verify", "monitor", "recommend"),
    "Creating": ("design", "construct", "produce", "invent", "devise", "formulate", "originate", "assemble",
                 "generate", "create", "develop", "compose", "build", "customize"),
}

QUESTION_WORDS = ("what", "which", "when", "where", "who", "why", "how")

_WORD = re.compile(r"[a-z]+")  # on lower-cased text; apostrophes and hyphens split words
_QUESTION_WORD = re.compile(r"\b(" + "|".join(QUESTION_WORDS) + r")\b", re.IGNORECASE)
_STEMMER = PorterStemmer()


def _stem(word: str) -> str:
    return _STEMMER.stem(word)


def _keywords_by_stem() -> dict[str, list[tuple[str, str]]]:
    """stem -> [(prefix a matching word must start with, level)]."""
    by_stem: dict[str, list[tuple[str, str]]] = {}
    for level, keywords in BLOOM_KEYWORDS.items():
        for keyword in keywords:
            prefix = keyword[:-1] if keyword[-1] in "ey" else keyword  # identify → identif(ied)
            by_stem.setdefault(_stem(keyword), []).append((prefix, level))
    return by_stem


_KEYWORDS_BY_STEM = _keywords_by_stem()


@lru_cache(maxsize=None)
def _word_levels(word: str) -> frozenset[str]:
    return frozenset(level for prefix, level in _KEYWORDS_BY_STEM.get(_stem(word), ()) if word.startswith(prefix))


def bloom_levels(text: str) -> frozenset[str]:
    """The Bloom levels with a keyword matching a whole word of ``text`` (see the module notes); may be empty."""
    levels: set[str] = set()
    for word in _WORD.findall(text.lower()):
        levels |= _word_levels(word)
    return frozenset(levels)


def question_word(text: str) -> str | None:
    """The earliest of what/which/when/where/who/why/how occurring as a whole word (lower case), else None."""
    match = _QUESTION_WORD.search(text)
    return match.group(1).lower() if match else None


def categorize(questions: Iterable[Question]) -> pd.DataFrame:
    """One row per question: question_id, query_id, text, bloom (sorted tuple of levels), question_word."""
    rows = [(q.question_id, q.query_id, q.text, tuple(sorted(bloom_levels(q.text))), question_word(q.text))
            for q in questions]
    return pd.DataFrame(rows, columns=["question_id", "query_id", "text", "bloom", "question_word"])
