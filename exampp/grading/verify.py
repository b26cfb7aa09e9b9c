"""Verifying an extracted answer against an answer key by normalised string matching (DESIGN.md §2).

Both answers are normalised — lower-cased, punctuation deleted (dashes and slashes become spaces),
English stopwords removed, every word Porter-stemmed — and they match when the Levenshtein
distance of the normalised strings is *below* 20% of the longer one (exactly 20% is not a match).
Extracted answers that are ill-formed (empty, nothing but punctuation and stopwords, a list
marker such as "a." or "(iii)") or that express unanswerability ("unanswerable", "no answer",
...: :data:`exampp.grading.rating_parsing.UNANSWERABLE`) are wrong.

String matching cannot see synonyms: gold "rise" vs "increase" is wrong, while "rising"
matches after stemming. The LLM verifier of ``qa(verify=llm)`` (:mod:`exampp.grading.methods.qa`) covers the synonyms.
"""
from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable
from functools import cache

from exampp.grading.rating_parsing import is_unanswerable

__all__ = ["STOPWORDS", "edit_distance", "is_correct", "is_ill_formed", "matches", "normalize"]

# The standard English stopword list (NLTK's 179 words), shipped here because NLTK's corpus
# needs a download that is impossible offline. Apostrophes are deleted like all punctuation
# before the lookup, hence the second spelling of each contraction below.
_STOPWORD_TEXT = """
i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves
he him his himself she she's her hers herself it it's its itself they them their theirs themselves
what which who whom this that that'll these those am is are was were be been being have has had
having do does did doing a an the and but if or because as until while of at by for with about
against between into through during before after above below to from up down in out on off over
under again further then once here there when where why how all any both each few more most other
some such no nor not only own same so than too very s t can will just don don't should should've
now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn
hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn
shouldn't wasn wasn't weren weren't won won't wouldn wouldn't
"""
STOPWORDS: frozenset[str] = frozenset(
    spelling for word in _STOPWORD_TEXT.split() for spelling in (word, word.replace("'", ""))
)

# A match needs distance < longer length / _MAX_DISTANCE_DIVISOR, i.e. below 20%.
_MAX_DISTANCE_DIVISOR = 5

# List markers that models emit instead of an answer: one letter or a roman numeral made of
# i/v/x, optionally bracketed and followed by "." or ":"; or a number in brackets ("(3)", "3)").
# A bare number ("20") is a legitimate answer and is not a marker.
_MARKER = re.compile(
    r"[(\[]?(?:[a-z]|(?=[ivx])x{0,3}(?:ix|iv|v?i{0,3}))[)\]]?[.:]?"
    r"|[(\[]\d+[)\]][.:]?|\d+[)\]][.:]?"
)


def _clean_char(char: str) -> str:
    """Dashes and slashes separate words ("Eiffel-Tower"); other punctuation goes ("U.S.", "don't")."""
    if char.isspace() or char == "/" or unicodedata.category(char) == "Pd":
        return " "
    if char in string.punctuation or unicodedata.category(char).startswith("P"):
        return ""
    return char


@cache
def _stemmer():
    # nltk's Porter stemmer needs no data download; importing nltk takes about a second,
    # so it happens on first use only.
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


def normalize(text: str) -> str:
    """Lower-case, delete punctuation (dashes and slashes part words), drop stopwords, stem;
    words joined by single spaces."""
    cleaned = "".join(_clean_char(char) for char in text.lower())
    stem = _stemmer().stem
    return " ".join(stem(word) for word in cleaned.split() if word not in STOPWORDS)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (unit-cost insertions, deletions, substitutions) between two strings."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i]
        for j, char_b in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
        previous = current
    return previous[-1]


def is_ill_formed(answer: str) -> bool:
    """True for answers that cannot be an answer: list markers, or nothing left after normalising."""
    return _MARKER.fullmatch(answer.strip().lower()) is not None or not normalize(answer)


def _close(a: str, b: str) -> bool:
    longer = max(len(a), len(b))
    # Integer arithmetic keeps the 20% boundary exact; the length gap bounds the distance from below.
    if _MAX_DISTANCE_DIVISOR * abs(len(a) - len(b)) >= longer:
        return False
    return _MAX_DISTANCE_DIVISOR * edit_distance(a, b) < longer


def matches(extracted: str, gold: str) -> bool:
    """Whether the extracted answer matches one gold answer (see the module docstring)."""
    if is_unanswerable(extracted) or is_ill_formed(extracted):
        return False
    normalized_gold = normalize(gold)
    return bool(normalized_gold) and _close(normalize(extracted), normalized_gold)


def is_correct(extracted: str, answers: Iterable[str]) -> bool:
    """Whether the extracted answer matches any of the gold answers."""
    return any(matches(extracted, gold) for gold in answers)
