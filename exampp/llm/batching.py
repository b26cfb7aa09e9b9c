"""Batches for inference: sorted by length (little padding), sized by a token budget, halved on out-of-memory.

:class:`Batcher` runs a batch function over items in length-sorted batches and returns the
results in input order. A batch holds at most ``batch_size`` items and, where a token budget is
set, at most ``max_tokens`` tokens once padded to its longest item: short prompts go in larger
batches, long ones in smaller. Both limits only shrink: once a batch ran out of memory, later
batches (and later calls) start at half.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import torch

T = TypeVar("T")
R = TypeVar("R")

CPU_BATCH_SIZE = 16  # CPU throughput barely grows beyond this; larger batches only cost memory
CPU_BATCH_TOKENS = 4096  # the token budget on CPU: 16 prompts of 256 tokens, more of shorter ones
CPU_MAX_BATCH = 64  # prompts per batch on CPU at most, however short
MAX_AUTO_BATCH_SIZE = 512
_MEMORY_SHARE = 0.6  # of the free device memory that the automatic size plans to use


def length_order(lengths: Sequence[int]) -> list[int]:
    """Indices by decreasing length (stable): neighbours pad little, and the largest batch runs first,
    so an out-of-memory error shows up at once rather than at the end."""
    return sorted(range(len(lengths)), key=lambda i: -lengths[i])


def auto_batch_size(device: torch.device, config, max_tokens: int, *, beams: int = 1, dtype_bytes: int = 2) -> int:
    """A batch size from the free memory of a CUDA device; :data:`CPU_BATCH_SIZE` elsewhere.

    The estimate per sequence of ``max_tokens`` tokens is the larger per-layer working set
    (attention scores, feed-forward activations, hidden states) plus the key/value caches of all
    layers, times ``beams``. It is rough on purpose: an overshoot is caught by the halving in
    :meth:`Batcher.map`.
    """
    if device.type != "cuda":
        return CPU_BATCH_SIZE
    free, _total = torch.cuda.mem_get_info(device)
    d_model = _config_int(config, "d_model", "hidden_size", "n_embd", default=1024)
    d_ff = _config_int(config, "d_ff", "intermediate_size", "n_inner", default=4 * d_model)
    heads = _config_int(config, "num_heads", "num_attention_heads", "n_head", default=16)
    layers = _config_int(config, "num_layers", "num_hidden_layers", "n_layer", default=24)
    layers += _config_int(config, "num_decoder_layers", default=0)
    working = max_tokens * (heads * max_tokens + 2 * d_ff + 8 * d_model)
    caches = layers * 4 * d_model * max_tokens  # keys and values, self- and cross-attention
    per_sequence = (working + caches) * dtype_bytes * beams
    return max(1, min(MAX_AUTO_BATCH_SIZE, int(free * _MEMORY_SHARE // per_sequence)))


def auto_batch_limits(device: torch.device, config, max_tokens: int, *, dtype_bytes: int = 2) -> tuple[int, int]:
    """(prompts per batch at most, padded tokens per batch at most) for prompts of up to
    ``max_tokens`` tokens: on CUDA the budget is what :func:`auto_batch_size` plans for prompts of
    ``max_tokens``, spent on as many shorter ones as it holds (up to :data:`MAX_AUTO_BATCH_SIZE`;
    the attention scores, quadratic in length, only shrink); on CPU :data:`CPU_BATCH_TOKENS`."""
    if device.type != "cuda":
        return CPU_MAX_BATCH, CPU_BATCH_TOKENS
    return MAX_AUTO_BATCH_SIZE, auto_batch_size(device, config, max_tokens, dtype_bytes=dtype_bytes) * max_tokens


def _config_int(config, *names: str, default: int) -> int:
    for name in names:
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return default


def token_budget_size(longest: int, batch_size: int, max_tokens: int | None) -> int:
    """Items in a batch whose longest item has ``longest`` tokens: ``batch_size``, fewer where the
    batch padded to that length would exceed ``max_tokens`` (None: no budget); at least 1."""
    if max_tokens is None:
        return batch_size
    return max(1, min(batch_size, max_tokens // max(longest, 1)))


class Batcher:
    """Runs a batch function over items in length-sorted batches of at most ``batch_size`` items and
    ``max_tokens`` padded tokens (None: no token budget)."""

    def __init__(self, batch_size: int, max_tokens: int | None = None) -> None:
        if batch_size < 1:
            raise ValueError(f"batch size must be at least 1, got {batch_size}")
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"token budget must be at least 1, got {max_tokens}")
        self.batch_size = batch_size
        self.max_tokens = max_tokens

    def map(self, fn: Callable[[list[T]], Sequence[R]], items: Sequence[T], lengths: Sequence[int]) -> list[R]:
        """``fn`` applied to batches of ``items`` (longest first); one result per item, in input order.

        A CUDA out-of-memory error halves the batch size (and the token budget) and retries from the
        same item; raised when the batch was a single item.
        """
        if len(lengths) != len(items):
            raise ValueError("one length per item is needed")
        order = length_order(lengths)
        results: list[R | None] = [None] * len(items)
        start = 0
        while start < len(order):
            size = token_budget_size(lengths[order[start]], self.batch_size, self.max_tokens)
            indices = order[start:start + size]
            try:
                outputs = fn([items[i] for i in indices])
            except torch.cuda.OutOfMemoryError:
                if len(indices) == 1:
                    raise
                outputs = None
            if outputs is None:
                # Outside the except block, so the failed batch's tensors are already released.
                self.batch_size = max(1, self.batch_size // 2)
                if self.max_tokens is not None:
                    self.max_tokens = max(1, self.max_tokens // 2)
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                continue
            if len(outputs) != len(indices):
                raise RuntimeError(f"batch function returned {len(outputs)} results for {len(indices)} items")
            for i, output in zip(indices, outputs):
                results[i] = output
            start += len(indices)
        return results  # type: ignore[return-value]  # every slot is filled above
