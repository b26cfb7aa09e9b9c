"""The local HuggingFace backend (``--backend hf``, the default): loading, prompt fitting, batched inference.

:class:`HFBackend` wraps a seq2seq model (FLAN-T5, the method's default) or a causal LM with its
tokenizer. Every inference method takes many prompts, runs them in length-sorted batches
(:mod:`exampp.llm.batching`) under ``torch.inference_mode`` and returns results in input order.
Causal LMs are padded on the left, so that the next token follows every prompt directly; a causal
model whose tokenizer has a chat template gets its prompts in that format (``chat=None``: auto).

Label log-probabilities (:meth:`HFBackend.next_token_labels`) come from one forward pass: where
the most likely first token stands for a label, greedy generation would start with it, so the
label is read off without generating; the other rows are generated in the same batch (a seq2seq
model's generation reuses the encoder output). This holds only when the model's generation config
leaves the first greedy step raw (:attr:`HFBackend.first_step_is_raw`); otherwise every prompt is
generated.

Speed (see benchmarks/grading.py for the figures): batches hold at most a token budget of padded
tokens (:func:`exampp.llm.batching.auto_batch_limits`), so short prompts go in larger batches; a
prompt is tokenised once (:class:`~exampp.llm.tokenized.TokenizedBackend` keeps the ids that :meth:`fit`
counted for the batches to reuse) and a passage cut for several questions is tokenised once; on
loading, :func:`exampp.llm.fused.speed_up` fuses the GELU and builds T5's attention mask once per
stack. Options: ``threads`` (torch's CPU threads), ``dtype="int8"`` (dynamic int8 quantisation of
the linear layers, CPU only; grades move, so the judge's identity gets ``+int8``), ``compile``
(``torch.compile`` of the stacks). On CUDA, fp32 matrix products use TF32 and batches are copied
from pinned memory. The encoder pass of a passage cannot be shared between its questions
(:mod:`exampp.llm.fused` says why).
"""
from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer
from transformers.modeling_outputs import BaseModelOutput

from exampp.defaults import LLM_MODEL, TOP_LOGPROBS
from exampp.errors import ModelLoadError
from exampp.llm.backend import Capability, Labels, NextToken, Usage
from exampp.llm.batching import MAX_AUTO_BATCH_SIZE, Batcher, auto_batch_limits
from exampp.llm.device import resolve_device
from exampp.llm.fitting import max_input_tokens
from exampp.llm.fused import speed_up
from exampp.llm.locate import locate_model
from exampp.llm.prompt import Conversation
from exampp.llm.tokenized import TokenizedBackend

_DTYPES = {
    "float32": torch.float32, "fp32": torch.float32,
    "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
    "float16": torch.float16, "fp16": torch.float16,
}
INT8 = "int8"  # fp32 weights, linear layers dynamically quantised to int8 (CPU)
# Generation-config entries that leave the first greedy step untouched; any other entry
# (repetition penalty, forced or suppressed tokens, minimum length...) may change it.
_GREEDY_NEUTRAL = frozenset({
    "_from_model_config", "transformers_version", "bos_token_id", "eos_token_id", "pad_token_id",
    "decoder_start_token_id", "max_length", "max_new_tokens", "num_beams", "do_sample", "temperature",
    "top_k", "top_p", "use_cache", "early_stopping", "length_penalty", "num_return_sequences",
    "output_attentions", "output_hidden_states", "output_scores", "output_logits", "return_dict_in_generate",
})


class HFBackend(TokenizedBackend):
    """A loaded model with its tokenizer, device and batching policy. Build it with :meth:`load`."""

    capabilities = frozenset({Capability.GENERATE, Capability.LABEL_LOGPROBS, Capability.CONTINUATION})

    def __init__(self, name: str, tokenizer, model, device: torch.device, batch_size: int | None = None,
                 chat: bool | None = None, max_batch_tokens: int | None = None) -> None:
        self.model = model
        self.device = device
        self.usage = Usage(unit="prompts")  # a local model: no request is made
        limit = max_input_tokens(model.config, tokenizer)
        assert limit is not None  # None only without a config
        self.read_prompts(name, tokenizer, encoder_decoder=bool(model.config.is_encoder_decoder), chat=chat,
                          max_input_tokens=limit,
                          marks=f"+{INT8}" if quantised(model) else "")
        if tokenizer.pad_token is None:  # GPT-2 style tokenizers: pad with end-of-text (masked anyway)
            tokenizer.pad_token = tokenizer.eos_token
        if not self.is_encoder_decoder:
            tokenizer.padding_side = "left"
        self.batcher = self._batcher(batch_size, max_batch_tokens)
        self._keep_last_logits = (
            {} if self.is_encoder_decoder or "logits_to_keep" not in inspect.signature(model.forward).parameters
            else {"logits_to_keep": 1}
        )

    def _batcher(self, batch_size: int | None, max_batch_tokens: int | None) -> Batcher:
        """A batch size given alone is a plain count; a token budget given caps padded tokens (at
        ``batch_size`` prompts, or :data:`MAX_AUTO_BATCH_SIZE`); neither: both from the device."""
        if max_batch_tokens is not None or batch_size is not None:
            cap = batch_size or MAX_AUTO_BATCH_SIZE
            return Batcher(cap, max_batch_tokens)
        dtype_bytes = torch.tensor([], dtype=self.model.dtype).element_size()
        return Batcher(*auto_batch_limits(self.device, self.model.config, self.max_input_tokens,
                                          dtype_bytes=dtype_bytes))

    @classmethod
    def open(cls, model: str | None = None, *, device: str = "auto", dtype: str = "auto",
             batch_size: int | None = None, chat: bool | None = None, max_batch_tokens: int | None = None,
             threads: int | None = None, compile: bool | None = None) -> "HFBackend":
        return cls.load(model or LLM_MODEL, device=device, dtype=dtype, batch_size=batch_size, chat=chat,
                        max_batch_tokens=max_batch_tokens, threads=threads, compile=bool(compile))

    @classmethod
    def load(cls, name_or_path: str, *, device: str = "auto", dtype: str = "auto",
             batch_size: int | None = None, chat: bool | None = None, max_batch_tokens: int | None = None,
             threads: int | None = None, compile: bool = False) -> "HFBackend":
        """Load a model by hub name or local folder (see :mod:`exampp.llm.locate`): seq2seq for
        encoder-decoder configs, causal LM otherwise.

        ``device``: ``auto`` (CUDA when available), ``cpu``, ``cuda`` or ``cuda:N``. ``dtype``: ``auto``
        (bfloat16 on GPU, float32 on CPU), a name such as ``float32``/``bf16``, or ``int8`` (CPU: the
        linear layers dynamically quantised). ``batch_size``/``max_batch_tokens``: prompts / padded
        tokens per batch at most (see :meth:`_batcher`). ``threads``: torch's CPU threads (process-wide).
        ``compile``: ``torch.compile`` the model's stacks (slow to start; each new shape may compile again).
        """
        torch_device = resolve_device(device)
        quantise = dtype == INT8
        if quantise and torch_device.type != "cpu":
            raise ModelLoadError(f"dtype {INT8} (dynamic quantisation) runs on the CPU only: use --device cpu, "
                                 "or bf16 on a GPU")
        torch_dtype = torch.float32 if quantise else resolve_dtype(dtype, torch_device)
        if threads is not None:
            torch.set_num_threads(threads)
        if torch_device.type == "cuda" and torch_dtype == torch.float32:
            torch.backends.cuda.matmul.allow_tf32 = True  # fp32 matrix products on tensor cores
            torch.backends.cudnn.allow_tf32 = True
        source = locate_model(name_or_path)
        with source.loading():
            config = AutoConfig.from_pretrained(source.name_or_path, **source.options)
            tokenizer = AutoTokenizer.from_pretrained(source.name_or_path, **source.options)
            model_class = AutoModelForSeq2SeqLM if config.is_encoder_decoder else AutoModelForCausalLM
            model = model_class.from_pretrained(source.name_or_path, dtype=torch_dtype, **source.options)
        # PreTrainedModel.to is functools.wraps(Module.to): typeshed's wrapper does not bind self
        model.to(torch_device).eval()  # type: ignore[arg-type]
        if quantise:
            model = quantize_int8(model)
        speed_up(model, compile=compile)
        return cls(name_or_path, tokenizer, model, torch_device, batch_size, chat, max_batch_tokens)

    @property
    def first_step_is_raw(self) -> bool:
        """True when greedy generation's first token is the argmax of :meth:`first_token_logprobs`:
        the model's generation config adds nothing that changes the first step's distribution."""
        return set(self.model.generation_config.to_diff_dict()) <= _GREEDY_NEUTRAL

    # --- inference -------------------------------------------------------------------------

    def first_token_logprobs(self, prompts: Sequence[str | Conversation]) -> torch.Tensor:
        """``[len(prompts), vocab]`` float32 log-softmax of the first generated token: decoder step 1
        for seq2seq, the token after the prompt for causal LMs. Raw model output, no logits processors."""
        rows = self._map(self._first_token_batch, prompts)
        if not rows:
            return torch.empty(0, self.model.config.vocab_size)
        return torch.stack(rows)

    def generate(self, prompts: Sequence[str | Conversation], *, max_new_tokens: int = 32,
                 temperature: float = 0.0, num_beams: int = 1) -> list[str]:
        """Generated text per prompt (a text or a conversation), decoded without special tokens: greedy
        by default, sampled at ``temperature`` > 0 (torch's random state), beam search with ``num_beams`` > 1."""
        options = _generation_options(max_new_tokens, temperature, num_beams)
        return self._map(lambda batch: self._generate_batch(batch, options), prompts)

    def first_token_or_generate(self, prompts: Sequence[str | Conversation],
                                generate_if: Callable[[torch.Tensor], torch.Tensor], *,
                                max_new_tokens: int = 32) -> list[tuple[torch.Tensor, str | None]]:
        """Per prompt: its row of :meth:`first_token_logprobs` and, where ``generate_if`` flags that row (it maps
        ``[b, vocab]`` log-probabilities to ``[b]`` booleans), the text of greedy :meth:`generate`, else None.

        One pass per batch: a seq2seq model's generation reuses the encoder output of the first step.
        """
        options = _generation_options(max_new_tokens)
        return self._map(lambda batch: self._first_token_or_generate_batch(batch, generate_if, options), prompts)

    def next_token_labels(self, prompts: Sequence[str | Conversation], labels: Labels, *,
                          max_new_tokens: int = 32) -> list[NextToken]:
        """Per prompt: the labels' log-probabilities among the :data:`TOP_LOGPROBS` most likely first
        tokens, the label of the most likely one, and greedy text where that one is no label."""
        if not self.first_step_is_raw:  # the first greedy step is not the raw argmax: generate all
            return [NextToken(None, None, text) for text in self.generate(prompts, max_new_tokens=max_new_tokens)]

        def no_label(logprobs: torch.Tensor) -> torch.Tensor:
            top = logprobs.argmax(dim=1).tolist()
            return torch.tensor([labels.classify(self.token_text(i)) is None for i in top], device=logprobs.device)

        results = self.first_token_or_generate(prompts, no_label, max_new_tokens=max_new_tokens)
        return [self._label_scores(row, labels, text) for row, text in results]

    def _label_scores(self, logprobs: torch.Tensor, labels: Labels, text: str | None) -> NextToken:
        top = torch.topk(logprobs, min(TOP_LOGPROBS, len(logprobs)))
        ranked = list(zip(top.indices.tolist(), top.values.tolist()))
        return self.token_scores(ranked, ranked[0][0], labels, text)

    def continuation_logprobs(self, prompts: Sequence[str], continuations: Sequence[str]) -> list[tuple[float, int]]:
        """Per (prompt, continuation): the summed log-probability of the continuation's tokens given the
        prompt, and their number (for length normalisation). The continuation is tokenised without special
        tokens; an empty one scores ``(0.0, 0)``."""
        if len(prompts) != len(continuations):
            raise ValueError("one continuation per prompt is needed")
        prompt_ids = self._encode(prompts)
        continuation_ids = self.tokenizer(list(continuations), add_special_tokens=False)["input_ids"]
        items = list(zip(prompt_ids, continuation_ids))
        lengths = [len(p) + len(c) for p, c in items]
        return self.batcher.map(self._continuation_batch, items, lengths)

    # --- batches ---------------------------------------------------------------------------

    def _map(self, fn, prompts: Sequence[str | Conversation]) -> list:
        ids = self._encode(prompts)
        return self.batcher.map(fn, ids, [len(x) for x in ids])

    def _pad(self, batch: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        padded = self.tokenizer.pad({"input_ids": batch}, return_tensors="pt")
        return self._to_device(padded["input_ids"]), self._to_device(padded["attention_mask"])

    def _to_device(self, tensor: torch.Tensor) -> torch.Tensor:
        if self.device.type == "cuda":  # from pinned memory, without waiting for the copy
            return tensor.pin_memory().to(self.device, non_blocking=True)
        return tensor

    def _decoder_start(self, n: int) -> torch.Tensor:
        start = self.model.generation_config.decoder_start_token_id
        if start is None:
            start = self.model.config.decoder_start_token_id
        return torch.full((n, 1), start, dtype=torch.long, device=self.device)

    def _first_step(self, input_ids: torch.Tensor, mask: torch.Tensor):
        """First-token log-probabilities ``[b, vocab]`` (float32) and, for seq2seq, the encoder output.
        No key/value cache: a generation that follows starts its own (it would only be copied here)."""
        if self.is_encoder_decoder:
            encoded = self.model.get_encoder()(input_ids=input_ids, attention_mask=mask)
            logits = self.model(encoder_outputs=encoded, attention_mask=mask, use_cache=False,
                                decoder_input_ids=self._decoder_start(len(input_ids))).logits[:, -1]
        else:
            encoded = None
            logits = self.model(input_ids=input_ids, attention_mask=mask, position_ids=_positions(mask),
                                use_cache=False, **self._keep_last_logits).logits[:, -1]
        return torch.log_softmax(logits.float(), dim=-1), encoded

    @torch.inference_mode()
    def _first_token_batch(self, batch: list[list[int]]) -> list[torch.Tensor]:
        logprobs, _ = self._first_step(*self._pad(batch))
        return list(logprobs.cpu())

    @torch.inference_mode()
    def _generate_batch(self, batch: list[list[int]], options: dict) -> list[str]:
        return self._generate_padded(*self._pad(batch), options)

    def _generate_padded(self, input_ids: torch.Tensor, mask: torch.Tensor, options: dict, encoded=None) -> list[str]:
        if encoded is not None:  # generation starts from this encoder output instead of encoding again
            output = self.model.generate(encoder_outputs=encoded, attention_mask=mask,
                                         pad_token_id=self.tokenizer.pad_token_id, **options)
        else:
            output = self.model.generate(input_ids=input_ids, attention_mask=mask,
                                         pad_token_id=self.tokenizer.pad_token_id, **options)
        if not self.is_encoder_decoder:
            output = output[:, input_ids.shape[1]:]  # causal output repeats the prompt
        return self.tokenizer.batch_decode(output, skip_special_tokens=True)

    @torch.inference_mode()
    def _first_token_or_generate_batch(self, batch: list[list[int]], generate_if, options: dict) -> list:
        input_ids, mask = self._pad(batch)
        logprobs, encoded = self._first_step(input_ids, mask)
        rows = generate_if(logprobs).nonzero().flatten()
        texts: list[str | None] = [None] * len(batch)
        if len(rows):
            subset = None if encoded is None else BaseModelOutput(last_hidden_state=encoded.last_hidden_state[rows])
            for row, text in zip(rows.tolist(), self._generate_padded(input_ids[rows], mask[rows], options, subset)):
                texts[row] = text
        return list(zip(logprobs.cpu(), texts))

    @torch.inference_mode()
    def _continuation_batch(self, batch: list[tuple[list[int], list[int]]]) -> list[tuple[float, int]]:
        width = max(len(c) for _, c in batch)
        if width == 0:
            return [(0.0, 0)] * len(batch)
        if self.is_encoder_decoder:
            # Right padding of the decoder side: the causal mask keeps pads from touching earlier tokens.
            input_ids, mask = self._pad([p for p, _ in batch])
            targets, target_mask = _right_pad([c for _, c in batch], width, self.device)
            decoder_input = torch.cat([self._decoder_start(len(batch)), targets[:, :-1]], dim=1)
            logits = self.model(input_ids=input_ids, attention_mask=mask, decoder_input_ids=decoder_input).logits
        else:
            # Left padding puts every continuation's last token in the last column; logits at position t
            # predict token t + 1.
            input_ids, mask = self._pad([p + c for p, c in batch])
            logits = self.model(input_ids=input_ids, attention_mask=mask, position_ids=_positions(mask)).logits
            logits = logits[:, -width - 1:-1]
            targets = input_ids[:, -width:]
            target_mask = torch.zeros_like(targets)
            for row, (_, c) in enumerate(batch):
                if c:
                    target_mask[row, -len(c):] = 1
        logprobs = torch.log_softmax(logits.float(), dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        sums = (logprobs * target_mask).sum(dim=1).tolist()
        return [(float(total), len(c)) for total, (_, c) in zip(sums, batch)]


def resolve_dtype(dtype: str, device: torch.device) -> torch.dtype:
    """``auto`` → bfloat16 on GPU, float32 on CPU; else a name from float32/fp32, bfloat16/bf16, float16/fp16."""
    if dtype == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    try:
        return _DTYPES[dtype]
    except KeyError:
        raise ModelLoadError(f"unknown dtype {dtype!r}: use auto, {INT8} (CPU) or one of "
                             f"{', '.join(_DTYPES)}") from None


def quantize_int8(model):
    """``model`` with its ``nn.Linear`` layers dynamically quantised to int8 (weights int8, activations
    quantised per batch; CPU)."""
    with warnings.catch_warnings():  # torch announces the move of eager quantisation to torchao
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)


def quantised(model: torch.nn.Module) -> bool:
    """Whether ``model``'s linear layers are int8 (:func:`quantize_int8`). Its grades move, so it is a judge
    of its own; the float dtypes (fp32, bf16, fp16) are the same judge: the defaults differ by device
    (bf16 on GPU, fp32 on CPU), and a workspace's grades must not split by the machine that made them."""
    return any(isinstance(m, torch.ao.nn.quantized.dynamic.Linear) for m in model.modules())


def _generation_options(max_new_tokens: int, temperature: float = 0.0, num_beams: int = 1) -> dict[str, Any]:
    """``generate``'s options: greedy, sampled at ``temperature`` > 0 (the whole distribution), beam
    search with ``num_beams`` > 1."""
    options: dict[str, Any] = {"max_new_tokens": max_new_tokens, "num_beams": num_beams, "do_sample": False}
    if temperature > 0:
        options.update(do_sample=True, temperature=temperature, top_k=0, top_p=1.0)
    return options


def _positions(mask: torch.Tensor) -> torch.Tensor:
    """Position ids of a left-padded batch, as ``generate`` computes them: counted from the first real token."""
    return (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 0)


def _right_pad(rows: list[list[int]], width: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.zeros(len(rows), width, dtype=torch.long)
    mask = torch.zeros(len(rows), width, dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, :len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, :len(row)] = 1
    return ids.to(device), mask.to(device)


BACKEND = HFBackend
