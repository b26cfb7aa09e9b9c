"""Offline nugget assignment: does an answer support a nugget? From sentence embeddings and
word overlap, no LLM (the ``embedding`` backend, all-MiniLM-L6-v2 by default).

A pair's passage is the answer, its question the nugget; the grade is the track's assignment,
0 not_support, 1 partial_support, 2 support (:data:`exampp.formats.nugget_assignments.ASSIGNMENTS`).

The answer is split into sentences by one rule: a break after ``.``, ``!`` or ``?`` followed by
white space, and at every line break (so "e.g. the" splits too; list items are sentences);
pieces that are empty after stripping are dropped, and an answer without any piece is its own
single sentence. The features of a (nugget, answer) pair, in the order of :data:`FEATURES`:

- ``best``, ``second``: the nugget's highest and second-highest cosine with an answer sentence
  (``second`` = ``best`` for a one-sentence answer);
- ``window``: the highest cosine with two adjacent sentences joined by a space;
- ``whole``: the cosine with the whole answer; ``mean``: the mean cosine over its sentences;
- ``overlap``: the share of the nugget's content words (lower-cased, punctuation, stopwords out,
  Porter-stemmed: :func:`exampp.grading.verify.normalize`) found in the answer;
  ``overlap_sentence``: the highest such share within one sentence;
- ``length``: log(1 + the nugget's content words).

Two methods grade from them. ``nugget-embedding``: the linear score ``weights · features`` of a
proportional-odds (ordinal logistic) model, cut into grades 0/1/2 by two ascending
``thresholds`` (grade = how many the score reaches), fitted on TREC 2024 RAG nugget assignments
by ``benchmarks/fit_nugget_assignment.py``. ``nugget-cosine``: the naive baseline, support when
``best`` reaches one threshold, else not_support. The parameters are part of the method id, so
refitted grades never mix with old ones in the store. Judgments keep the score (``best`` for the
baseline), rounded to 4 decimals, as their ``answer``; grades come from the unrounded values.
Every distinct text of a call (answers, sentences, windows, nuggets) is embedded once.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from exampp.grading.base import Judgment, Pair
from exampp.grading.calibration import apply_thresholds, check_thresholds
from exampp.grading.method import param, register
from exampp.grading.methods.embedding import EmbeddingMethod, parse_floats, show_floats
from exampp.grading.verify import normalize
from exampp.llm.backend import Backend

FEATURE_VERSION = "nugget-features@v1"  # the sentence rule and the features: bump when either changes
FEATURES = ("best", "second", "window", "whole", "mean", "overlap", "overlap_sentence", "length")

# Fitted on the TREC 2024 RAG assignments of 5 topics (2024-143869, 2024-213469, 2024-214096,
# 2024-29182, 2024-73340: the sorted topic ids at even positions) by
#   python benchmarks/fit_nugget_assignment.py
# weights: the ordinal logistic model's, one per feature of FEATURES; thresholds: the cuts of the
# score that maximise Cohen's κ of (grade >= g) vs (official grade >= g), g = 1, 2.
DEFAULT_WEIGHTS: tuple[float, ...] = (0.2342, -5.1643, 10.0219, 1.6195, -1.5239, 3.151, 0.6189, -1.3475)
DEFAULT_THRESHOLDS: tuple[float, ...] = (3.6614, 4.067)
# The baseline's: the cut of ``best`` that maximises κ of support against the rest, same topics.
DEFAULT_COSINE_THRESHOLD = 0.6711

_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n")

Embed = Callable[[list[str]], np.ndarray]
"""What embeds texts: unit-length rows, one per text (a backend's ``embed``)."""


def split_sentences(text: str) -> list[str]:
    """The answer's sentences by the module's rule (a break after . ! ? before white space, and
    at line breaks; empty pieces dropped; no piece: the text itself)."""
    return [part for part in (piece.strip() for piece in _SENTENCE_BREAK.split(text)) if part] or [text]


def _windows(sentences: list[str]) -> list[str]:
    return [f"{a} {b}" for a, b in zip(sentences, sentences[1:])] or sentences


def _embedded(embed: Embed, texts: list[str]) -> dict[str, np.ndarray]:
    """Each distinct text's embedding (float64), embedding each once in one call."""
    distinct = list(dict.fromkeys(texts))
    vectors = np.asarray(embed(distinct), dtype=np.float64) if distinct else np.zeros((0, 0))
    return dict(zip(distinct, vectors))


def best_cosines(pairs: Sequence[Pair], embed: Embed) -> np.ndarray:
    """Each pair's ``best`` feature: the nugget's highest cosine with a sentence of the answer."""
    if not pairs:
        return np.zeros(0)
    split = {p.passage: split_sentences(p.passage) for p in pairs}
    vectors = _embedded(embed, [s for sentences in split.values() for s in sentences]
                        + [p.question.text for p in pairs])
    return np.array([max(float(vectors[s] @ vectors[p.question.text]) for s in split[p.passage]) for p in pairs])


def features(pairs: Sequence[Pair], embed: Embed) -> np.ndarray:
    """(pairs, len(FEATURES)) float array: the features of each (nugget, answer) pair."""
    if not pairs:
        return np.zeros((0, len(FEATURES)))
    split = {p.passage: split_sentences(p.passage) for p in pairs}
    windows = {answer: _windows(sentences) for answer, sentences in split.items()}
    vectors = _embedded(embed, [*split, *(s for ss in split.values() for s in ss),
                                *(w for ws in windows.values() for w in ws), *(p.question.text for p in pairs)])
    words = _word_sets([*split, *(s for ss in split.values() for s in ss), *(p.question.text for p in pairs)])
    stacked = {answer: (np.stack([vectors[s] for s in sentences]), np.stack([vectors[w] for w in windows[answer]]))
               for answer, sentences in split.items()}
    rows = np.empty((len(pairs), len(FEATURES)))
    for i, pair in enumerate(pairs):
        nugget, answer = vectors[pair.question.text], pair.passage
        sentence_matrix, window_matrix = stacked[answer]
        cosines = np.sort(sentence_matrix @ nugget)[::-1]
        wanted = words[pair.question.text]
        rows[i] = (
            cosines[0], cosines[min(1, len(cosines) - 1)], float(np.max(window_matrix @ nugget)),
            float(vectors[answer] @ nugget), float(np.mean(cosines)),
            _share(wanted, words[answer]), max(_share(wanted, words[s]) for s in split[answer]),
            math.log1p(len(wanted)),
        )
    return rows


def _word_sets(texts: list[str]) -> dict[str, frozenset[str]]:
    return {text: frozenset(normalize(text).split()) for text in dict.fromkeys(texts)}


def _share(wanted: frozenset[str], found: frozenset[str]) -> float:
    """The share of ``wanted`` in ``found``; 0 for a nugget without content words."""
    return len(wanted & found) / len(wanted) if wanted else 0.0


def _check_weights(values: Sequence[float]) -> tuple[float, ...]:
    weights = tuple(float(w) for w in values)
    if len(weights) != len(FEATURES):
        raise ValueError(f"need {len(FEATURES)} weights ({', '.join(FEATURES)}), got {len(weights)}")
    if not all(math.isfinite(w) for w in weights):
        raise ValueError(f"weights must be finite numbers: {weights}")
    return weights


@register
@dataclass(frozen=True)
class NuggetEmbedding(EmbeddingMethod):
    """Grade = how many of the two ``thresholds`` the score ``weights · features`` reaches."""

    weights: tuple[float, ...] = field(default=DEFAULT_WEIGHTS, metadata=param(
        f"weights of the features {'/'.join(FEATURES)}, separated by /", parse=parse_floats,
        show=show_floats))
    thresholds: tuple[float, ...] = field(default=DEFAULT_THRESHOLDS, metadata=param(
        "ascending score cuts for partial_support and support, separated by /", parse=parse_floats,
        show=show_floats))

    name = "nugget-embedding"
    description = "nugget support 0-2 from sentence embeddings and word overlap (offline, no LLM)"
    top_grade = 2
    tau = 2.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", _check_weights(self.weights))
        object.__setattr__(self, "thresholds", self.checked_thresholds(self.thresholds, "partial_support, support"))

    @property
    def prompt_id(self) -> str:
        return f"{FEATURE_VERSION}:{show_floats(self.weights)}:{show_floats(self.thresholds)}"

    def scores(self, backend: Backend, pairs: Sequence[Pair]) -> np.ndarray:
        """Each pair's score ``weights · features``."""
        return features(pairs, backend.embed) @ np.asarray(self.weights)

    def grade(self, backend: Backend | None, pairs: Sequence[Pair]) -> list[Judgment]:
        assert backend is not None  # a method with a model is bound to one (BoundGrader)
        values = self.scores(backend, pairs)
        grades = apply_thresholds(values, self.thresholds)
        return [Judgment(float(g), answer=f"{v:.4f}") for g, v in zip(grades, values)]


@register
@dataclass(frozen=True)
class NuggetCosine(EmbeddingMethod):
    """The naive baseline: support (2) when the nugget's best sentence cosine reaches ``threshold``,
    else not_support (0)."""

    threshold: float = field(default=DEFAULT_COSINE_THRESHOLD, metadata=param(
        "cosine from which a nugget counts as supported", parse=float, show=repr))

    name = "nugget-cosine"
    description = "nugget supported when its best sentence cosine passes a threshold (offline baseline)"
    top_grade = 2
    tau = 2.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "threshold", check_thresholds([self.threshold])[0])

    @property
    def prompt_id(self) -> str:
        return f"nugget-cosine@v1:{self.threshold!r}"

    def grade(self, backend: Backend | None, pairs: Sequence[Pair]) -> list[Judgment]:
        assert backend is not None  # a method with a model is bound to one (BoundGrader)
        values = best_cosines(pairs, backend.embed)
        return [Judgment(2.0 if v >= self.threshold else 0.0, answer=f"{v:.4f}") for v in values]
