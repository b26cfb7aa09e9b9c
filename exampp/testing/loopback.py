"""The HTTP side the loopback test servers share: a server on 127.0.0.1 in a thread of its own
(:class:`Loopback`), whose requests a handler made by :func:`json_handler` hands, JSON body read, to the
server's ``answer``, and the JSON bodies an OpenAI-compatible server answers with (:func:`envelope`,
:func:`error_body`).
"""
from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol


class Answering(Protocol):
    """A server that answers a request: its status, extra headers and body (JSON, or bytes as they are)."""

    def answer(self, method: str, path: str, headers: Any, body: Any) -> tuple[int, dict[str, str], Any]: ...


class Loopback:
    """An HTTP server on 127.0.0.1 (``port`` 0: a free one) whose requests ``handler(self)`` answers,
    in a thread of its own while the ``with`` block runs: the test servers' common part.

    :param handler: makes the request handler class from the server (:func:`json_handler`)
    :param port: the port to listen on; 0 takes a free one
    """

    def __init__(self, handler: Callable[[Any], type[BaseHTTPRequestHandler]], port: int = 0) -> None:
        self._http = _QuietServer(("127.0.0.1", port), handler(self))
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        """The port it listens on."""
        return self._http.server_address[1]

    @property
    def url(self) -> str:
        """The base URL an OpenAI client is given."""
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()


def read_body(handler: BaseHTTPRequestHandler) -> bytes | None:
    """The request's whole body (``Content-Length`` bytes), or None when the client went before all of
    it came (a killed process): such a request was never made, so a server neither records nor answers it.

    :param handler: the handler of the request being read
    """
    length = int(handler.headers.get("Content-Length") or 0)
    data = handler.rfile.read(length)
    if len(data) < length:
        handler.close_connection = True
        return None
    return data


def envelope(name: str, text: str, chat: bool, choice: dict[str, Any], usage: dict[str, int]) -> dict:
    """The response body of a chat completion (the text as the assistant's message) or a completion.

    :param name: the model's name
    :param text: the answer's text
    :param chat: a chat completion, else a completion
    :param choice: the choice's other fields (``index``, ``finish_reason``, ``logprobs``)
    :param usage: the token counts
    """
    if chat:
        return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": name,
                "choices": [{**choice, "message": {"role": "assistant", "content": text}}], "usage": usage}
    return {"id": "cmpl-test", "object": "text_completion", "created": 0, "model": name,
            "choices": [{**choice, "text": text}], "usage": usage}


def error_body(message: str, kind: str, code: int) -> dict:
    """The body of an error answer, as OpenAI's API gives it.

    :param message: what went wrong
    :param kind: the error's type
    :param code: the HTTP status
    """
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up (exampp closes its connections at once on an error) is no server error.
    Hundreds of connections may wait to be accepted (a client opens one per request in flight; 5, the
    default, would refuse them)."""

    request_queue_size = 1024

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def json_handler(server: Answering) -> type[BaseHTTPRequestHandler]:
    """The request handler class of a :class:`Loopback` server: each request's JSON body to
    ``server.answer``, its answer back as JSON.

    :param server: the server that answers
    """
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects

        def do_GET(self) -> None:
            self._serve("GET", {})

        def do_POST(self) -> None:
            data = read_body(self)
            if data is not None:
                self._serve("POST", json.loads(data or b"{}"))

        def _serve(self, method: str, body: Any) -> None:
            status, headers, payload = server.answer(method, self.path, self.headers, body)
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up on a slow answer
                self.close_connection = True

        def log_message(self, *args: Any) -> None:  # quiet
            pass

    return Handler
