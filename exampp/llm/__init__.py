"""LLM inference for grading: model loading and batched inference (HuggingFace seq2seq and causal LMs)."""
from exampp.llm.batching import Batcher
from exampp.llm.hf import DEFAULT_MODEL, HFModel, ModelLoadError

__all__ = ["DEFAULT_MODEL", "Batcher", "HFModel", "ModelLoadError"]
