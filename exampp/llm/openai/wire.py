"""The OpenAI wire format, as exampp speaks it: the JSON body of a completion request, and what exampp reads
of an answer, checked.

A request goes to the chat endpoint (``/chat/completions``, a prompt as one user message, a conversation
as its turns) or the completions endpoint (``/completions``, the raw prompt, a conversation's turns as one
text) (:func:`request_body`). Label log-probabilities come from the first generated token's top
alternatives (``top_logprobs``, :data:`~exampp.defaults.TOP_LOGPROBS` of them, the most servers give) and
are computed as the local backend computes them from its own top tokens (:func:`label_scores`), so a model
served gives the grades and grade probabilities it gives locally. The completions endpoint reports the
alternatives as a map from token text to log-probability: tokens that print alike (SentencePiece's "▁5"
and "5") keep one entry there, while the chat endpoint lists each.

A server's answer is untrusted input (:func:`read_answer`): one that is malformed (not JSON, a field
missing or of the wrong kind, a log-probability that is not a number <= 0) is :class:`Malformed`, saying
what is wrong and where in it. The token counts of ``usage`` are only reported: one that is not a count is
taken as 0. What a message quotes of an answer is short and printable (:func:`shown`, :func:`one_line`).

Nothing here sends a request or needs the ``openai`` package: :mod:`exampp.llm.openai.transport` carries
the bytes, :mod:`exampp.llm.openai.backend` asks and asks again.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any, NamedTuple

from exampp.defaults import TOP_LOGPROBS
from exampp.files.io import excerpt
from exampp.llm.backend import Labels, NextToken, next_token_scores
from exampp.llm.prompt import Conversation, as_messages, as_text

ENDPOINTS = ("chat", "completions")
ENDPOINT_PATHS = {"chat": "/chat/completions", "completions": "/completions"}  # under the base URL
MESSAGE_LIMIT = 300  # characters of a server's error message (or a name it sends) that go into ours
_SPACE_MARKS = str.maketrans({"▁": " ", "Ġ": " "})  # SentencePiece's and byte-level BPE's space in token strings
_ROUNDING = 1e-6  # a log-probability up to this far above 0 is float rounding of a certain token: 0
_MAX_COUNT = 1 << 31  # a token count past this in an answer's usage is not a count
_EXCERPT = 40  # characters of a malformed value quoted in a message
_MISSING = object()  # a key an answer lacks (None stands for null)


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


def request_body(model: str, endpoint: str, prompt: str | Conversation, max_new_tokens: int, *, logprobs: bool,
                 temperature: float = 0.0) -> dict[str, Any]:
    """The JSON body of the request for ``prompt`` to ``model`` at ``endpoint`` (``chat``:
    ``/chat/completions``, ``completions``: ``/completions``), as sent."""
    body: dict[str, Any] = {"model": model, "temperature": temperature, "max_tokens": max_new_tokens}
    if endpoint == "chat":
        body["messages"] = as_messages(prompt)
        if logprobs:
            body.update(logprobs=True, top_logprobs=TOP_LOGPROBS)
    else:
        body["prompt"] = as_text(prompt)
        if logprobs:
            body["logprobs"] = TOP_LOGPROBS
    return body


# --- reading an answer ------------------------------------------------------------------------------


class Malformed(ValueError):
    """What is wrong with an answer, and where in it (``choices[0].message``)."""


class Answer(NamedTuple):
    text: str
    top: list[tuple[str, float]]  # the first token's alternatives: (token, log-probability)
    first: str | None  # the first token
    prompt_tokens: int
    completion_tokens: int


def read_answer(body: bytes, content_type: str, *, chat: bool, logprobs: bool) -> Answer:
    """What exampp uses of a completion's JSON ``body``, checked: the first choice's text; with ``logprobs``
    its first token's alternatives and the token (``[]`` and None where the server reports none); the
    token counts of ``usage`` (0 where absent or not a count). :class:`Malformed` says what is wrong otherwise."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: nested too deep for the parser
        raise Malformed(f"the body is not JSON (Content-Type {shown(content_type)}): "
                        f"{shown(body[:_EXCERPT + 1].decode('utf-8', 'replace'))}") from None
    data = _expect(data, "the body", dict, "an object")
    choices = _expect(data.get("choices", _MISSING), "choices", list, "a list")
    if not choices:
        raise Malformed("choices is empty: there is no completion")
    choice = _expect(choices[0], "choices[0]", dict, "an object")
    usage = data["usage"] if isinstance(data.get("usage"), dict) else {}  # only reported: not one, no counts
    prompt_tokens, completion_tokens = (_count(usage.get(key)) for key in ("prompt_tokens", "completion_tokens"))
    if chat:
        message = _expect(choice.get("message", _MISSING), "choices[0].message", dict, "an object")
        text = _optional(message.get("content", _MISSING), "choices[0].message.content", str, "a string",
                         missing=False) or ""
        top, first = _chat_logprobs(choice) if logprobs else ([], None)
    else:
        text = _expect(choice.get("text", _MISSING), "choices[0].text", str, "a string")
        top, first = _completion_logprobs(choice) if logprobs else ([], None)
    return Answer(text, top, first, prompt_tokens, completion_tokens)


def _chat_logprobs(choice: dict[str, Any]) -> tuple[list[tuple[str, float]], str | None]:
    """The chat endpoint's report of the first token: a list of alternatives."""
    reported = _optional(choice.get("logprobs"), "choices[0].logprobs", dict, "an object")
    content = reported and _optional(reported.get("content"), "choices[0].logprobs.content", list, "a list")
    if not content:
        return [], None
    where = "choices[0].logprobs.content[0]"
    first = _expect(content[0], where, dict, "an object")
    token = _expect(first.get("token", _MISSING), f"{where}.token", str, "a string")
    top = []
    for i, entry in enumerate(_optional(first.get("top_logprobs"), f"{where}.top_logprobs", list, "a list") or ()):
        entry = _expect(entry, f"{where}.top_logprobs[{i}]", dict, "an object")
        top.append((_expect(entry.get("token", _MISSING), f"{where}.top_logprobs[{i}].token", str, "a string"),
                    _logprob(entry.get("logprob", _MISSING), f"{where}.top_logprobs[{i}].logprob")))
    return top, token


def _completion_logprobs(choice: dict[str, Any]) -> tuple[list[tuple[str, float]], str | None]:
    """The completions endpoint's report of the first token: a map from token text to log-probability."""
    reported = _optional(choice.get("logprobs"), "choices[0].logprobs", dict, "an object")
    if not reported:
        return [], None
    tokens = _optional(reported.get("tokens"), "choices[0].logprobs.tokens", list, "a list")
    tops = _optional(reported.get("top_logprobs"), "choices[0].logprobs.top_logprobs", list, "a list")
    where = "choices[0].logprobs.top_logprobs[0]"
    alternatives = _optional(tops[0], where, dict, "an object") if tokens and tops else None
    if not alternatives:
        return [], None
    token = _expect(tokens[0], "choices[0].logprobs.tokens[0]", str, "a string")
    return [(key, _logprob(value, f"{where}[{shown(key)}]")) for key, value in alternatives.items()], token


def _expect(value: Any, where: str, kind: type, what: str) -> Any:
    """``value`` (found at ``where``) if it is a ``kind``, else :class:`Malformed`."""
    if isinstance(value, kind) and not isinstance(value, bool):
        return value
    if value is _MISSING:
        raise Malformed(f"{where} is missing")
    raise Malformed(f"{where} is {shown(value)}, not {what}")


def _optional(value: Any, where: str, kind: type, what: str, *, missing: bool = True) -> Any:
    """None for a value that is null (or absent, where ``missing`` allows), else as :func:`_expect`."""
    if value is None or (missing and value is _MISSING):
        return None
    return _expect(value, where, kind, what)


def _logprob(value: Any, where: str) -> float:
    """A log-probability: a number <= 0, one a rounding error above 0 read as 0 (-Infinity, which Python's
    json writes for log(0), is a probability of 0)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an integer too long for a float
            number = math.nan
        if number <= _ROUNDING:  # not NaN, not +Infinity
            return min(number, 0.0)
    raise Malformed(f"{where} is {'missing' if value is _MISSING else shown(value)}, not a log-probability "
                    "(a number <= 0)")


def _count(value: Any) -> int:
    """A token count of ``usage``; 0 for anything else (absent, null, a float, negative...): exampp only
    reports these counts, so one that is wrong is no reason to stop grading."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _MAX_COUNT:
        return value
    return 0


def model_names(body: bytes) -> list[str]:
    """The names of a model list (none where it is not one: the list serves messages only), each one a
    name could be typed as, printable and short."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return []
    models = data.get("data") if isinstance(data, dict) else None
    return [model["id"] for model in models if isinstance(model, dict) and isinstance(model.get("id"), str)
            and model["id"].isprintable() and len(model["id"]) <= MESSAGE_LIMIT] if isinstance(models, list) else []


# --- quoting a server in a message --------------------------------------------------------------------


def shown(value: Any, limit: int = _EXCERPT) -> str:
    """A short excerpt of a JSON value for a message: a string quoted (control characters escaped), other
    scalars as JSON writes them, each cut after ``limit`` characters; an object or a list by its kind."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return excerpt(value, limit)
    text = json.dumps(value)
    return text if len(text) <= limit else text[:limit] + "..."


def one_line(text: str) -> str:
    """``text`` with its runs of white space (line breaks included) as one space."""
    return " ".join(text.split())
