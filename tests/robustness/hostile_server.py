"""A hostile OpenAI-compatible server on 127.0.0.1, the fixture of the served judge's robustness tests.

:class:`HostileServer` (a thread per connection) answers every request as its ``answer`` function
says (an :class:`Answer`, from the :class:`Request` as received): whole and at once, one byte at a
time (``drip``), or never (``hang``). :func:`good` is a well-formed answer (the model list, or a
completion with the log-probabilities asked for); :data:`MALFORMED` is the table of malformed ones,
each a well-formed 200 spoiled in one way; :func:`huge`, :func:`failing` and :func:`redirect` are the
other modes. It answers one request per connection, so that a spoiled answer spoils no other, and
counts the bytes it wrote (:attr:`HostileServer.sent`), so that a test can tell how much of an
answer was read.

Nothing it does runs unbounded: a drip or a hang ends when the server stops, and the server stops
itself ``lifetime`` seconds after it started should a test leave it running.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "judge"
JSON = (("Content-Type", "application/json"),)


@dataclass(frozen=True)
class Request:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def chat(self) -> bool:
        return self.path.endswith("/chat/completions")

    @property
    def prompt(self) -> str | None:
        """The prompt of a completion request (the last message of a chat request)."""
        if self.chat:
            return self.body["messages"][-1]["content"]
        return self.body.get("prompt")


@dataclass(frozen=True)
class Answer:
    """What to send: ``body`` ``repeat`` times after the status and headers (Content-Length counts
    them all), each byte ``drip`` seconds after the last (0: at once), from the status line on or,
    without ``drip_head``, from the body on; or, with ``hang``, nothing."""

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = JSON
    repeat: int = 1
    drip: float = 0.0
    drip_head: bool = True
    hang: bool = False


def as_json(payload: Any, status: int = 200) -> Answer:
    return Answer(status, json.dumps(payload).encode())


def payload(request: Request, text: str = "4") -> dict[str, Any]:
    """A well-formed completion of ``text`` for ``request``, with the log-probabilities it asks for:
    the first token ``text`` at -0.1, and " 2" at -3 as the alternative."""
    top = [(text, -0.1), (" 2", -3.0)]
    choice: dict[str, Any] = {"index": 0, "finish_reason": "stop", "logprobs": None}
    if request.chat:
        choice["message"] = {"role": "assistant", "content": text}
        if request.body.get("logprobs"):
            choice["logprobs"] = {"content": [{"token": text, "logprob": -0.1, "bytes": list(text.encode()),
                                               "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top]}]}
    else:
        choice["text"] = text
        if request.body.get("logprobs"):
            choice["logprobs"] = {"tokens": [text], "token_logprobs": [-0.1], "top_logprobs": [dict(top)],
                                  "text_offset": [0]}
    return {"id": "cmpl-hostile", "object": "chat.completion" if request.chat else "text_completion",
            "created": 0, "model": MODEL, "choices": [choice],
            "usage": {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8}}


def good(request: Request, text: str = "4") -> Answer:
    """The model list for GET .../models, else a well-formed completion of ``text``."""
    if request.method == "GET":
        return as_json({"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "t"}]})
    return as_json(payload(request, text))


def completions_only(answer: Callable[[Request], Answer]) -> Callable[[Request], Answer]:
    """``answer`` for completion requests; a well-formed model list."""
    return lambda request: good(request) if request.method == "GET" else answer(request)


Place = tuple[str | int, ...]  # a place in an answer's JSON: its keys and indices
CHOICE: Place = ("choices", 0)
CHAT_FIRST: Place = CHOICE + ("logprobs", "content", 0)  # the chat endpoint's report of the first token
LISTED: Place = CHOICE + ("logprobs",)  # the completions endpoint's


def _spoiled(chat_place: Place, place: Place, written: str | None) -> Callable[[Request], Answer]:
    """A well-formed completion with the value at ``chat_place`` (chat endpoint) or ``place`` (completions)
    replaced by the JSON text ``written``, or removed (None)."""

    def answer(request: Request) -> Answer:
        body = payload(request)
        *inner, last = chat_place if request.chat else place
        container = body
        for key in inner:
            container = container[key]
        if written is None:
            del container[last]
            return as_json(body)
        container[last] = "@@"
        return Answer(body=json.dumps(body).replace('"@@"', written).encode())

    return answer


def _both(place: Place, written: str | None) -> Callable[[Request], Answer]:
    return _spoiled(place, place, written)


def _logprob(written: str) -> Callable[[Request], Answer]:
    """The second alternative's log-probability written as ``written``."""
    return _spoiled(CHAT_FIRST + ("top_logprobs", 1, "logprob"), LISTED + ("top_logprobs", 0, " 2"), written)


# Malformed 200 answers to a completion request, by name: each a well-formed answer spoiled one way.
MALFORMED: dict[str, Callable[[Request], Answer]] = {
    "not JSON": lambda request: Answer(body=b'{"choices": [{"text": "4"'),
    "HTML": lambda request: Answer(body=b"<html><body><h1>502 Bad Gateway</h1></body></html>",
                                   headers=(("Content-Type", "text/html"),)),
    "empty body": lambda request: Answer(body=b""),
    "not UTF-8": lambda request: Answer(body=b'{"choices": "\xff\xfe"}'),
    "deeply nested": lambda request: Answer(body=b"[" * 100_000 + b"]" * 100_000),
    "a list": lambda request: Answer(body=b"[" + as_json(payload(request)).body + b"]"),
    "no choices": _both(("choices",), None),
    "empty choices": _both(("choices",), "[]"),
    "choice not an object": _both(CHOICE, '"4"'),
    "no message or text": _spoiled(CHOICE + ("message",), CHOICE + ("text",), None),
    "content an integer": _spoiled(CHOICE + ("message", "content"), CHOICE + ("text",), "4"),
    "token an integer": _spoiled(CHAT_FIRST + ("token",), LISTED + ("tokens", 0), "4"),
    "token null": _spoiled(CHAT_FIRST + ("token",), LISTED + ("tokens", 0), "null"),
    "logprob 1000": _logprob("1000"),
    "logprob 709.5": _logprob("709.5"),
    "logprob NaN": _logprob("NaN"),
    "logprob Infinity": _logprob("Infinity"),
    "logprob 1e999": _logprob("1e999"),
    "logprob huge integer": _logprob("-" + "9" * 400),
    "logprob abc": _logprob('"abc"'),
    "logprob null": _logprob("null"),
    "logprob true": _logprob("true"),
    "top_logprobs a string": _spoiled(CHAT_FIRST + ("top_logprobs",), LISTED + ("top_logprobs",), '"4"'),
    "top_logprobs of numbers": _spoiled(CHAT_FIRST + ("top_logprobs",), LISTED + ("top_logprobs",), "[1, 2]"),
    "logprobs a list": _both(CHOICE + ("logprobs",), "[1, 2]"),
}


def usage_spoiled(written: str) -> Callable[[Request], Answer]:
    """A well-formed completion whose ``usage.prompt_tokens`` is the JSON text ``written`` (which exampp
    only reports)."""
    return _both(("usage", "prompt_tokens"), written)


def huge(size: int, *, declared: bool = True) -> Callable[[Request], Answer]:
    """A 200 of ``size`` bytes of spaces (JSON whitespace), sent in pieces of 64 KiB; ``declared``:
    with its Content-Length (else chunked)."""
    piece = 1 << 16
    headers = JSON if declared else JSON + (("Transfer-Encoding", "chunked"),)
    return lambda request: Answer(body=b" " * piece, repeat=max(1, size // piece), headers=headers)


def failing(status: int = 500) -> Callable[[Request], Answer]:
    """``status`` for every completion request, for ever (the model list is well-formed)."""
    return lambda request: good(request) if request.method == "GET" else as_json(
        {"error": {"message": f"always {status}", "type": "server_error"}}, status)


def redirect(location: str | Callable[[Request], str], status: int = 307) -> Callable[[Request], Answer]:
    """``status`` sending every completion request to ``location`` (a URL, or one made from the request)."""

    def answer(request: Request) -> Answer:
        if request.method == "GET":
            return good(request)
        target = location(request) if callable(location) else location
        return Answer(status, b"", (("Location", target), ("Content-Length", "0")))

    return answer


class _Listening(ThreadingHTTPServer):
    request_queue_size = 1024  # connections waiting to be accepted: a client may open hundreds at once


class HostileServer:
    """Answer each request on 127.0.0.1 as ``answer`` says (default :func:`good`); use as a context
    manager. ``lifetime``: seconds after which it stops itself."""

    def __init__(self, answer: Callable[[Request], Answer] = good, *, lifetime: float = 60.0) -> None:
        self.answer = answer
        self.requests: list[Request] = []
        self.sent = 0  # bytes written to the connections (a client that stops reading stops it, less buffers)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._http = _Listening(("127.0.0.1", 0), _handler(self))
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True)  # quick to stop
        self._timer = threading.Timer(lifetime, self.stop)
        self._timer.daemon = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def __enter__(self) -> "HostileServer":
        self._thread.start()
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """End every drip and hang, and stop listening (once)."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._timer.cancel()
        self._http.shutdown()
        self._http.server_close()

    def completions(self) -> list[Request]:
        """The completion requests received so far."""
        with self._lock:
            return [request for request in self.requests if request.method == "POST"]

    def _wrote(self, n: int) -> None:
        with self._lock:
            self.sent += n

    def _received(self, request: Request) -> Answer:
        with self._lock:
            self.requests.append(request)
        return self.answer(request)


def _handler(server: HostileServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self._serve({})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self._serve(json.loads(self.rfile.read(length) or b"{}"))

        def _serve(self, body: dict[str, Any]) -> None:
            answer = server._received(Request(self.command, self.path, dict(self.headers), body))
            self.close_connection = True  # one request a connection: a spoiled answer spoils no other
            try:
                if answer.hang:
                    server._stop.wait()
                    return
                chunked = ("Transfer-Encoding", "chunked") in answer.headers
                head = f"HTTP/1.1 {answer.status} Hostile\r\n" + "".join(f"{k}: {v}\r\n" for k, v in answer.headers)
                if not chunked and not any(k.lower() == "content-length" for k, _ in answer.headers):
                    head += f"Content-Length: {len(answer.body) * answer.repeat}\r\n"
                head += "Connection: close\r\n\r\n"
                piece = (b"%x\r\n%s\r\n" % (len(answer.body), answer.body)) if chunked else answer.body
                self._send(head.encode(), answer.drip if answer.drip_head else 0.0)
                for _ in range(answer.repeat):
                    if not self._send(piece, answer.drip):
                        return
                if chunked:
                    self._send(b"0\r\n\r\n", answer.drip)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up
                pass

        def _send(self, data: bytes, drip: float) -> bool:
            """Write ``data`` (a byte every ``drip`` seconds); False once the server is stopping."""
            if not drip:
                self.wfile.write(data)
                server._wrote(len(data))
                return not server._stop.is_set()
            for i in range(len(data)):
                self.wfile.write(data[i:i + 1])
                self.wfile.flush()
                server._wrote(1)
                if server._stop.wait(drip):
                    return False
            return True

        def log_message(self, *args: Any) -> None:  # quiet
            pass

    return Handler


def within(seconds: float, work):
    """``work()``'s result or exception and the seconds it took; the test fails if it takes longer than
    ``seconds`` (the work is left to a daemon thread, which the server's end stops)."""
    outcome = {}

    def run():
        try:
            outcome["result"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome["error"] = exc

    started = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    return outcome, time.monotonic() - started
