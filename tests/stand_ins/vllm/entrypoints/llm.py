"""vLLM's offline engine ``LLM`` (vllm/entrypoints/llm.py), computed by a HuggingFace causal LM on the CPU."""
from __future__ import annotations

import itertools
from typing import Any, ClassVar

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from exampp.llm.fused import speed_up
from vllm.logprobs import Logprob
from vllm.outputs import CompletionOutput, RequestOutput
from vllm.sampling_params import SamplingParams


class LLM:
    opened: ClassVar[list["LLM"]] = []  # every engine built (the stand-in's record, not vLLM's)

    def __init__(self, model: str, *, tokenizer: str | None = None, dtype: str = "auto", seed: int | None = None,
                 gpu_memory_utilization: float = 0.9, tensor_parallel_size: int = 1, max_model_len: int | None = None,
                 enable_prefix_caching: bool | None = None, max_logprobs: int = 20, **kwargs: Any) -> None:
        self.options = {"model": model, "tokenizer": tokenizer, "dtype": dtype, "seed": seed,
                        "gpu_memory_utilization": gpu_memory_utilization, "tensor_parallel_size": tensor_parallel_size,
                        "max_model_len": max_model_len, "enable_prefix_caching": enable_prefix_caching,
                        "max_logprobs": max_logprobs, **kwargs}
        self.tokenizer = AutoTokenizer.from_pretrained(tokenizer or model)
        self.model = AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32).eval()
        # The hf backend's speed-ups (fused GELU), so that both compute alike and their figures compare
        # exactly: vLLM's own kernels are its business; what is tested is how the backend talks to it.
        speed_up(self.model)
        config = self.model.config
        self.max_model_len = max_model_len or config.max_position_embeddings
        self.max_logprobs = max_logprobs
        eos = self.model.generation_config.eos_token_id
        self.eos = set(eos if isinstance(eos, list) else [eos])
        self.random = torch.Generator().manual_seed(seed or 0)
        self.counter = itertools.count()
        self.calls: list[tuple[list[list[int]], SamplingParams]] = []
        LLM.opened.append(self)

    def get_tokenizer(self):
        return self.tokenizer

    def generate(self, prompts, sampling_params: SamplingParams | None = None, *, use_tqdm: bool = True
                 ) -> list[RequestOutput]:
        params = sampling_params or SamplingParams()
        if isinstance(prompts, (str, dict)):
            prompts = [prompts]
        for name in ("logprobs", "prompt_logprobs"):
            value = getattr(params, name)
            if value is not None and value > self.max_logprobs:
                raise ValueError(f"Requested {name} of {value}, which is greater than max allowed: {self.max_logprobs}")
        ids = [p["prompt_token_ids"] if isinstance(p, dict) else self.tokenizer(p)["input_ids"] for p in prompts]
        for row in ids:
            if len(row) > self.max_model_len:
                raise ValueError(f"The decoder prompt (length {len(row)}) is longer than the maximum model length "
                                 f"of {self.max_model_len}.")
        self.calls.append(([list(row) for row in ids], params))
        return [self._request(prompt, row, params) for prompt, row in zip(prompts, ids)]

    @torch.inference_mode()
    def _request(self, prompt, ids: list[int], params: SamplingParams) -> RequestOutput:
        logits = self.model(input_ids=torch.tensor([ids])).logits[0].float()
        prompt_logprobs = None
        if params.prompt_logprobs is not None:
            rows = torch.log_softmax(logits[:-1], dim=-1)
            prompt_logprobs = [None] + [self._position(rows[t], ids[t + 1], params.prompt_logprobs, params)
                                        for t in range(len(ids) - 1)]
        generated: list[int] = []
        sample_logprobs = [] if params.logprobs is not None else None
        cumulative, finish = 0.0, "length"
        last = logits[-1]
        for _ in range(min(params.max_tokens or self.max_model_len, self.max_model_len - len(ids))):
            logprobs = torch.log_softmax(last, dim=-1)
            if params.temperature == 0:
                token = int(logprobs.argmax())
            else:
                token = int(torch.multinomial(torch.softmax(last / params.temperature, dim=-1), 1,
                                              generator=self.random))
            generated.append(token)
            cumulative += float(logprobs[token])
            if sample_logprobs is not None:
                sample_logprobs.append(self._position(logprobs, token, params.logprobs, params))
            if token in self.eos:
                finish = "stop"
                break
            last = self.model(input_ids=torch.tensor([ids + generated])).logits[0, -1].float()
        text = self.tokenizer.decode(generated, skip_special_tokens=params.skip_special_tokens) \
            if params.detokenize else ""
        completion = CompletionOutput(0, text, generated, cumulative if sample_logprobs is not None else None,
                                      sample_logprobs, finish)
        return RequestOutput(str(next(self.counter)), prompt if isinstance(prompt, str) else None, list(ids),
                             prompt_logprobs, [completion], True)

    def _position(self, logprobs: torch.Tensor, chosen: int, k: int, params: SamplingParams) -> dict[int, Logprob]:
        """The chosen token first, then the k most likely ones (-1: all), each with its rank, as vLLM reports them."""
        k = len(logprobs) if k == -1 else k
        top = torch.topk(logprobs, k) if k else None
        entries = [(chosen, float(logprobs[chosen]))]
        if top is not None:
            entries += list(zip(top.indices.tolist(), top.values.tolist()))
        position = {}
        for token, value in entries:
            if token not in position:
                rank = int((logprobs > value).sum()) + 1
                text = self.tokenizer.decode([token]) if params.detokenize else None
                position[token] = Logprob(value, rank, text)
        return position
