"""The options that choose and configure an LLM backend, shared by every command that opens one
(``grade``, ``bank generate``, ``exam generate``; their values go to :class:`~exampp.llm.backend.BackendSpec`),
and the options of the generation commands."""
from __future__ import annotations

from collections.abc import Callable

import click

from exampp.cli.settings import FiniteRange, Setting
from exampp.llm.backend import backend_names


def backend_options(*, backend_help: str, model_help: str, chat_note: str = "") -> Callable:
    """Decorate a command with ``--backend``, ``--model`` and every backend's options; the command
    receives them as keyword arguments (``backend``, ``model``, ``device``, ``chat``, ``base_url``...).
    ``backend_help``/``model_help`` say the command's defaults."""
    options = [
        click.option("--backend", help=f"Where the model runs: {', '.join(backend_names())}; hf: local HuggingFace, "
                                       "openai: any OpenAI-compatible server, vllm: vLLM's offline engine on your GPUs "
                                       f"{backend_help}."),
        click.option("--model", help="hf: a local model folder (a path: absolute, ./..., ~/... or existing) or HF hub "
                                     "id, read from the local HF cache when the hub cannot be reached; vllm: the same, "
                                     f"a causal LM; openai: the served model's name {model_help}."),
        click.option("--device", help="auto (CUDA when torch sees a GPU, else the CPU), cpu, cuda or cuda:N "
                                      "[default: auto; the embedding backend: cpu]."),
        click.option("--chat/--no-chat", default=None,
                     help="hf, vllm: wrap prompts in the model's chat template [default: when a decoder-only model has "
                          f"one].{chat_note}"),
        click.option("--dtype", help="Weights' dtype, e.g. bfloat16, float32, or int8 (hf on CPU: linear layers "
                                     "quantised dynamically; grades move: filed under JUDGE+int8) [default: bf16 "
                                     "on GPU, fp32 on CPU; vllm: the checkpoint's, fp16 for fp32]."),
        click.option("--batch-size", type=Setting("batch_size"),
                     help="Prompts per forward pass [default: from free memory]."),
        click.option("--max-batch-tokens", type=Setting("max_batch_tokens"),
                     help="hf: padded tokens per forward pass at most, so that short prompts go in larger batches "
                          "[default: from free GPU memory; 4096 on CPU]."),
        click.option("--threads", type=Setting("threads"),
                     help="hf: torch's CPU threads [default: torch's choice, one per core]."),
        click.option("--compile/--no-compile", default=None,
                     help="hf: torch.compile the model: minutes to start, then faster where shapes repeat "
                          "[default: no]."),
        click.option("--base-url", help="openai: the server's URL, e.g. http://localhost:8000/v1 (vLLM, Ollama, "
                                        "TGI...)."),
        click.option("--api-key-env", metavar="VAR", help="openai: environment variable holding the API key "
                                                          "[default: OPENAI_API_KEY; none needed by local servers]."),
        click.option("--endpoint", type=click.Choice(["chat", "completions"]),
                     help="openai: chat completions (chat models) or completions (raw prompts) [default: chat]."),
        click.option("--concurrency", type=Setting("concurrency"),
                     help="openai: requests in flight at most: as many at first, half as many after a 429, 503 or "
                          "time-out, then more again while the server's throughput holds [default: 256]."),
        click.option("--adaptive-concurrency/--fixed-concurrency", default=None,
                     help="openai: adapt the requests in flight to the server, up to --concurrency, or keep "
                          "--concurrency in flight always [default: adaptive]."),
        click.option("--max-requests", type=Setting("max_requests"),
                     help="openai: stop after this many requests (what is done so far is kept) [default: no limit]."),
        click.option("--timeout", type=Setting("timeout"),
                     help="openai: seconds before a request is retried [default: 60]."),
        click.option("--max-retries", type=Setting("max_retries"),
                     help="openai: retries of a request on 5xx, time-outs and lost connections, with backoff; "
                          "a 429 or 503 is asked again, spending none, for up to --timeout x (--max-retries + 1) "
                          "[default: 5]."),
        click.option("--tokenizer", metavar="FOLDER", help="openai: a local copy of the served model's tokenizer, to "
                                                         "count tokens exactly and cut passages to fit its input."),
        click.option("--max-input-tokens", type=Setting("max_input_tokens"),
                     help="openai: the served model's input length (at least 32); passages are cut to fit (4 "
                          "characters a token without --tokenizer) and their grades filed under "
                          "JUDGE+max_input_tokens=N (JUDGE+max_input_chars=4N without --tokenizer) unless N is "
                          "--tokenizer's own [default: from --tokenizer's config; else prompts go as they are]."),
        click.option("--gpu-memory-utilization", type=Setting("gpu_memory_utilization"),
                     help="vllm: share of each GPU's memory for weights and KV cache [default: 0.9]."),
        click.option("--tensor-parallel-size", type=Setting("tensor_parallel_size"),
                     help="vllm: GPUs to split the model over [default: 1]."),
        click.option("--max-model-len", type=Setting("max_model_len"),
                     help="vllm: context length (prompt and answer) the engine plans for, more than 64; passages "
                          "are cut to fit (shorter than the model's input: grades filed under "
                          "JUDGE+max_input_tokens=N) [default: the model's]."),
    ]

    return _stacked(options)


def generation_options(*, items: str, max_new_tokens: int, max_attempts: int, unusable: str, kept_in: str) -> Callable:
    """Decorate a generation command with ``--temperature``, ``--max-new-tokens``, ``--max-attempts``,
    ``--chunk-size`` and ``--retry-failed``. ``items``: what it asks for, plural ("documents");
    ``unusable``: what the corrective message follows; ``kept_in``: the file that keeps failures."""
    options = [
        click.option("--temperature", type=FiniteRange(min=0), default=0.0, show_default=True,
                     help="Sampling temperature of the generator (0: greedy)."),
        click.option("--max-new-tokens", type=click.IntRange(min=1), default=max_new_tokens, show_default=True,
                     help="Tokens the generator may write per answer."),
        click.option("--max-attempts", type=click.IntRange(min=1), default=max_attempts, show_default=True,
                     help=f"Requests per one of the {items}: {unusable} is followed by a corrective message in the "
                          "same conversation."),
        click.option("--chunk-size", type=Setting("chunk_size"),
                     help=f"{items.capitalize()} asked at once [default: --concurrency for openai, else 8]."),
        click.option("--retry-failed", is_flag=True,
                     help=f"Ask again the {items} that failed in an earlier run (kept in {kept_in}; without this "
                          "flag they are not asked again)."),
    ]

    return _stacked(options)


def _stacked(options: list[Callable]) -> Callable:
    """One decorator applying ``options`` in order (the first is the first in --help)."""

    def decorate(command: Callable) -> Callable:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate
