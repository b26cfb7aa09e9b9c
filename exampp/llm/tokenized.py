"""How a local model reads its prompts through its HuggingFace tokenizer, shared by the backends that
run one (``hf``, ``vllm``), so that the same model is the same judge on either.

:class:`TokenizedBackend` decides the prompt format once (the tokenizer's chat template for a
decoder-only model that has one, unless told otherwise; the judge's identity gets ``+chat``), counts
and cuts prompts exactly (:mod:`exampp.llm.fitting`; an input shorter than the model's own is in the
identity too), encodes them as the model's input ids (counted in
:attr:`~exampp.llm.backend.Backend.usage`) and reads a token's text as generated output decodes it,
which is what label log-probabilities are classified by (:meth:`TokenizedBackend.token_scores`).
"""
from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any, cast

from exampp.errors import ModelLoadError
from exampp.llm.backend import Backend, Labels, NextToken, next_token_scores
from exampp.llm.fitting import chat_format, fit_prompt, token_ids, tokenizer_prefix
from exampp.llm.prompt import Conversation, Prompt, as_text

_KEPT_IDS = 4096  # fitted prompts whose token ids are kept for the batches
_KEPT_PASSAGES = 256  # passages whose tokens are kept for cutting them to fit


class TokenizedBackend(Backend):
    """A backend whose prompts go in as token ids of a HuggingFace tokenizer; subclasses call
    :meth:`read_prompts` when they are built."""

    tokenizer: Any  # a HuggingFace tokenizer, used as one (transformers' classes, or what vLLM hands over)
    chat: bool
    is_encoder_decoder: bool
    max_input_tokens: int  # a local model's input has a limit

    def read_prompts(self, name: str, tokenizer, *, encoder_decoder: bool, chat: bool | None,
                     max_input_tokens: int, marks: str = "") -> None:
        """Set the prompt format and the judge's identity. ``chat``: None for the chat template when a
        decoder-only model's tokenizer has one; True where there is none is a ModelLoadError.
        ``max_input_tokens``: where prompts are cut. ``marks``: what else the identity names
        (``+int8``: quantised weights; :func:`~exampp.llm.fitting.input_mark`: a cut shorter than the
        model's own input)."""
        self.tokenizer = tokenizer
        self.is_encoder_decoder = encoder_decoder
        has_template = bool(getattr(tokenizer, "chat_template", None))
        if chat and (encoder_decoder or not has_template):
            raise ModelLoadError(f"model {name!r} has no chat template: leave out --chat")
        self.chat = has_template and not encoder_decoder if chat is None else chat
        # The judge's identity: prompts rendered through a chat template, or cut shorter than the model
        # reads them (marks), are another judge's input.
        self.name = (f"{name}+chat" if self.chat else name) + marks
        # A decoder-only model continues "Answer:" with a space-led token; a seq2seq decoder or a chat
        # model's reply starts afresh.
        self.answer_lead = " " if not (encoder_decoder or self.chat) else ""
        self.max_input_tokens = max_input_tokens
        self._token_texts: dict[int, str] = {}  # token id -> its text as generated output decodes it
        self._ids: OrderedDict[str, list[int]] = OrderedDict()  # a prompt (as counted) -> its token ids
        self._prefixes = functools.lru_cache(maxsize=_KEPT_PASSAGES)(
            lambda text: tokenizer_prefix(self.tokenizer, text))

    # --- prompts ---------------------------------------------------------------------------

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as a model input, special tokens (and the chat format) included. The ids
        are kept for a while: a fitted prompt goes to the model without being tokenised again."""
        return len(self._token_ids(text))

    def _token_ids(self, text: str) -> list[int]:
        ids = self._ids.get(text)
        if ids is None:
            ids = self._ids[text] = token_ids(self.tokenizer, text, chat=self.chat)
            if len(self._ids) > _KEPT_IDS:
                self._ids.popitem(last=False)
        else:
            self._ids.move_to_end(text)
        return ids

    def format(self, prompt: str | Conversation) -> str:
        """The prompt as the model reads it: in the chat template for chat models, else its text
        (a conversation's turns one after another)."""
        return chat_format(self.tokenizer, prompt) if self.chat else as_text(prompt)

    def fit(self, prompt: Prompt, *, context: str, **fields: str) -> str:
        """``prompt`` rendered with ``fields``, its context cut (token-wise, at the end) so the whole
        prompt fits :attr:`max_input_tokens`. Only the context is cut; a context that fits is kept as is."""
        return fit_prompt(prompt, context, fields, max_tokens=self.max_input_tokens, count=self.count_tokens,
                          prefix=self._prefixes(context), usage=self.usage)

    def _encode(self, prompts: Sequence[str | Conversation]) -> list[list[int]]:
        """The prompts' input ids, cut to :attr:`max_input_tokens`, counted as requests and prompt
        tokens: those kept from counting where they fit, the rest tokenised here in one call."""
        limit = self.max_input_tokens
        ids: list[list[int] | None] = [None] * len(prompts)
        for i, prompt in enumerate(prompts):
            kept = self._ids.get(prompt) if isinstance(prompt, str) else None
            if kept is not None and (limit is None or len(kept) <= limit):
                ids[i] = kept
        rest = [i for i, x in enumerate(ids) if x is None]
        if rest:
            # A chat template writes the special tokens itself.
            encoded = self.tokenizer([self.format(prompts[i]) for i in rest], truncation=limit is not None,
                                     add_special_tokens=not self.chat, max_length=limit)["input_ids"]
            for i, x in zip(rest, encoded):
                ids[i] = x
        filled = cast("list[list[int]]", ids)  # every slot is filled above
        self.usage.requests += len(filled)
        self.usage.prompt_tokens += sum(map(len, filled))
        return filled

    # --- tokens ----------------------------------------------------------------------------

    def token_text(self, token_id: int) -> str:
        """A token's text as generated output decodes it (special tokens and ids beyond the vocabulary: "")."""
        text = self._token_texts.get(token_id)
        if text is None:
            text = self._token_texts[token_id] = self.tokenizer.decode([token_id], skip_special_tokens=True)
        return text

    def token_scores(self, top: Iterable[tuple[int, float]], first: int, labels: Labels, text: str | None) -> NextToken:
        """:func:`~exampp.llm.backend.next_token_scores` of the first token's most likely alternatives
        ``top`` (token id, log-probability), ``first`` the id of the token generated."""
        return next_token_scores([(self.token_text(t), lp) for t, lp in top], self.token_text(first), labels, text)
