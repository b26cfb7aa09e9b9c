"""Fitting a prompt to a model's input length, shared by the backends that cut prompts.

Only a prompt's ``{context}`` is cut, at its end, so that the template and the other fields (the
question) stay whole. :func:`fit_prompt` is the loop; a backend gives it a token counter and a way
to take the context's first n tokens: exact with a tokenizer (:func:`tokenizer_prefix`,
:func:`count_tokens`), or estimated from characters (:func:`char_count`, :func:`char_prefix`) when
the model's tokenizer is unknown (a served model). Nothing here imports torch or transformers.

A cut changes what the judge reads, so it is counted (:class:`~exampp.llm.backend.Usage`), and an
input length other than the model's own is part of the judge's identity (:func:`input_mark`).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

# in defaults: the settings' rule of max_model_len relies on it too
from exampp.defaults import CAUSAL_OUTPUT_ROOM
from exampp.llm.prompt import Conversation, Prompt, as_messages

if TYPE_CHECKING:
    from exampp.llm.backend import Usage

CHARS_PER_TOKEN = 4  # the usual estimate for English text under BPE/SentencePiece vocabularies
_T5_FAMILY = frozenset({"t5", "mt5", "umt5"})
_T5_MAX_INPUT = 512  # what the T5 family was trained on (relative positions set no hard limit)
_SANE_MAX_LENGTH = 1_000_000  # tokenizers without a limit report ~1e30


def fit_prompt(prompt: Prompt, context: str, fields: Mapping[str, str], *, max_tokens: int,
               count: Callable[[str], int], prefix: Callable[[int], str], usage: Usage | None = None) -> str:
    """``prompt`` rendered with ``context`` and ``fields``, the context cut to its first tokens so the
    whole prompt counts at most ``max_tokens``. ``count`` counts a rendered prompt's tokens;
    ``prefix(n)`` is the context's first n tokens. A context that fits is kept as is; when even an
    empty context does not fit, the prompt goes with an empty context. A cut is counted in ``usage``:
    one more context cut, and the tokens the prompt lost."""
    full = prompt.render(context=context, **fields)
    whole = count(full)
    if whole <= max_tokens:
        return full
    budget = max_tokens - count(prompt.render(context="", **fields))
    # Tokens can merge across the boundary between template and context: shrink until it fits.
    while True:
        rendered = prompt.render(context=prefix(max(budget, 0)), **fields)
        tokens = count(rendered)
        if tokens <= max_tokens or budget <= 0:
            if usage is not None:
                usage.cut_contexts += 1
                usage.cut_tokens += whole - tokens
            return rendered
        budget -= tokens - max_tokens


def input_mark(max_tokens: int, own: int | None = None, *, estimated: bool = False) -> str:
    """What the judge's identity gets for prompts cut to ``max_tokens``: nothing when that is the
    model's input length ``own`` (the same judge as a backend that cuts there), else
    ``+max_input_tokens=N``, or ``+max_input_chars=M`` where tokens are estimated
    (:data:`CHARS_PER_TOKEN` characters each: the cut falls by characters)."""
    if max_tokens == own:
        return ""
    if estimated:
        return f"+max_input_chars={max_tokens * CHARS_PER_TOKEN}"
    return f"+max_input_tokens={max_tokens}"


def tokenizer_prefix(tokenizer, text: str) -> Callable[[int], str]:
    """``n -> the first n tokens of text`` under a HF tokenizer: a prefix of the original string where
    offsets are known (keeps its characters exactly), else the decoded tokens. Encodes on first use."""
    encoded = None

    def prefix(n_tokens: int) -> str:
        nonlocal encoded
        if encoded is None:
            encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=tokenizer.is_fast)
        ids = encoded["input_ids"]
        if n_tokens >= len(ids):
            return text
        if n_tokens == 0:
            return ""
        if "offset_mapping" in encoded:
            return text[:encoded["offset_mapping"][n_tokens - 1][1]]
        return tokenizer.decode(ids[:n_tokens], skip_special_tokens=True)

    return prefix


def chat_format(tokenizer, prompt: str | Conversation) -> str:
    """The prompt (a text: one user turn; or a conversation) in the tokenizer's chat template, ready for the answer."""
    return tokenizer.apply_chat_template(as_messages(prompt), tokenize=False, add_generation_prompt=True)


def token_ids(tokenizer, text: str, *, chat: bool = False) -> list[int]:
    """``text``'s token ids as a model input: special tokens included, in the chat format when ``chat``."""
    if chat:  # the template writes the special tokens itself
        return tokenizer(chat_format(tokenizer, text), add_special_tokens=False)["input_ids"]
    return tokenizer(text)["input_ids"]


def count_tokens(tokenizer, text: str, *, chat: bool = False) -> int:
    """Tokens of ``text`` as a model input: special tokens included, in the chat format when ``chat``."""
    return len(token_ids(tokenizer, text, chat=chat))


def char_count(text: str) -> int:
    """Estimated tokens of ``text``: :data:`CHARS_PER_TOKEN` characters each."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def char_prefix(text: str) -> Callable[[int], str]:
    """``n -> the first n estimated tokens of text`` (:data:`CHARS_PER_TOKEN` characters each)."""
    return lambda n_tokens: text[:n_tokens * CHARS_PER_TOKEN]


def max_input_tokens(config, tokenizer) -> int | None:
    """The input length a model takes: 512 for the T5 family, else the tokenizer's limit or the
    config's positions (less room for the output of a causal LM); None where ``config`` is None and
    the tokenizer names no limit."""
    if config is not None and config.model_type in _T5_FAMILY:
        return _T5_MAX_INPUT
    limit = tokenizer.model_max_length
    if not (isinstance(limit, int) and 0 < limit < _SANE_MAX_LENGTH):
        if config is None:
            return None
        limit = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None) or 512
    if config is not None and not config.is_encoder_decoder:
        limit -= CAUSAL_OUTPUT_ROOM
    return limit
