"""vLLM's Logprob (vllm/logprobs.py; vllm/sequence.py in 0.6): one token's log-probability at one position."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Logprob:
    logprob: float
    rank: int | None = None  # the token's rank in the vocabulary at that position (>= 1)
    decoded_token: str | None = None  # None when the request has detokenize=False


PromptLogprobs = list[dict[int, Logprob] | None]  # None for the first prompt token
SampleLogprobs = list[dict[int, Logprob]]
