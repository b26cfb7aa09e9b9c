"""OpenAI-compatible servers (``--backend openai``): vLLM, Ollama, TGI, llama.cpp, OpenAI, Azure, OpenRouter...

:class:`OpenAIBackend` talks to a server through the official ``openai`` SDK, one request per prompt:
the chat endpoint (``/chat/completions``, a prompt as one user message, a conversation as its
turns) or the completions endpoint (``/completions``, the raw prompt, a conversation's turns as
one text), greedy (temperature 0) unless :meth:`OpenAIBackend.generate` is given a temperature.

Label log-probabilities come from the first generated token's top alternatives (``top_logprobs``,
:data:`~exampp.defaults.TOP_LOGPROBS` of them, the most servers give) and are computed as the local
backend computes them from its own top tokens (:func:`label_scores`), so a model served here gives
the grades and grade probabilities it gives locally. The completions endpoint reports the
alternatives as a map from token text to log-probability: tokens that print alike (SentencePiece's
"▁5" and "5") keep one entry there, while the chat endpoint lists each. A server that returns no
log-probabilities is asked for text only, which the methods parse.

Requests run ``concurrency`` at a time in a thread pool, results in input order. The SDK retries
what is worth retrying. :attr:`usage` counts the completion requests (not the model list asked for
at opening), the HTTP attempts beyond the first of each (retries) and the tokens the server reports;
``max_requests`` caps the completion requests, refusing a batch that would go past it before any of
it is sent. The judge's identity (:attr:`name`) is the served model's name, with ``+chat`` on the
chat endpoint (the server's chat template renders the prompts there). The API key is read
from an environment variable and kept nowhere else: not in messages, method ids or the store.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import openai

from exampp.defaults import TOP_LOGPROBS
from exampp.llm import fitting
from exampp.llm.backend import Backend, BackendError, Capability, Labels, NextToken, Usage, next_token_scores
from exampp.llm.locate import error_reason
from exampp.llm.prompt import Conversation, Prompt, as_messages, as_text

ENDPOINTS = ("chat", "completions")
PLACEHOLDER_KEY = "no-key"  # the SDK insists on a key; local servers ignore it
_NO_MODEL_LIST = frozenset({404, 405, 501})  # a server without GET /models: the model name is taken on trust
_SPACE_MARKS = str.maketrans({"▁": " ", "Ġ": " "})  # SentencePiece's and byte-level BPE's space in token strings
_MESSAGE_LIMIT = 300  # characters of a server's error message that go into ours


def token_text(token: str) -> str:
    """A token string as a server reports it, read as text: the vocabularies' space marks as spaces."""
    return token.translate(_SPACE_MARKS)


def label_scores(top: Iterable[tuple[str, float]], first: str | None, labels: Labels, text: str) -> NextToken:
    """What :meth:`HFBackend.next_token_labels` computes (:func:`next_token_scores`), from a server's
    report of the first token: ``top`` its alternatives (token string, log-probability), ``first``
    the token generated, ``text`` the whole generation; no alternatives: no log-probabilities (the
    text decides)."""
    top = list(top)
    if not top or first is None:
        return NextToken(None, None, text)
    return next_token_scores([(token_text(token), logprob) for token, logprob in top], token_text(first), labels, text)


class OpenAIBackend(Backend):
    """A model on an OpenAI-compatible server. Build it with :meth:`open`."""

    capabilities = frozenset({Capability.GENERATE, Capability.LABEL_LOGPROBS})

    def __init__(self, name: str, *, base_url: str | None, api_key_env: str, endpoint: str, concurrency: int,
                 max_requests: int | None, timeout: float, max_retries: int) -> None:
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
        self._thread = threading.local()  # HTTP attempts of the request this thread is making
        self._counter: Callable[[str], int] = fitting.char_count
        self._prefix: Callable[[str], Callable[[int], str]] = fitting.char_prefix
        # Retries are the SDK's own (openai/_base_client.py: SyncAPIClient's request loop, _should_retry,
        # _calculate_retry_timeout; read in openai 1.40 and 3.54): up to max_retries on 408, 409, 429 and 5xx
        # answers (or x-should-retry: true), time-outs and connection errors, waiting as a Retry-After(-ms)
        # header says (up to 60 s in 1.40, 2 min in 3.54), else 0.5 s doubling up to 8 s, less up to 25 %
        # jitter. The event hook sees every HTTP attempt, so usage.retries counts them.
        self._client = openai.OpenAI(
            base_url=base_url, api_key=os.environ.get(api_key_env) or PLACEHOLDER_KEY, timeout=timeout,
            max_retries=max_retries, http_client=openai.DefaultHttpxClient(event_hooks={"request": [self._attempt]}))
        self.url = str(self._client.base_url).rstrip("/")
        self._pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="exampp-openai")

    @classmethod
    def open(cls, model: str | None = None, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
             endpoint: str = "chat", concurrency: int = 8, max_requests: int | None = None, timeout: float = 60.0,
             max_retries: int = 5, tokenizer: str | None = None,
             max_input_tokens: int | None = None) -> "OpenAIBackend":
        """Connect to the server at ``base_url`` (None: the SDK's, ``$OPENAI_BASE_URL`` or OpenAI's) for
        ``model`` (the served model's name) and read the server's model list.

        ``api_key_env``: the environment variable holding the API key (unset: a placeholder, for local
        servers). ``endpoint``: ``chat`` or ``completions``. ``concurrency``: requests in flight at once.
        ``max_requests``: at most this many requests (None: no limit). ``timeout``: seconds before an
        attempt is given up and retried; ``max_retries``: retries per request. Prompts are cut to fit
        the model's input with ``tokenizer`` (a local HF tokenizer or model folder: exact counts;
        the input length from ``max_input_tokens``, else the folder's model config or tokenizer),
        else with ``max_input_tokens`` alone (4 characters a token, estimated), else not at all.
        """
        if not model:
            raise BackendError("the openai backend needs --model: the served model's name")
        backend = cls(model, base_url=base_url, api_key_env=api_key_env, endpoint=endpoint,
                      concurrency=concurrency, max_requests=max_requests, timeout=timeout, max_retries=max_retries)
        try:
            backend._check_model()
            if tokenizer is not None:
                backend._use_tokenizer(tokenizer, max_input_tokens)
            else:
                backend.max_input_tokens = max_input_tokens
        except BaseException:
            backend.close()
            raise
        return backend

    def close(self) -> None:
        # The client first: closing it aborts requests in flight, so an error or Ctrl-C does not wait
        # for their time-outs and retries.
        self._client.close()
        self._pool.shutdown(wait=False, cancel_futures=True)

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
                                  prefix=self._prefix(context))

    # --- capabilities --------------------------------------------------------------------------

    def generate(self, prompts: Sequence[str | Conversation], *, max_new_tokens: int = 32,
                 temperature: float = 0.0) -> list[str]:
        """Text per prompt (a text or a conversation): greedy at ``temperature`` 0, else the server samples."""
        self._reserve(len(prompts))
        return list(self._pool.map(
            lambda prompt: self._complete(prompt, max_new_tokens, logprobs=False, temperature=temperature)[0],
            prompts))

    def next_token_labels(self, prompts: Sequence[str], labels: Labels, *,
                          max_new_tokens: int = 32) -> list[NextToken]:
        """Per prompt: the labels' log-probabilities from the first token's top alternatives, the label of
        the token generated, and the text (always; alone where the server gives no log-probabilities)."""
        self._reserve(len(prompts))

        def one(prompt: str) -> NextToken:
            text, top, first = self._complete(prompt, max_new_tokens, logprobs=True)
            return label_scores(top, first, labels, text)

        return list(self._pool.map(one, prompts))

    # --- requests ----------------------------------------------------------------------------

    def _complete(self, prompt: str | Conversation, max_new_tokens: int, *, logprobs: bool, temperature: float = 0.0
                  ) -> tuple[str, list[tuple[str, float]], str | None]:
        """One request (greedy unless ``temperature``): the text, the first token's alternatives and the
        first token (with ``logprobs``, where the server reports them; else ``[]`` and None)."""
        if self.endpoint == "chat":
            options: dict[str, Any] = {"logprobs": True, "top_logprobs": TOP_LOGPROBS} if logprobs else {}
            choice = self._request(self._client.chat.completions.create, max_new_tokens, temperature,
                                   messages=as_messages(prompt), **options)
            text = choice.message.content or ""
            first = choice.logprobs.content[0] if logprobs and choice.logprobs and choice.logprobs.content else None
            if first is None:
                return text, [], None
            return text, [(alt.token, alt.logprob) for alt in first.top_logprobs or ()], first.token
        options = {"logprobs": TOP_LOGPROBS} if logprobs else {}
        choice = self._request(self._client.completions.create, max_new_tokens, temperature, prompt=as_text(prompt),
                               **options)
        reported = choice.logprobs if logprobs else None
        if not (reported and reported.tokens and reported.top_logprobs and reported.top_logprobs[0]):
            return choice.text, [], None
        return choice.text, list(reported.top_logprobs[0].items()), reported.tokens[0]

    def _request(self, create: Callable[..., Any], max_new_tokens: int, temperature: float, **body: Any) -> Any:
        """The first choice of one API call (with the SDK's retries), counted in :attr:`usage`."""
        self._thread.attempts = 0
        try:
            response = create(model=self.model, temperature=temperature, max_tokens=max_new_tokens, **body)
        except openai.APIError as exc:
            raise self._error(exc) from None
        finally:
            with self._lock:
                self.usage.requests += 1
                self.usage.retries += max(self._thread.attempts - 1, 0)
        if response.usage is not None:
            with self._lock:
                self.usage.prompt_tokens += response.usage.prompt_tokens or 0
                self.usage.completion_tokens += response.usage.completion_tokens or 0
        if not response.choices:
            raise BackendError(f"{self.url} answered without a completion for model {self.model}")
        return response.choices[0]

    def _attempt(self, _request: Any) -> None:
        """httpx event hook: one more HTTP attempt by this thread (it runs in the thread that sends)."""
        self._thread.attempts = getattr(self._thread, "attempts", 0) + 1

    def _reserve(self, n: int) -> None:
        """Take ``n`` requests from the budget, or refuse the whole batch: a batch cut short is lost
        (the job commits whole chunks), so what it would have spent is kept."""
        with self._lock:
            if self.max_requests is not None and self._reserved + n > self.max_requests:
                left = self.max_requests - self._reserved
                raise BackendError(
                    f"request budget spent: {self._reserved} of --max-requests {self.max_requests} sent, and the "
                    f"next batch needs {n} (only {left} left); what is done so far is kept: run again to go on"
                    + (" (smaller batches, --chunk-size or --concurrency, waste less budget)" if n > self.max_requests else ""))
            self._reserved += n

    # --- opening -------------------------------------------------------------------------------

    def _check_model(self) -> None:
        """BackendError unless the server serves :attr:`name` (a server with no model list is trusted)."""
        try:
            served = [model.id for model in self._client.models.list()]
        except openai.APIStatusError as exc:
            if exc.status_code in _NO_MODEL_LIST:
                return
            raise self._error(exc) from None
        except openai.APIError as exc:
            raise self._error(exc) from None
        # A name the list lacks is still tried: servers accept aliases they do not list (Ollama's
        # "llama3" for "llama3:latest", Azure's deployment names); a 404 then shows the list.
        self._served = served

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
        limit = max_input_tokens or fitting.max_input_tokens(config, tokenizer)
        if limit is None:
            raise BackendError(f"the tokenizer in {path} names no input length: give max_input_tokens")
        chat = self.endpoint == "chat" and bool(getattr(tokenizer, "chat_template", None))
        self.max_input_tokens = limit
        self._counter = lambda text: fitting.count_tokens(tokenizer, text, chat=chat)
        self._prefix = lambda context: fitting.tokenizer_prefix(tokenizer, context)

    # --- errors --------------------------------------------------------------------------------

    def _error(self, exc: openai.APIError) -> BackendError:
        """One line the user can act on, naming the server and the model, never the key."""
        if isinstance(exc, openai.APITimeoutError):
            tries = self.max_retries + 1
            return BackendError(f"{self.url} did not answer for model {self.model} within --timeout {self.timeout:g} s "
                                f"({tries} attempt{'s' if tries > 1 else ''}; --max-retries sets how many)")
        if isinstance(exc, openai.APIConnectionError):
            cause = f": {_one_line(str(exc.__cause__))}" if exc.__cause__ is not None and str(exc.__cause__) else ""
            return BackendError(f"cannot reach {self.url} for model {self.model}{cause} (is the server running "
                                "there? --base-url)")
        status = getattr(exc, "status_code", None)
        if status in (401, 403):  # the server's message may quote part of the key: left out
            env = self.api_key_env
            key = f"the API key in ${env}" if self.has_key else f"no API key (${env} is unset)"
            return BackendError(f"{self.url} refused model {self.model} with {key}: HTTP {status} "
                                f"{'Unauthorized' if status == 401 else 'Forbidden'} (--api-key-env names the "
                                "variable to read the key from)")
        message = self._server_message(exc)
        said = f": {message}" if message else ""
        if status == 404:
            path = "chat/completions" if self.endpoint == "chat" else "completions"
            return BackendError(f"{self.url} has no model {self.model} or no /{path} endpoint: HTTP 404{said}{self._listed()}")
        return BackendError(f"{self.url} answered HTTP {status} for model {self.model}{said}")

    def _server_message(self, exc: openai.APIError) -> str:
        """The server's own error message, on one line, shortened, with the key blotted out."""
        body = exc.body
        if isinstance(body, dict):
            inner = body.get("error")
            body = body.get("message") or (inner.get("message") if isinstance(inner, dict) else inner)
        text = _one_line(str(body if body else exc.message))
        key = os.environ.get(self.api_key_env)
        if key:
            text = text.replace(key, "***")
        return text if len(text) <= _MESSAGE_LIMIT else text[:_MESSAGE_LIMIT] + "..."


def _one_line(text: str) -> str:
    return " ".join(text.split())


BACKEND = OpenAIBackend
