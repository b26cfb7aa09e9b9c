"""vLLM's SamplingParams (vllm/sampling_params.py): the fields the backend sets, with vLLM's defaults."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SamplingParams:
    n: int = 1
    temperature: float = 1.0  # 0: greedy
    top_p: float = 1.0
    top_k: int = 0  # 0 (or -1): all tokens
    seed: int | None = None
    max_tokens: int | None = 16
    logprobs: int | None = None  # top alternatives per generated token (and the token generated)
    prompt_logprobs: int | None = None  # top alternatives per prompt token (and the prompt token)
    detokenize: bool = True
    skip_special_tokens: bool = True

    def __post_init__(self) -> None:
        if self.temperature < 0:
            raise ValueError(f"temperature must be non-negative, got {self.temperature}.")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}.")
        for name in ("logprobs", "prompt_logprobs"):
            value = getattr(self, name)
            if value is not None and value < -1:
                raise ValueError(f"{name} must be non-negative or -1, got {value}.")
