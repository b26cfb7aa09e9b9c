"""Judges on your own GPUs with vLLM's offline engine (``--backend vllm``; the ``vllm`` extra).

:class:`VLLMBackend` runs a decoder-only (causal) LM, Llama- or Qwen-class, in one ``vllm.LLM``
opened with prefix caching, so that the prompt header many prompts share (the instructions, a
passage graded against several questions) is computed once. Encoder-decoder models are refused:
FLAN-T5 stays on ``--backend hf``. The model reads its prompts as the ``hf`` backend makes them
(:class:`~exampp.llm.tokenized.TokenizedBackend`: the same chat format, counting, cutting and token
ids, handed to the engine as token ids), so a model is the same judge on both backends and its
grades agree.

- ``generate``: greedy (temperature 0) or sampled; the generated ids are decoded here as the ``hf``
  backend decodes them (skipping special tokens), not by vLLM's incremental detokenizer.
- ``label-logprobs``: a first pass asks every prompt for one greedy token with its
  :data:`~exampp.defaults.TOP_LOGPROBS` most likely alternatives (``SamplingParams(logprobs=...)``;
  vLLM reports raw log-probabilities, before any sampling processors); a second pass generates text
  only for the prompts whose most likely token is no label. Generating every prompt in one pass
  would give the text at once, but a grader's first token is a grade for nearly every prompt:
  one decoding step instead of up to ``max_new_tokens``, and the second pass finds the prompts of
  the first in the prefix cache, so it does not compute them again.
- ``continuation-loglik``: the prompt and the continuation go in as one prompt asking for
  ``prompt_logprobs``; the continuation's positions are summed (the first prompt position has none).

Prompts are submitted sorted by their token ids, so that those sharing a header go in together
(the engine batches them anyway; results come back in input order). :attr:`usage` counts one
request per prompt, its prompt tokens and the tokens generated.

vllm is imported when the backend is opened, so that without the extra ``--backend vllm`` says
which extra to install. API followed: vLLM's ``LLM(...)``, ``LLM.generate`` (0.9's
vllm/entrypoints/llm.py), ``SamplingParams`` (vllm/sampling_params.py), ``RequestOutput``,
``CompletionOutput`` (vllm/outputs.py) and ``Logprob`` (vllm/logprobs.py; vllm/sequence.py in 0.6)
as read on the main branch of 2026; every name used here is there unchanged since vLLM 0.6.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from exampp.defaults import TOP_LOGPROBS
from exampp.errors import ModelLoadError
from exampp.llm.backend import BackendError, Capability, Labels, NextToken, Usage
from exampp.llm.fitting import CAUSAL_OUTPUT_ROOM, input_mark, max_input_tokens
from exampp.llm.locate import locate_model
from exampp.llm.prompt import Conversation
from exampp.llm.tokenized import TokenizedBackend

# hf's dtype names, as vLLM spells them ("auto": vLLM's choice, the checkpoint's dtype, float16 for float32)
DTYPES = {"auto": "auto", "float32": "float32", "fp32": "float32", "bfloat16": "bfloat16", "bf16": "bfloat16",
          "float16": "float16", "fp16": "float16"}


class VLLMBackend(TokenizedBackend):
    """A causal LM in vLLM's offline engine. Build it with :meth:`open`."""

    capabilities = frozenset({Capability.GENERATE, Capability.LABEL_LOGPROBS, Capability.CONTINUATION})

    def __init__(self, name: str, engine, sampling_params: type, tokenizer, *, chat: bool | None,
                 max_input_tokens: int, marks: str = "") -> None:
        self.engine = engine
        self._sampling_params = sampling_params  # vllm.SamplingParams
        self.usage = Usage(unit="prompts")  # a local model: no request is made
        self.read_prompts(name, tokenizer, encoder_decoder=False, chat=chat, max_input_tokens=max_input_tokens,
                          marks=marks)

    @classmethod
    def open(cls, model: str | None = None, *, dtype: str = "auto", chat: bool | None = None,
             gpu_memory_utilization: float = 0.9, tensor_parallel_size: int = 1, max_model_len: int | None = None,
             seed: int = 0) -> "VLLMBackend":
        """Open the engine for ``model`` (a hub id or a local folder of a causal LM) with prefix caching.

        ``dtype``: auto (vLLM's choice) or float32/bfloat16/float16 (fp32/bf16/fp16). ``chat``: None for the
        chat template when the tokenizer has one. ``gpu_memory_utilization``: the share of each GPU's memory
        vLLM takes for weights and KV cache; ``tensor_parallel_size``: GPUs to split the model over;
        ``max_model_len``: the context length (prompt and output) the engine plans for [default: the
        model's], prompts are cut to fit it (shorter than the model's input: the judge's identity says
        so, ``+max_input_tokens=N``); ``seed``: the engine's seed (sampled generation).
        """
        if not model:
            raise BackendError("the vllm backend needs --model: a causal LM's hub id or folder "
                               "(FLAN-T5 and other encoder-decoder models stay on --backend hf)")
        if dtype not in DTYPES:
            raise ModelLoadError(f"unknown dtype {dtype!r}: use one of {', '.join(DTYPES)}")
        import vllm  # the extra: an ImportError here says to install it
        from transformers import AutoConfig, AutoTokenizer

        source = locate_model(model)
        with source.loading():
            config = AutoConfig.from_pretrained(source.name_or_path, **source.options)
        if config.is_encoder_decoder:
            raise ModelLoadError(f"model {model!r} is an encoder-decoder model ({config.model_type}): the vllm backend "
                                 "runs decoder-only (causal) LMs; grade with it on --backend hf")
        with source.loading():
            tokenizer = AutoTokenizer.from_pretrained(source.name_or_path, **source.options)
        own = limit = max_input_tokens(config, tokenizer)
        assert own is not None and limit is not None  # None only without a config
        if max_model_len is not None:
            limit = min(limit, max_model_len - CAUSAL_OUTPUT_ROOM)
        engine = vllm.LLM(model=source.name_or_path, tokenizer=source.name_or_path, dtype=DTYPES[dtype], seed=seed,
                          gpu_memory_utilization=gpu_memory_utilization, tensor_parallel_size=tensor_parallel_size,
                          max_model_len=max_model_len, enable_prefix_caching=True, max_logprobs=TOP_LOGPROBS)
        return cls(model, engine, vllm.SamplingParams, tokenizer, chat=chat, max_input_tokens=limit,
                   marks=input_mark(limit, own))

    def close(self) -> None:
        self.engine = None  # vLLM frees the GPU when its engine is collected

    # --- capabilities --------------------------------------------------------------------------

    def generate(self, prompts: Sequence[str | Conversation], *, max_new_tokens: int = 32,
                 temperature: float = 0.0) -> list[str]:
        """Text per prompt (a text or a conversation): greedy at ``temperature`` 0, else sampled (the engine's seed)."""
        return self._texts(self._run(self._encode(prompts), max_tokens=max_new_tokens, temperature=temperature))

    def next_token_labels(self, prompts: Sequence[str | Conversation], labels: Labels, *,
                          max_new_tokens: int = 32) -> list[NextToken]:
        """Per prompt: the labels' log-probabilities among the :data:`TOP_LOGPROBS` most likely first
        tokens, the label of the greedy (most likely) one, and greedy text where that one is no label."""
        ids = self._encode(prompts)
        seen = []
        for output in self._run(ids, max_tokens=1, logprobs=TOP_LOGPROBS):
            completion = output.outputs[0]
            top = [(token, logprob.logprob) for token, logprob in completion.logprobs[0].items()]
            seen.append(self.token_scores(top, completion.token_ids[0], labels, None))
        rows = [i for i, scores in enumerate(seen) if scores.top_label is None]
        texts = self._texts(self._run([ids[i] for i in rows], max_tokens=max_new_tokens))
        for row, text in zip(rows, texts):
            seen[row] = replace(seen[row], text=text)
        return seen

    def continuation_logprobs(self, prompts: Sequence[str], continuations: Sequence[str]) -> list[tuple[float, int]]:
        """Per (prompt, continuation): the summed log-probability of the continuation's tokens given the
        prompt, and their number. The continuation is tokenised without special tokens; an empty one
        scores ``(0.0, 0)`` without asking the engine."""
        if len(prompts) != len(continuations):
            raise ValueError("one continuation per prompt is needed")
        prompt_ids = self._encode(prompts)
        continuation_ids = self.tokenizer(list(continuations), add_special_tokens=False)["input_ids"] \
            if continuations else []
        rows = [i for i, ids in enumerate(continuation_ids) if ids]
        # prompt_logprobs=1: each position's own token and the most likely one (0 is not accepted by every version)
        outputs = self._run([prompt_ids[i] + continuation_ids[i] for i in rows], max_tokens=1, prompt_logprobs=1)
        scores = [(0.0, 0)] * len(prompts)
        for row, output in zip(rows, outputs):
            start, continuation = len(prompt_ids[row]), continuation_ids[row]
            positions = output.prompt_logprobs[start:start + len(continuation)]
            scores[row] = (sum(seen[token].logprob for seen, token in zip(positions, continuation)), len(continuation))
        return scores

    # --- the engine ----------------------------------------------------------------------------

    def _run(self, ids: list[list[int]], *, max_tokens: int, temperature: float = 0.0, **options: Any) -> list:
        """One ``LLM.generate`` over prompts given as token ids (submitted in token order, so that prompts
        sharing a header go in together); the RequestOutputs in input order."""
        if not ids:
            return []
        order = sorted(range(len(ids)), key=lambda i: ids[i])
        params = self._sampling_params(max_tokens=max_tokens, temperature=temperature, detokenize=False, **options)
        outputs = self.engine.generate([{"prompt_token_ids": ids[i]} for i in order], params, use_tqdm=False)
        in_order: list[Any] = [None] * len(ids)
        for i, output in zip(order, outputs):
            in_order[i] = output
        self.usage.completion_tokens += sum(len(output.outputs[0].token_ids) for output in outputs)
        return in_order

    def _texts(self, outputs: list) -> list[str]:
        """The generated ids decoded as the hf backend decodes them: without special tokens."""
        return [self.tokenizer.decode(output.outputs[0].token_ids, skip_special_tokens=True) for output in outputs]


BACKEND = VLLMBackend
