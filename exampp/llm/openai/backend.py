"""OpenAI-compatible servers (``--backend openai``): vLLM, Ollama, TGI, llama.cpp, OpenAI, Azure, OpenRouter...

:class:`OpenAIBackend` talks to a server through the official ``openai`` SDK, one request per prompt:
the chat endpoint (``/chat/completions``, a prompt as one user message, a conversation as its
turns) or the completions endpoint (``/completions``, the raw prompt, a conversation's turns as
one text), greedy (temperature 0) unless :meth:`OpenAIBackend.generate` is given a temperature.
The requests' bodies and the reading of the answers, label log-probabilities included, are the wire
format's (:mod:`exampp.llm.openai.wire`); a server that returns no log-probabilities is asked for text
only, which the methods parse.

Requests run on an event loop in a thread of the backend's own (so that an attempt can be stopped
wherever it waits), results in input order, as many at a time as the server sustains, up to
``concurrency`` (:mod:`exampp.llm.concurrency`: that many at first, half as many after a 429, a 503
or a time-out, none while a Retry-After lasts, then more again while the throughput holds); with
``adaptive_concurrency`` off, ``concurrency`` at a time. What is worth asking again is asked again as
the SDK would (:meth:`OpenAIBackend._answer`), each attempt holding a slot only while it is out:
answers 408, 409 and 5xx, time-outs and lost connections, up to ``max_retries``; an overload (429,
503) spends no retry, for as long as the request's attempts could have taken. A server that answers
nothing (every attempt since its last answer timed out) for as long as one request's attempts may take
is given up on, ending every call in progress in one line: each time-out halves the window, so retried
attempts would wait behind all the others and no request would ever spend its retries. :attr:`usage` counts the
completion requests (not the model list asked for at opening), the HTTP attempts beyond the first of
each (retries) and the tokens the server reports; ``max_requests`` caps the completion requests,
refusing a batch that would go past it before any of it is sent. The judge's identity (:attr:`name`)
is the served model's name, with ``+chat`` on the chat endpoint (the server's chat template renders
the prompts there). The API key is read from an environment variable and kept nowhere else: not in
messages, method ids or the store.

A server's answer is untrusted input. ``timeout`` is a wall-clock deadline per attempt, however slowly
the server trickles its bytes, and at most :data:`~exampp.llm.openai.transport.MAX_BODY` bytes of an
answer are read (:class:`~exampp.llm.openai.transport.BoundedClient`). Redirects are refused, naming
where they point, so that grades come from the address given. A whole answer that is malformed
(:class:`~exampp.llm.openai.wire.Malformed`) is asked again, within the same ``max_retries`` as the
SDK's retries and backing off as they do (a proxy between may have answered for a server that was
restarting), then is one :class:`BackendError` naming the server, the model, the field and the attempts
made. The text of an answer is kept up to :data:`CHARS_PER_TOKEN` characters per token asked for: a
longer one is cut, and counted in :attr:`usage` (``cut_answers``).

A book of answers may be attached (:attr:`OpenAIBackend.book`, :mod:`exampp.llm.openai.book`): each
request is looked up there before it is sent (the Batch API's answers, :mod:`exampp.llm.openai.batch`).
"""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast
from urllib.parse import urljoin

import openai

from exampp.collection.ids import valid_text
from exampp.llm import fitting
from exampp.llm.backend import Backend, BackendError, Capability, Labels, NextToken, Usage
from exampp.llm.concurrency import MAX_PAUSE, OVERLOAD, Controller, Limiter, Ticket, retry_after
from exampp.llm.locate import error_reason
from exampp.llm.openai import wire
from exampp.llm.openai.book import AnswerBook
from exampp.llm.openai.transport import HTTP, MAX_BODY, REFUSED, BoundedClient, origin
from exampp.llm.openai.wire import (
    ENDPOINT_PATHS,
    ENDPOINTS,
    MESSAGE_LIMIT,
    Answer,
    Malformed,
    label_scores,
    model_names,
    one_line,
    read_answer,
    shown,
)
from exampp.llm.prefix import leaders
from exampp.llm.prompt import Conversation, Prompt, as_text
from exampp.progress import Tally, notice

PLACEHOLDER_KEY = "no-key"  # the SDK insists on a key; local servers ignore it
_NO_MODEL_LIST = frozenset({404, 405, 501})  # a server without GET /models: the model name is taken on trust
CHARS_PER_TOKEN = 32  # characters of an answer's text kept per token asked for (a token has a few)
_REACH_WAITS = (0.5, 1.0)  # seconds before asking an unreachable server again at opening, then it is an error
RETRY_DELAY = 0.5  # seconds before asking again for a malformed answer, doubling per attempt (the SDK's)
_MAX_RETRY_DELAY = 8.0  # seconds, at most (the SDK's)
_JOIN_TIMEOUT = 10.0  # seconds close() waits for the requests to end, and again for the loop's thread
_ATTEMPTS: contextvars.ContextVar[int] = contextvars.ContextVar("exampp_openai_attempts", default=0)
_OVERLOADS: contextvars.ContextVar[int] = contextvars.ContextVar("exampp_openai_overloads", default=0)
CONCURRENCY = 256  # requests in flight at most by default: a continuous-batching server's batch
PARALLEL_CHUNKS = 8  # chunks graded at once: 8 x 128 pairs keep a 256-request window full as chunks end
_Item = TypeVar("_Item", bound=str | Conversation)  # a prompt
_Result = TypeVar("_Result")


class OpenAIBackend(Backend):
    """A model on an OpenAI-compatible server. Build it with :meth:`open`."""

    capabilities = frozenset({Capability.GENERATE, Capability.LABEL_LOGPROBS})
    # Chunks graded at once (LocalEngine's threads): their requests share the window in flight, so the
    # server stays busy while a chunk's last requests drain and the runner commits.
    parallel_calls = PARALLEL_CHUNKS
    book: AnswerBook | None = None  # the Batch API's answers, while a batch job grades (exampp.grading.batch_engine)
    # Prompts sharing a passage-long prefix wait for the first of them (_each); off only to measure what
    # that saves (benchmarks/served_judge.py --prefix): the requests and answers are the same either way.
    leader_first = True

    def __init__(self, name: str, *, base_url: str | None, api_key_env: str, endpoint: str, concurrency: int,
                 max_requests: int | None, timeout: float, max_retries: int, adaptive_concurrency: bool = True) -> None:
        if endpoint not in ENDPOINTS:
            raise BackendError(f"unknown endpoint {endpoint!r}: use {' or '.join(ENDPOINTS)}")
        if concurrency < 1:
            raise BackendError(f"concurrency must be at least 1, not {concurrency}")
        self.model = name  # the served model's name, as requests give it
        # The judge's identity: the chat endpoint renders prompts through the server's chat template.
        self.name = f"{name}+chat" if endpoint == "chat" else name
        self._served: list[str] = []  # the server's model list, when it has one
        self.endpoint = endpoint
        self.max_requests = max_requests
        self.timeout = timeout
        self.max_retries = max_retries
        self.api_key_env = api_key_env
        self.has_key = bool(os.environ.get(api_key_env))
        self.usage = Usage()
        self._lock = threading.Lock()
        self._reserved = 0  # requests granted from the max_requests budget
        self._counter: Callable[[str], int] = fitting.char_count
        self._prefix: Callable[[str], Callable[[int], str]] = fitting.char_prefix
        # A completion request is retried here (:meth:`_answer`), each attempt holding a slot of the limiter
        # only while it is out, as the SDK would retry it (openai/_base_client.py: _should_retry,
        # _calculate_retry_timeout; read in openai 1.40, 3.54 and 3.57): up to max_retries on 408, 409 and
        # 5xx answers (or x-should-retry: true), time-outs and connection errors, waiting as a Retry-After(-ms)
        # header says, else 0.5 s doubling up to 8 s. A 429 or a 503 is an overload, retried without
        # spending max_retries (the limiter decides how many go). The model list at opening keeps the SDK's
        # retries. The event hook sees every HTTP attempt, so usage.retries counts them. The asynchronous
        # client, because only a task can be stopped at a deadline wherever it waits.
        self._controller = Controller(concurrency, adaptive=adaptive_concurrency)
        self._http = BoundedClient(timeout, MAX_BODY, event_hooks={"request": [_attempt]})
        self.client = openai.AsyncOpenAI(
            base_url=base_url, api_key=os.environ.get(api_key_env) or PLACEHOLDER_KEY, timeout=timeout,
            max_retries=0, http_client=self._http)
        self.url = str(self.client.base_url).rstrip("/")
        self._slots = Limiter(self._controller)  # requests in flight
        self._retrying = Tally(self.url)  # each retry said, grouped: a struggling server is never silent
        # A server that answers nothing: when the earliest attempt unanswered since its last answer began
        # (the controller's clock), and the error once it is given up on (every call in progress ends with it).
        self._silent_since: float | None = None
        self._gone: BackendError | None = None
        self._requests: set[asyncio.Task[Any]] = set()  # the requests of every call in progress
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._loop_thread = threading.Thread(target=self._loop.run_forever, name="exampp-openai", daemon=True)
        self._loop_thread.start()

    @classmethod
    def open(cls, model: str | None = None, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
             endpoint: str = "chat", concurrency: int = CONCURRENCY, adaptive_concurrency: bool = True,
             max_requests: int | None = None, timeout: float = 60.0, max_retries: int = 5, tokenizer: str | None = None,
             max_input_tokens: int | None = None) -> "OpenAIBackend":
        """Connect to the server at ``base_url`` (None: the SDK's, ``$OPENAI_BASE_URL`` or OpenAI's) for
        ``model`` (the served model's name) and read the server's model list.

        ``api_key_env``: the environment variable holding the API key (unset: a placeholder, for local
        servers). ``endpoint``: ``chat`` or ``completions``. ``concurrency``: requests in flight at most,
        as many as the server sustains (``adaptive_concurrency``), else always that many.
        ``max_requests``: at most this many requests (None: no limit). ``timeout``: seconds, wall-clock, before an
        attempt is given up and retried; ``max_retries``: retries per request. Prompts are cut to fit
        the model's input with ``tokenizer`` (a local HF tokenizer or model folder: exact counts;
        the input length from ``max_input_tokens``, else the folder's model config or tokenizer),
        else with ``max_input_tokens`` alone (4 characters a token, estimated), else not at all. Prompts
        cut to another length than the model's own (known from ``tokenizer``) are another judge's
        input: the identity gets ``+max_input_tokens=N``, or ``+max_input_chars=M`` for the estimate.
        """
        if not model:
            raise BackendError("the openai backend needs --model: the served model's name")
        backend = cls(model, base_url=base_url, api_key_env=api_key_env, endpoint=endpoint,
                      concurrency=concurrency, max_requests=max_requests, timeout=timeout, max_retries=max_retries,
                      adaptive_concurrency=adaptive_concurrency)
        try:
            backend._check_model()
            if tokenizer is not None:
                backend._use_tokenizer(tokenizer, max_input_tokens)
            elif max_input_tokens is not None:
                backend.max_input_tokens = max_input_tokens
                backend.name += fitting.input_mark(max_input_tokens, estimated=True)
        except BaseException:
            backend.close()
            raise
        return backend

    def close(self) -> None:
        # Requests in flight are cancelled first, so that an error or Ctrl-C does not wait for their
        # time-outs and retries; then the connections are closed and the loop ends. Closed is marked
        # first: a close cut short (a second Ctrl-C) leaves a loop that nothing may wait on again.
        # Without its thread (ended, or not carried over by a fork) the loop runs nothing, so nothing
        # is waited for.
        if self._closed:
            return
        self._closed = True
        if not self._loop_thread.is_alive():
            return
        try:
            with contextlib.suppress(TimeoutError):  # connections that will not close are left to the process's end
                asyncio.run_coroutine_threadsafe(self._shut_down(), self._loop).result(_JOIN_TIMEOUT)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._loop_thread.join(_JOIN_TIMEOUT)
            if not self._loop_thread.is_alive():
                self._loop.close()

    # --- prompts -----------------------------------------------------------------------------

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as the model reads it: counted with the ``tokenizer`` given, else estimated."""
        return self._counter(text)

    def fit(self, prompt: Prompt, *, context: str, **fields: str) -> str:
        """``prompt`` rendered with ``fields``; with an input length known (:attr:`max_input_tokens`) its
        context is cut at the end so that it fits, else it goes as it is (the server refuses what is too long)."""
        if self.max_input_tokens is None:
            return super().fit(prompt, context=context, **fields)
        return fitting.fit_prompt(prompt, context, fields, max_tokens=self.max_input_tokens, count=self.count_tokens,
                                  prefix=self._prefix(context), usage=self.usage)

    # --- capabilities --------------------------------------------------------------------------

    def generate(self, prompts: Sequence[str | Conversation], *, max_new_tokens: int = 32,
                 temperature: float = 0.0) -> list[str]:
        """Text per prompt (a text or a conversation): greedy at ``temperature`` 0, else the server samples."""
        self._reserve(len(prompts))

        async def one(prompt: str | Conversation) -> str:
            return (await self._complete(prompt, max_new_tokens, logprobs=False, temperature=temperature))[0]

        return self._each(prompts, one)

    def next_token_labels(self, prompts: Sequence[str | Conversation], labels: Labels, *,
                          max_new_tokens: int = 32) -> list[NextToken]:
        """Per prompt: the labels' log-probabilities from the first token's top alternatives, the label of
        the token generated, and the text (always; alone where the server gives no log-probabilities)."""
        self._reserve(len(prompts))

        async def one(prompt: str | Conversation) -> NextToken:
            text, top, first = await self._complete(prompt, max_new_tokens, logprobs=True)
            return label_scores(top, first, labels, text)

        return self._each(prompts, one)

    # --- requests ----------------------------------------------------------------------------

    def _each(self, items: Sequence[_Item], one: Callable[[_Item], Awaitable[_Result]]) -> list[_Result]:
        """``one(item)`` for every item (a prompt), each a task of its own (its HTTP requests wait for a slot
        of the limiter), in input order; the first failure (in input order) cancels the rest. With
        :attr:`leader_first`, a prompt that shares a passage-long prefix with an earlier one of the call
        (:func:`~exampp.llm.prefix.leaders`, a conversation by its text) is sent once that one's request
        has ended, however it ended, so that the server's prefix cache holds the shared part."""
        waits = leaders([as_text(item) for item in items]) if self.leader_first else [None] * len(items)

        async def after(leader: asyncio.Future[_Result], item: _Item) -> _Result:
            await asyncio.wait([leader])  # returns once it has ended: answered, failed or cancelled
            return await one(item)

        async def every() -> list[_Result]:
            if not self._requests:  # a server given up on is asked again by a call made after the calls it ended
                self._gone = self._silent_since = None
            elif self._gone is not None:
                raise self._gone
            tasks: list[asyncio.Task[_Result]] = []
            for item, leader in zip(items, waits):
                tasks.append(asyncio.ensure_future(one(item) if leader is None else after(tasks[leader], item)))
            self._requests.update(tasks)
            try:
                return [await task for task in tasks]
            except asyncio.CancelledError:
                if self._gone is not None:  # cancelled by _give_up: the server answers nothing
                    raise self._gone from None
                raise
            finally:
                for task in tasks:
                    task.cancel()
                self._requests.difference_update(tasks)

        return self.call(every())

    def call(self, work: Coroutine[Any, Any, _Result]) -> _Result:
        """Run ``work`` on the backend's loop and wait for it; a closed backend (or one opened in another
        process, whose loop's thread a fork did not carry over) has no loop to run it."""
        if self._closed or not self._loop_thread.is_alive():
            work.close()
            raise BackendError(f"the openai backend for model {self.model} at {self.url} is closed (or was opened "
                               "in another process)")
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    async def _shut_down(self) -> None:
        """Cancel the requests in flight, wait for them to end, and close the client's connections."""
        tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.client.close()

    async def _complete(self, prompt: str | Conversation, max_new_tokens: int, *, logprobs: bool,
                        temperature: float = 0.0) -> tuple[str, list[tuple[str, float]], str | None]:
        """One request (greedy unless ``temperature``): the text (cut to :data:`CHARS_PER_TOKEN` characters
        a token asked for), the first token's alternatives and the first token (with ``logprobs``, where the
        server reports them; else ``[]`` and None). Counted in :attr:`usage`, each HTTP attempt beyond
        the first a retry."""
        _ATTEMPTS.set(0)
        _OVERLOADS.set(0)
        # The Batch API's answer, where a book is attached (exampp.llm.openai.batch): looked up before any
        # await, so that every prompt of a call is recorded before the first Deferred ends the call.
        booked = self.book.look_up(self, prompt, max_new_tokens, logprobs=logprobs, temperature=temperature) \
            if self.book is not None else None
        try:
            answer = booked if booked is not None else \
                await self._answer(prompt, max_new_tokens, logprobs=logprobs, temperature=temperature)
        finally:
            with self._lock:
                self.usage.requests += 1
                self.usage.retries += max(_ATTEMPTS.get() - 1, 0)
        longest = CHARS_PER_TOKEN * max_new_tokens
        with self._lock:
            self.usage.prompt_tokens += answer.prompt_tokens
            self.usage.completion_tokens += answer.completion_tokens
            self.usage.cut_answers += len(answer.text) > longest
        # A lone surrogate (JSON can escape one) cannot be stored as UTF-8: it becomes U+FFFD here, once.
        return valid_text(answer.text[:longest]), answer.top, answer.first

    async def _answer(self, prompt: str | Conversation, max_new_tokens: int, *, logprobs: bool,
                      temperature: float) -> Answer:
        """A well-formed answer. What is worth asking again is asked again while ``max_retries`` allows:
        a malformed answer, a time-out, a lost connection, an answer 408, 409 or 5xx. An overload (429,
        503) is asked again, its slot given back meanwhile, for as long as the request's attempts could
        have taken (``timeout`` times ``max_retries + 1``), spending no retry: the limiter, not the
        request, decides how many are sent."""
        chat = self.endpoint == "chat"
        refused_since: float | None = None
        while True:
            try:
                response = await self._request(prompt, max_new_tokens, logprobs=logprobs, temperature=temperature)
            except _Retry as retry:
                if retry.overload:
                    now = self._loop.time()
                    refused_since = now if refused_since is None else refused_since
                    if now - refused_since >= self._patience:
                        raise BackendError(f"{self._error(retry.error)}, for {self._patience:g} s to one request "
                                           "(--timeout x (--max-retries + 1)): lower --concurrency, or try again "
                                           "later") from None
                    _OVERLOADS.set(_OVERLOADS.get() + 1)
                    self._retrying.add(f"{_reason(retry.error)}, overloaded")
                    await asyncio.sleep(_retry_delay(retry.retry_after, _OVERLOADS.get()))
                    continue
                made = _ATTEMPTS.get() - _OVERLOADS.get()
                if made > self.max_retries:
                    raise self._error(retry.error) from None
                self._retrying.add(_reason(retry.error))
                await asyncio.sleep(_retry_delay(retry.retry_after, made))
                continue
            refused = response.extensions.get(REFUSED)
            if refused is not None:  # another encoding will not come on asking again
                raise BackendError(f"{self.url} sent the answer for model {self.model} with {refused}, which exampp "
                                   "did not ask for and cannot read: it reads answers uncompressed (or gzip or "
                                   "deflate)")
            if len(response.content) > self._http.max_body:
                raise BackendError(f"{self.url} sent more than {self._http.max_body >> 20} MiB for model "
                                   f"{self.model}: exampp reads at most that much of an answer")
            try:
                return read_answer(response.content, response.headers.get("Content-Type", ""), chat=chat,
                                    logprobs=logprobs)
            except Malformed as exc:
                made = _ATTEMPTS.get() - _OVERLOADS.get()
                if made > self.max_retries:
                    raise BackendError(f"{self.url} sent a malformed answer for model {self.model}: {exc} "
                                       f"({_attempts(made)}; --max-retries sets how many)") from None
                self._retrying.add("malformed answer")
                await asyncio.sleep(_retry_delay(None, made))

    def request_body(self, prompt: str | Conversation, max_new_tokens: int, *, logprobs: bool,
                     temperature: float = 0.0) -> dict[str, Any]:
        """The JSON body of the request for ``prompt`` to :attr:`endpoint` (``/chat/completions`` or
        ``/completions``), as sent."""
        return wire.request_body(self.model, self.endpoint, prompt, max_new_tokens, logprobs=logprobs,
                                 temperature=temperature)

    async def _request(self, prompt: str | Conversation, max_new_tokens: int, *, logprobs: bool,
                       temperature: float) -> Any:
        """The HTTP response of one attempt, made holding a slot of the limiter; :class:`_Retry` for what
        is worth asking again (the limiter hears of an overload or a time-out), BackendError for the rest."""
        body = self.request_body(prompt, max_new_tokens, logprobs=logprobs, temperature=temperature)
        async with self._slots.slot() as ticket:
            try:
                # The body as built, not through the SDK's params transform (a third of a request's CPU).
                response = await self.client.post(ENDPOINT_PATHS[self.endpoint], body=body, cast_to=HTTP.Response)
            except openai.APITimeoutError as exc:
                self._controller.overloaded(ticket)
                self._heard_nothing(ticket, exc)
                raise _Retry(exc) from None
            except openai.APIConnectionError as exc:
                raise _Retry(exc) from None
            except openai.APIStatusError as exc:
                self._silent_since = None  # an answer, if not a welcome one
                wait = retry_after(exc.response.headers)
                if exc.status_code in OVERLOAD:
                    self._controller.overloaded(ticket)
                    raise _Retry(exc, wait, overload=True) from None
                if _retried(exc.response):
                    raise _Retry(exc, wait) from None
                raise self._error(exc) from None
            except openai.APIError as exc:
                raise self._error(exc) from None
        self._silent_since = None
        return response

    @property
    def _patience(self) -> float:
        """Seconds one request's attempts may take: ``timeout`` times ``max_retries + 1``."""
        return self.timeout * (self.max_retries + 1)

    def _heard_nothing(self, ticket: Ticket, timed_out: openai.APITimeoutError) -> None:
        """An attempt (``ticket``) timed out. Once the server has answered nothing for as long as one request's
        attempts may take, it is given up on: each time-out halves the requests in flight, so retried attempts
        wait behind the rest, and no request would spend its retries while a hung server holds the job.
        Raises the error it was given up with, now or before; returns if it is not."""
        since = ticket.started if self._silent_since is None else min(self._silent_since, ticket.started)
        self._silent_since = since
        if self._gone is None and self._controller.clock() - since >= self._patience:
            if _ATTEMPTS.get() - _OVERLOADS.get() > self.max_retries:  # this request spent its attempts: its own error
                self._give_up(self._error(timed_out))
            else:
                self._give_up(BackendError(
                    f"{self.url} answered nothing for model {self.model} for {self._patience:g} s (--timeout "
                    f"{self.timeout:g} x (--max-retries {self.max_retries} + 1)): every attempt since its last answer "
                    "timed out; is the server up and able to answer?"))
        if self._gone is not None:
            raise self._gone from None

    def _give_up(self, error: BackendError) -> None:
        """End every other request of every call in progress with ``error`` (the caller's ends with it too),
        and refuse the calls to come."""
        self._gone = error
        current = asyncio.current_task()
        for task in self._requests:
            if task is not current:
                task.cancel()

    def restore_usage(self, before: Usage) -> None:
        """Set :attr:`usage` back to ``before`` (a copy taken earlier), in place: what an attempt cut short
        counted is taken back."""
        with self._lock:
            for name, value in vars(before).items():
                setattr(self.usage, name, value)

    def _reserve(self, n: int) -> None:
        """Take ``n`` requests from the budget, or refuse the whole batch: a batch cut short is lost
        (the job commits whole chunks), so what it would have spent is kept."""
        with self._lock:
            if self.max_requests is not None and self._reserved + n > self.max_requests:
                left = self.max_requests - self._reserved
                raise BackendError(
                    f"request budget spent: {self._reserved} of --max-requests {self.max_requests} sent, and the "
                    f"next batch needs {n} (only {left} left); what is done so far is kept: run again to go on"
                    + (" (smaller batches, --chunk-size or --concurrency, waste less budget)"
                       if n > self.max_requests else ""))
            self._reserved += n

    # --- opening -------------------------------------------------------------------------------

    def _check_model(self) -> None:
        """BackendError unless the server serves :attr:`name` (a server with no model list is trusted).

        A server that cannot be reached (nothing listens, no such host) is tried again after each of
        :data:`_REACH_WAITS` (no more than ``max_retries`` times), each retry announced, then given up: seconds,
        not the SDK's backoff of half a minute in silence. Other failures keep the SDK's retries."""
        waits = list(_REACH_WAITS[:self.max_retries])
        tried = 0
        while True:
            tried += 1
            try:
                # the SDK types the call an Awaitable: it is a coroutine
                listed = self.call(cast("Coroutine[Any, Any, Any]",
                                         self.client.with_options(max_retries=0).models.with_raw_response.list()))
                break
            except openai.APITimeoutError:
                listed = self._listed_with_retries()  # a slow server: the SDK's retries, as for every request
                break
            except openai.APIConnectionError as exc:
                if not waits:
                    raise self._error(exc, tried) from None
                wait = waits.pop(0)
                notice(f"cannot reach {self.url}{_cause(exc)}; retrying in {wait:g} s ({tried} of "
                       f"{tried + len(waits) + 1} attempts)")
                time.sleep(wait)
            except openai.APIStatusError as exc:
                if exc.status_code in _NO_MODEL_LIST:
                    return
                if not (exc.status_code in (408, 409, 429) or exc.status_code >= 500):
                    raise self._error(exc) from None
                listed = self._listed_with_retries()  # the SDK's retries, as for every request
                break
            except openai.APIError as exc:
                raise self._error(exc) from None
        if listed is None:
            return
        # A name the list lacks is still tried: servers accept aliases they do not list (Ollama's
        # "llama3" for "llama3:latest", Azure's deployment names); a 404 then shows the list.
        self._served = model_names(listed.http_response.content)

    def _listed_with_retries(self) -> Any:
        """The model list asked with the SDK's retries (None: the server has none)."""
        try:
            return self.call(cast("Coroutine[Any, Any, Any]",  # a coroutine, which the SDK types an Awaitable
                                   self.client.with_options(max_retries=self.max_retries).models.with_raw_response
                                   .list()))
        except openai.APIStatusError as exc:
            if exc.status_code in _NO_MODEL_LIST:
                return None
            raise self._error(exc) from None
        except openai.APIError as exc:
            raise self._error(exc) from None

    def _listed(self) -> str:
        if not self._served:
            return ""
        shown = ", ".join(self._served[:10]) + (f", ... ({len(self._served)} in all)" if len(self._served) > 10 else "")
        return f" (the server lists: {shown}; choose one with --model)"

    def _use_tokenizer(self, folder: str, max_input_tokens: int | None) -> None:
        """Count tokens exactly with a local HF tokenizer, and take the input length from its folder."""
        from transformers import AutoConfig, AutoTokenizer

        path = Path(folder).expanduser()
        if not path.is_dir():
            raise BackendError(f"no such tokenizer folder {path}")
        try:
            tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
            config = AutoConfig.from_pretrained(path, local_files_only=True) if (path / "config.json").is_file() \
                else None
        except (OSError, ValueError) as exc:
            raise BackendError(f"cannot load the tokenizer in {path}: {error_reason(exc)}") from None
        own = fitting.max_input_tokens(config, tokenizer)
        limit = own if max_input_tokens is None else max_input_tokens
        if limit is None:
            raise BackendError(f"the tokenizer in {path} names no input length: give max_input_tokens")
        chat = self.endpoint == "chat" and bool(getattr(tokenizer, "chat_template", None))
        self.max_input_tokens = limit
        self.name += fitting.input_mark(limit, own)  # none at the model's own length: a local backend's judge
        self._counter = lambda text: fitting.count_tokens(tokenizer, text, chat=chat)
        self._prefix = lambda context: fitting.tokenizer_prefix(tokenizer, context)

    # --- errors --------------------------------------------------------------------------------

    def _error(self, exc: openai.APIError, tried: int | None = None) -> BackendError:
        """One line the user can act on, naming the server and the model, never the key; ``tried``: the
        attempts made, when this process counted them."""
        if isinstance(exc, openai.APITimeoutError):
            return BackendError(f"{self.url} did not answer for model {self.model} within --timeout {self.timeout:g} s "
                                f"({_attempts(self.max_retries + 1)}; --max-retries sets how many)")
        if isinstance(exc, openai.APIConnectionError):
            if _dropped(exc):
                return BackendError(f"{self.url} closed the connection for model {self.model} before its answer was "
                                    f"whole{_cause(exc)} ({_attempts(self.max_retries + 1)}; --max-retries sets how "
                                    "many)")
            attempts = f"{_attempts(tried)}; " if tried else ""
            return BackendError(f"cannot reach {self.url} for model {self.model}{_cause(exc)} ({attempts}is the "
                                "server running there? --base-url)")
        status = getattr(exc, "status_code", None)
        if status in (401, 403):  # the server's message may quote part of the key: left out
            env = self.api_key_env
            key = f"the API key in ${env}" if self.has_key else f"no API key (${env} is unset)"
            return BackendError(f"{self.url} refused model {self.model} with {key}: HTTP {status} "
                                f"{'Unauthorized' if status == 401 else 'Forbidden'} (--api-key-env names the "
                                "variable to read the key from)")
        location = exc.response.headers.get("Location") if isinstance(exc, openai.APIStatusError) else None
        if (status is not None and 300 <= status < 400 and location is not None
                and isinstance(exc, openai.APIStatusError)):  # a location comes with a status error only
            return self._redirected(status, str(exc.response.request.url), location)
        message = self.server_message(exc)
        said = f": {message}" if message else ""
        if status == 404:
            path = "chat/completions" if self.endpoint == "chat" else "completions"
            return BackendError(f"{self.url} has no model {self.model} or no /{path} endpoint: HTTP 404{said}"
                                f"{self._listed()}")
        return BackendError(f"{self.url} answered HTTP {status} for model {self.model}{said}")

    def _redirected(self, status: int, asked: str, location: str) -> BackendError:
        """Redirects are refused: grades come from the address given, and a redirected POST may arrive as a GET."""
        target = urljoin(asked, location)
        where = origin(target)
        elsewhere = where is None or where != origin(asked)
        return BackendError(f"{self.url} redirected the request for model {self.model} to "
                            f"{shown(target, MESSAGE_LIMIT)} (HTTP {status}): exampp does not follow redirects"
                            f"{' to another address' if elsewhere else ''}; if that is the server, give its address "
                            "as --base-url")

    def server_message(self, exc: openai.APIError) -> str:
        """The server's own error message, on one line, shortened, with the key blotted out and control
        characters escaped."""
        body = exc.body
        if isinstance(body, dict):
            inner = body.get("error")
            body = body.get("message") or (inner.get("message") if isinstance(inner, dict) else inner)
        if not body and isinstance(exc, openai.APIStatusError):  # the SDK's "Error code: 302" says no more than ours
            return ""
        text = one_line(str(body if body else exc.message))
        key = os.environ.get(self.api_key_env)
        if key:
            text = text.replace(key, "***")
        shown = text[:MESSAGE_LIMIT] + ("..." if len(text) > MESSAGE_LIMIT else "")
        # Control characters escaped: a server's text must not drive the terminal it is shown on.
        return "".join(char if char.isprintable() else ascii(char)[1:-1] for char in shown)


def _cause(exc: openai.APIError) -> str:
    """``: <the transport's reason>`` of a connection error (connection refused, no such host), or ""."""
    return f": {one_line(str(exc.__cause__))}" if exc.__cause__ is not None and str(exc.__cause__) else ""


def _dropped(exc: openai.APIConnectionError) -> bool:
    """Whether the server was reached, then dropped the connection before its answer was whole."""
    return isinstance(exc.__cause__, (HTTP.RemoteProtocolError, HTTP.ReadError))


def _reason(exc: openai.APIError) -> str:
    """Why an attempt is made again, in a few words: timed out, connection dropped or failed, HTTP 500."""
    if isinstance(exc, openai.APITimeoutError):
        return "timed out"
    if isinstance(exc, openai.APIConnectionError):
        return "connection dropped" if _dropped(exc) else "connection failed"
    status = getattr(exc, "status_code", None)
    return f"HTTP {status}" if status is not None else type(exc).__name__


def _attempts(n: int) -> str:
    return f"{n} attempt{'s' if n > 1 else ''}"


async def _attempt(_request: Any) -> None:
    """httpx event hook: one more HTTP attempt of the request this task is making."""
    _ATTEMPTS.set(_ATTEMPTS.get() + 1)


class _Retry(Exception):
    """An attempt worth making again: its ``error``, the seconds its Retry-After asked for, and whether
    the server said it had too much to do (429, 503)."""

    def __init__(self, error: openai.APIError, retry_after: float | None = None, *, overload: bool = False) -> None:
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after
        self.overload = overload


def _retried(response: Any) -> bool:
    """Whether the SDK would ask again after ``response``: as its x-should-retry header says, else on 408,
    409 and 5xx."""
    said = response.headers.get("x-should-retry")
    if said in ("true", "false"):
        return said == "true"
    return response.status_code in (408, 409) or response.status_code >= 500


def _retry_delay(retry_after: float | None, attempt: int) -> float:
    """Seconds before the ``attempt``-th retry: as a Retry-After asked (if within
    :data:`~exampp.llm.concurrency.MAX_PAUSE`, as the SDK reads it), else 0.5 s doubling up to 8 s."""
    if retry_after is not None and 0 < retry_after <= MAX_PAUSE:
        return retry_after
    return min(RETRY_DELAY * 2 ** (attempt - 1), _MAX_RETRY_DELAY)

