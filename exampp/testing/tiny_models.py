"""Tiny random-weight models for tests and benchmarks, saved like real ones and loaded through
:meth:`exampp.llm.backends.hf.HFBackend.load`.

- :func:`build_t5`: a FLAN-T5-shaped seq2seq model (gated-gelu, untied head, vocab 32128) with the
  real T5 tokenizer (the tests' and benchmarks' is ``../shared/models/t5-tokenizer``; :func:`save_t5`
  saves one built and edited in memory, e.g. with FLAN-T5-base's or -large's shape).
- :func:`build_causal`: a tiny GPT-2-config causal LM with the same tokenizer.
- :func:`steer`: edits the output-embedding rows of chosen tokens so that greedy decoding of chosen
  prompts yields chosen token sequences (random weights otherwise decide nothing useful).
- :func:`make_rater`: edits a seq2seq model so that on any prompt it answers one token of a given set
  and stops, as FLAN-T5 answers a self-rating prompt (for throughput measurements and engine tests);
  :func:`save_rater` saves one so made.

The tests' fixtures that build them are in tests/tiny_model_dirs.py.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

T5_VOCAB = 32128  # FLAN-T5's embedding size (the tokenizer has 32100 tokens; the rest are padding rows)
FLAN_T5_BASE_SHAPE = {"d_model": 768, "d_ff": 2048, "d_kv": 64, "num_layers": 12, "num_heads": 12}
FLAN_T5_LARGE_SHAPE = {"d_model": 1024, "d_ff": 2816, "d_kv": 64, "num_layers": 24, "num_heads": 16}


def t5_model(*, d_model: int = 64, d_ff: int = 128, d_kv: int = 32, num_layers: int = 1, num_heads: int = 2,
             seed: int = 0):
    """A random-weight FLAN-T5-shaped model (``num_layers`` encoder and decoder layers, gated-gelu, a head
    of its own, vocab 32128), in eval mode. FLAN-T5-base's and FLAN-T5-large's shapes are
    :data:`FLAN_T5_BASE_SHAPE` and :data:`FLAN_T5_LARGE_SHAPE`."""
    from transformers import T5Config, T5ForConditionalGeneration

    # not fields that transformers 5's T5Config declares; it keeps them as attributes all the same
    undeclared: dict[str, Any] = {"tie_word_embeddings": False, "decoder_start_token_id": 0}
    config = T5Config(
        vocab_size=T5_VOCAB, d_model=d_model, d_ff=d_ff, d_kv=d_kv, num_layers=num_layers,
        num_decoder_layers=num_layers, num_heads=num_heads, feed_forward_proj="gated-gelu",
        dropout_rate=0.0, pad_token_id=0, eos_token_id=1, **undeclared,
    )
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = T5ForConditionalGeneration(config)
        _untie_head(model)
    return model.eval()


def build_t5(path: Path, tokenizer_dir: Path, **shape) -> Path:
    """Save a :func:`t5_model` (``shape``: its keyword arguments) and the tokenizer to ``path``; returns ``path``."""
    return save_t5(t5_model(**shape), path, tokenizer_dir)


def save_t5(model, path: Path, tokenizer_dir: Path) -> Path:
    """Save a :func:`t5_model` (edited or not) with the tokenizer to ``path``, as FLAN-T5 is saved; returns ``path``."""
    from transformers import AutoTokenizer

    model.save_pretrained(path)
    # transformers 5 forces tie_word_embeddings=True into T5 configs and unties on loading when the
    # checkpoint holds a separate head, as FLAN-T5's does; write the flag as FLAN-T5's config has it.
    config_file = path / "config.json"
    saved = json.loads(config_file.read_text(encoding="utf-8"))
    saved["tie_word_embeddings"] = False
    config_file.write_text(json.dumps(saved, indent=2), encoding="utf-8")
    AutoTokenizer.from_pretrained(tokenizer_dir).save_pretrained(path)
    return path


def build_causal(path: Path, tokenizer_dir: Path, *, hidden: int = 64, layers: int = 1, heads: int = 2,
                 seed: int = 0) -> Path:
    """Save a random-weight GPT-2-config causal LM with the T5 tokenizer to ``path``; returns ``path``.
    GPT-2's learned absolute positions make mistakes with left padding visible."""
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    config = GPT2Config(
        vocab_size=T5_VOCAB, n_positions=1024, n_embd=hidden, n_layer=layers, n_head=heads,
        tie_word_embeddings=False, pad_token_id=0, eos_token_id=1, bos_token_id=1,
    )
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = GPT2LMHeadModel(config)
        _untie_head(model)
    model.save_pretrained(path)
    AutoTokenizer.from_pretrained(tokenizer_dir).save_pretrained(path)
    return path


def _untie_head(model) -> None:
    """A head of its own (FLAN-T5 has one), so that :func:`steer` edits outputs, not input embeddings."""
    head = model.get_output_embeddings()
    if head.weight.data_ptr() == model.get_input_embeddings().weight.data_ptr():
        head.weight = torch.nn.Parameter(torch.randn_like(head.weight))  # T5's head init: N(0, 1)


def steer(hf_model, prompts: Sequence[str], targets: Sequence[Sequence[int]], *, margin: float = 1000.0) -> None:
    """Make greedy decoding of ``prompts[i]`` emit ``targets[i]`` (token ids; end with eos to stop there).

    Teacher-forced over the targets, the hidden states h that enter the output layer at every step
    are collected (their number must not exceed the hidden size); the output-embedding rows of all
    target tokens are then set to the least-squares solution of ``h · row[t] = margin`` when t is that
    step's target and 0 otherwise. Other tokens keep their random rows, whose logits are tiny next to
    ``margin``. Prompts are tokenised as :class:`HFBackend` tokenises them.
    """
    model, tokenizer = hf_model.model, hf_model.tokenizer
    head = model.get_output_embeddings()
    captured: list[torch.Tensor] = []
    hook = head.register_forward_pre_hook(lambda _module, args: captured.append(args[0].detach().clone()))
    states: list[torch.Tensor] = []
    wanted: list[int] = []
    try:
        with torch.no_grad():
            for prompt, target in zip(prompts, targets, strict=True):
                prompt_ids = tokenizer(prompt, truncation=True, max_length=hf_model.max_input_tokens)["input_ids"]
                if hf_model.is_encoder_decoder:
                    start = model.generation_config.decoder_start_token_id
                    model(input_ids=torch.tensor([prompt_ids]),
                          decoder_input_ids=torch.tensor([[start, *target[:-1]]]))
                    states.append(captured[-1][0])
                else:
                    model(input_ids=torch.tensor([prompt_ids + list(target[:-1])]))
                    states.append(captured[-1][0, len(prompt_ids) - 1:])
                wanted.extend(target)
    finally:
        hook.remove()
    hidden = torch.cat(states).float()  # [steps, d]
    tokens = sorted(set(wanted))
    goal = torch.zeros(len(wanted), len(tokens))
    for step, token in enumerate(wanted):
        goal[step, tokens.index(token)] = margin
    rows = torch.linalg.pinv(hidden) @ goal  # [d, tokens]
    residual = (hidden @ rows - goal).abs().max().item()
    if residual > margin * 1e-3:
        raise ValueError(f"cannot steer {len(wanted)} steps with hidden size {hidden.shape[1]} (residual {residual})")
    with torch.no_grad():
        head.weight[tokens] = rows.T.to(head.weight.dtype)


def make_rater(hf_model, prompts: Sequence[str], answers: Sequence[int], *, sharpness: float = 4.0) -> None:
    """Make a random seq2seq model answer like FLAN-T5 answers a self-rating prompt: one of ``answers``
    (which one depends on the prompt), then end-of-sequence, so greedy and beam search stop after two steps.

    Two coordinates of the embeddings become flags: the decoder start token gets a large first coordinate
    (first step), the answer tokens a large second one (an answer was given). In the output layer the
    answer rows read the first flag and the end-of-sequence row reads the second. The first-step states of
    ``prompts`` vary mostly along one direction; the answers split that direction into equally frequent
    intervals (answer g wins where the projection is nearest its center, by ``sharpness`` logits per
    standard deviation).
    """
    model = hf_model.model
    if not hf_model.is_encoder_decoder:
        raise ValueError("make_rater needs a seq2seq model")
    embedding, head = model.get_input_embeddings().weight, model.get_output_embeddings().weight
    start, eos = model.generation_config.decoder_start_token_id, model.generation_config.eos_token_id
    answers = list(answers)
    with torch.no_grad():
        residual = _mean_residual_norm(hf_model, prompts[0], [start, answers[0]])
        embedding[:, :2] = 0
        embedding[start, 0] = 3 * residual  # dominates the first step's residual stream
        embedding[answers, 1] = 3 * residual
        states = _first_step_states(hf_model, prompts)
        mean = states.mean(dim=0)
        deviations = (states - mean)[:, 2:]
        direction = torch.zeros_like(mean)
        direction[2:] = torch.linalg.svd(deviations, full_matrices=False).Vh[0]
        projection = (states - mean) @ direction
        scale = projection.std().clamp_min(1e-6)
        quantiles = torch.tensor([(g + 0.5) / len(answers) for g in range(len(answers))])
        centers = torch.quantile(projection / scale, quantiles)  # in standard deviations
        flag = mean[0]  # the first flag's value at the first step
        # logit_g = 10 * flag + sharpness * (center_g * u - center_g² / 2), u = projection / scale:
        # the answer whose center is nearest u wins.
        head[:, :2] = 0
        head[answers] = (sharpness * centers / scale)[:, None] * direction[None, :].to(head.dtype)
        offset = mean @ direction / scale
        head[answers, 0] = 10.0 - sharpness * (centers**2 / 2 + centers * offset) / flag
        head[eos] = 0
        head[eos, 1] = 10.0


def save_rater(tiny_dir: Path, path: Path, prompts: Sequence[str], answers: Sequence[str]) -> Path:
    """The saved tiny model at ``tiny_dir`` made a rater (:func:`make_rater`) fitted on ``prompts``,
    answering one of the tokenizer pieces ``answers`` and stopping, saved to ``path``; returns ``path``."""
    from exampp.llm.backends.hf import HFBackend

    backend = HFBackend.load(str(tiny_dir), device="cpu")
    make_rater(backend, list(prompts), [backend.tokenizer.convert_tokens_to_ids(piece) for piece in answers])
    return save_t5(backend.model, path, tiny_dir)  # the tokenizer saved beside the tiny model


def _mean_residual_norm(hf_model, prompt: str, decoder_ids: list[int]) -> float:
    """Mean norm of the decoder's residual stream before its final layer norm."""
    seen: list[torch.Tensor] = []
    norm = hf_model.model.get_decoder().final_layer_norm
    hook = norm.register_forward_pre_hook(lambda _module, args: seen.append(args[0].detach().clone()))
    try:
        hf_model.model(input_ids=torch.tensor([hf_model.tokenizer(prompt)["input_ids"]]),
                       decoder_input_ids=torch.tensor([decoder_ids]))
    finally:
        hook.remove()
    return float(seen[-1].norm(dim=-1).mean())


def _first_step_states(hf_model, prompts: Sequence[str]) -> torch.Tensor:
    """The hidden states entering the output layer at the first decoding step, one row per prompt."""
    seen: list[torch.Tensor] = []
    hook = hf_model.model.get_output_embeddings().register_forward_pre_hook(
        lambda _module, args: seen.append(args[0][:, -1].detach().float().clone()))
    try:
        hf_model.first_token_logprobs(prompts)
    finally:
        hook.remove()
    return torch.cat(seen)
