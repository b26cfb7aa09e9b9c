"""Graders by name: the one place that maps a ``--grader`` name to the grader it builds.

Grader modules (and torch, transformers, sentence-transformers behind them) are imported only
when their grader is built. Adding a grader means adding one factory to :data:`FACTORIES`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from exampp.errors import ModelLoadError
from exampp.grades import DIRECT_PREFIX, RATING_METHODS
from exampp.grading.base import Grader

DEFAULT_MODEL = "google/flan-t5-large"
DEFAULT_EXTRACTIVE_MODEL = "sjrhuschlee/flan-t5-large-squad2"


@dataclass(frozen=True)
class GraderOptions:
    """How to load the grader's model; ``model`` None means the grader's default."""

    model: str | None = None
    device: str = "auto"
    dtype: str | None = None
    batch_size: int | None = None


Factory = Callable[[str, GraderOptions], Grader]  # (grader name, options) -> grader


def _llm(options: GraderOptions):
    from exampp.llm.hf import HFModel

    return HFModel.load(options.model or DEFAULT_MODEL, device=options.device, dtype=options.dtype or "auto",
                        batch_size=options.batch_size)


def _self_rating(name: str, options: GraderOptions) -> Grader:
    from exampp.grading.self_rating import SelfRatingGrader

    return SelfRatingGrader(_llm(options))


def _qa(name: str, options: GraderOptions) -> Grader:
    from exampp.grading.qa import QAGrader

    return QAGrader(_llm(options), verifier="llm" if name == "qa-llm" else "string")


def _qa_extractive(name: str, options: GraderOptions) -> Grader:
    from exampp.grading.qa import ExtractiveQAGrader

    return ExtractiveQAGrader(options.model or DEFAULT_EXTRACTIVE_MODEL, device=options.device,
                              dtype=options.dtype or "auto", batch_size=options.batch_size)


def _multiple_choice(name: str, options: GraderOptions) -> Grader:
    from exampp.grading.multiple_choice import MultipleChoiceGrader

    return MultipleChoiceGrader(_llm(options))


def _embedding(name: str, options: GraderOptions) -> Grader:
    from exampp.grading.embedding import DEFAULT_BATCH_SIZE, EmbeddingGrader

    # Offline and on the CPU unless a device is named.
    device = "cpu" if options.device == "auto" else options.device
    return EmbeddingGrader(options.model, device=device, batch_size=options.batch_size or DEFAULT_BATCH_SIZE)


def _direct(name: str, options: GraderOptions) -> Grader:
    from exampp.grading.direct import DirectGrader

    return DirectGrader(_llm(options), name[len(DIRECT_PREFIX):])


FACTORIES: dict[str, Factory] = {
    "self-rating": _self_rating,
    "qa": _qa,
    "qa-llm": _qa,
    "qa-extractive": _qa_extractive,
    "multiple-choice": _multiple_choice,
    "embedding": _embedding,
}

def direct_keys() -> list[str]:
    from exampp.grading.prompts import DIRECT_PROMPTS

    return list(DIRECT_PROMPTS)


def grader_names() -> list[str]:
    """Every name :func:`make_grader` accepts."""
    return list(FACTORIES) + [DIRECT_PREFIX + key for key in direct_keys()]


def default_tau(method: str) -> float:
    """The threshold at which a grade counts as answered, for a grader name or a store method id:
    ratings 0-5 from 4, correctness 0/1 from 1."""
    from exampp.grades import Method

    name = Method.parse(method).name if "|" in method else method
    return 4.0 if name in RATING_METHODS else 1.0


def make_grader(name: str, options: GraderOptions | None = None) -> Grader:
    """Build the grader called ``name`` (see :func:`grader_names`); ValueError for unknown names.

    A model that cannot be loaded raises an error for which :func:`is_model_load_error` holds
    (for the embedding grader, on first use); a missing package raises ImportError.
    """
    options = options or GraderOptions()
    if name in FACTORIES:
        return FACTORIES[name](name, options)
    if name.startswith(DIRECT_PREFIX) and name[len(DIRECT_PREFIX):] in direct_keys():
        return _direct(name, options)
    raise ValueError(f"unknown grader {name!r}; choose one of {', '.join(grader_names())}")


def is_model_load_error(error: BaseException) -> bool:
    """True for the errors graders raise when their model cannot be loaded (their message says what to do)."""
    return isinstance(error, ModelLoadError)
