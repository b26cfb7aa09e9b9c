"""Where the backend and the Batch API meet: a book of answers attached to an
:class:`~exampp.llm.openai.backend.OpenAIBackend` (its ``book``), which the backend asks before it sends a
request. The Batch API's :class:`~exampp.llm.openai.batch.Book` is one; the backend knows only this
protocol, and the book only what :class:`Requester` says of the backend, so neither module imports the
other for it.
"""
from __future__ import annotations

from typing import Any, Protocol

from exampp.llm.openai.wire import Answer
from exampp.llm.prompt import Conversation


class Requester(Protocol):
    """What a book needs of the backend that asks it: the endpoint its requests go to (``chat`` or
    ``completions``) and the JSON body of each, as it would send them."""

    @property
    def endpoint(self) -> str: ...

    def request_body(self, prompt: str | Conversation, max_new_tokens: int, *, logprobs: bool,
                     temperature: float = 0.0) -> dict[str, Any]: ...


class AnswerBook(Protocol):
    """What the backend asks of a book attached to it, once per request, before any is sent."""

    def look_up(self, backend: Requester, prompt: str | Conversation, max_new_tokens: int, *, logprobs: bool,
                temperature: float) -> Answer | None:
        """The answer to the request ``backend`` would send, read as a direct answer is read
        (:func:`~exampp.llm.openai.wire.read_answer`); None: the backend sends it itself. A book may
        raise instead, to stop the call (the Batch API's ``Deferred``: the request awaits a batch)."""
        ...
