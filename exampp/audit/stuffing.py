"""Query and keyword stuffing: the query's words, or one word, far more often than text has them.

Term density is the share of a text's words that are query terms (the query's content words:
lower-cased, stopwords out, Porter-stemmed, :func:`exampp.grading.verify.normalize`, compared
with the words of the text's normalised copy, :func:`exampp.audit.leakage.words`, stemmed the
same way); repetition is the share of the text's words taken by its most frequent content word.
Both are compared with their 99.9th percentile over the DL19
pool, times a margin (:mod:`exampp.audit.detect`). Stuffing can also be a block of query words in
an otherwise honest passage ("tuition cost tuition cost tuition cost"), which raises the density
of a long passage little: the third measure is the longest run of query terms (stopwords in it
skipped) in query lengths, how many times the query is said in a row. A short text reaches any
share with a few words (a three-word title made of the query is 100% query terms), so a share
counts only from a minimum number of occurrences, and a run from a minimum length: stuffing is
many repetitions, not a short text.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from exampp.grading.verify import normalize

# A word's stem, "" for a stopword: words repeat, the stemmer is slow.
_stem = lru_cache(maxsize=1 << 16)(normalize)


@dataclass(frozen=True)
class Density:
    words: int  # all words of the text, stopwords included
    hits: int  # occurrences of query terms
    top_term: str  # the most frequent content word (stemmed), "" when there is none
    top_count: int
    run: int  # the longest run of query-term words (stopwords inside it skipped)
    query_terms: int  # the query's distinct content words

    @property
    def density(self) -> float:
        return self.hits / self.words if self.words else 0.0

    @property
    def repetition(self) -> float:
        return self.top_count / self.words if self.words else 0.0

    @property
    def repeats(self) -> float:
        """The longest run of query terms in query lengths: how many times the query is said in a row."""
        return self.run / self.query_terms if self.query_terms else 0.0


def term_density(text_words: Sequence[str], query: str) -> Density:
    """The query-term and top-term counts of a text's words (:func:`exampp.audit.leakage.words`)."""
    query_terms = set(normalize(query).split())
    stems = [_stem(word) for word in text_words]
    counts = Counter(stem for stem in stems if stem)
    top_term, top_count = min(counts.items(), key=lambda item: (-item[1], item[0])) if counts else ("", 0)
    run = longest = 0
    for stem in stems:
        if stem in query_terms:
            run += 1
            longest = max(longest, run)
        elif stem:  # a content word that is no query term ends a run; a stopword does not
            run = 0
    return Density(len(text_words), sum(counts[term] for term in query_terms), top_term, top_count, longest,
                   len(query_terms))
