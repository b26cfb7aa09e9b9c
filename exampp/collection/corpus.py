"""Passages as data, and what a passage source answers: ``get_many(docids)`` (ids it does not hold are
simply absent from the result) and iteration over its passages, like an ir_datasets docstore.

The sources themselves (passage files, ir_datasets docstores, pyserini indexes) are
:mod:`exampp.formats.corpus_sources`.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import NamedTuple, Protocol


class Passage(NamedTuple):
    """One passage of a corpus.

    :ivar docid: The passage's id (its document id in the run files).
    :ivar text: Its text.
    """

    docid: str
    text: str


class Corpus(Protocol):
    def get_many(self, docids: Iterable[str]) -> dict[str, str]: ...

    def __iter__(self) -> Iterator[Passage]: ...


class MemoryCorpus:
    """Passages held in a dict (e.g. segments of generated responses)."""

    def __init__(self, texts: Mapping[str, str]):
        self._texts = dict(texts)

    @property
    def texts(self) -> Mapping[str, str]:
        return self._texts

    def get_many(self, docids: Iterable[str]) -> dict[str, str]:
        texts = self.texts
        return {d: texts[d] for d in docids if d in texts}

    def __iter__(self) -> Iterator[Passage]:
        return (Passage(d, t) for d, t in self.texts.items())

    def __len__(self) -> int:
        return len(self.texts)
