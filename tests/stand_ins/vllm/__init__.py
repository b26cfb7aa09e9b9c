"""A CPU stand-in for vLLM, for tests only: NOT vLLM. ``tests/stand_ins`` goes on ``sys.path`` only in the
tests of the vllm backend (a fixture in tests/test_vllm_backend.py), never in the package.

It implements exactly the part of vLLM's public offline API that ``exampp/llm/backends/vllm.py`` uses:
``LLM(model, *, tokenizer, dtype, seed, gpu_memory_utilization, tensor_parallel_size, max_model_len,
enable_prefix_caching, max_logprobs)``, ``LLM.generate(prompts, sampling_params, *, use_tqdm)`` over text
or ``{"prompt_token_ids": [...]}`` prompts, ``LLM.get_tokenizer()``, ``SamplingParams`` (the fields used,
named as vLLM names them), and vLLM's output structures: ``RequestOutput`` (``prompt_token_ids``,
``prompt_logprobs``: None for the first token, then a dict per position; ``outputs``), ``CompletionOutput``
(``text``, ``token_ids``, ``logprobs``: a list of dict[token_id, Logprob] per generated token) and
``Logprob(logprob, rank, decoded_token)``. It mirrors vLLM 0.9 / main of 2026 (vllm/entrypoints/llm.py,
vllm/sampling_params.py, vllm/outputs.py, vllm/logprobs.py) as the backend's docstring records.

The numbers come from a HuggingFace causal LM on the CPU in float32, one prompt at a time, as vLLM
computes them: raw log-softmax of the logits (vLLM's default ``raw_logprobs``), greedy decoding at
temperature 0 until the end-of-sequence token or ``max_tokens``. It also records what the backend asked
of it (``LLM.opened``: every engine, with its options; ``engine.calls``: per ``generate``, the prompts'
token ids in submission order and the SamplingParams), which vLLM does not.
"""
from vllm.entrypoints.llm import LLM
from vllm.logprobs import Logprob
from vllm.outputs import CompletionOutput, RequestOutput
from vllm.sampling_params import SamplingParams

__all__ = ["LLM", "SamplingParams", "RequestOutput", "CompletionOutput", "Logprob"]
