"""The tiny random-weight models of :mod:`exampp.testing.tiny_models` as session fixtures, with the real T5
tokenizer beside the project: ``tiny_t5_dir`` / ``tiny_causal_dir`` (skipped without the tokenizer),
available to every test through ``pytest_plugins`` in conftest.py, and :func:`t5_tokenizer_dir`.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import shared_path
from exampp.testing.tiny_models import build_causal, build_t5


def t5_tokenizer_dir() -> Path:
    """The real T5 tokenizer beside the project (skips the test when absent)."""
    return shared_path("models", "t5-tokenizer")


@pytest.fixture(scope="session")
def tiny_t5_dir(tmp_path_factory) -> Path:
    """A saved tiny FLAN-T5-shaped model (d_model 64, 1+1 layers) with the real T5 tokenizer."""
    return build_t5(tmp_path_factory.mktemp("tiny-t5"), t5_tokenizer_dir())


@pytest.fixture(scope="session")
def tiny_causal_dir(tmp_path_factory) -> Path:
    """A saved tiny GPT-2-config causal LM (hidden 64, 1 layer) with the real T5 tokenizer."""
    return build_causal(tmp_path_factory.mktemp("tiny-causal"), t5_tokenizer_dir())
