"""Exam leakage: a question (or nugget) of the text's own query copied into the text.

A text that holds the exam's questions word for word is graded as answering them by a judge
that reads question and text side by side, whatever else it says; once a bank is published or
reused it can be copied. The measure is containment: the share of a question's word 3-grams
(words of the normalised copy, :func:`exampp.audit.normalise.fold`, stopwords kept: a copy keeps
them) that occur in the text. Honest passages quote the query, and sometimes a question's
phrasing ("what is a hormone"), but rarely a whole generated question; the threshold is set
above what the officially relevant DL19 passages reach (:mod:`exampp.audit.detect`). Nuggets are
another matter: drawn from answers, one of them is often found word for word in an honest answer,
so that for a nugget exam a text is flagged only when it holds several. A question of fewer words
than ``min_words`` is left out: a short nugget ("Dan Brown") is contained in every honest answer
that names it.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from exampp.audit.normalise import Folded, fold

N = 3  # words per n-gram
_WORD = re.compile(r"[^\W_]+")


def words(text: str | Folded) -> list[str]:
    """The words of ``text``'s normalised copy (or of the copy given)."""
    return _WORD.findall((text if isinstance(text, Folded) else fold(text)).text)


def ngrams(text_words: Sequence[str], n: int = N) -> set[tuple[str, ...]]:
    return {tuple(text_words[i:i + n]) for i in range(len(text_words) - n + 1)}


def containment(question_words: Sequence[str], text_grams: set[tuple[str, ...]]) -> float:
    """The share of the question's distinct n-grams found among ``text_grams`` (0 for a question
    shorter than one n-gram)."""
    grams = ngrams(question_words)
    return len(grams & text_grams) / len(grams) if grams else 0.0


def containments(text_words: Sequence[str], questions: Mapping[str, Sequence[str]], min_words: int) -> dict[str, float]:
    """Each question's containment in the text, for the questions (id -> words) that have at
    least ``min_words`` words."""
    text_grams = ngrams(text_words)
    return {question_id: containment(question_words, text_grams)
            for question_id, question_words in questions.items() if len(question_words) >= min_words}
