"""A loopback stub of the OpenAI Batch API (``/v1/files``, ``/v1/batches``) for tests, without a model.

:class:`BatchServer` listens on 127.0.0.1 and answers, on the HTTP side of :mod:`exampp.testing.loopback`,
what exampp's ``openai`` backend and its Batch API client use: ``GET /v1/models``, ``POST
/v1/chat/completions`` and ``/v1/completions`` (direct requests), ``POST /v1/files`` (the SDK's multipart
upload, parsed as multipart), ``GET /v1/files/{id}/content``, ``POST /v1/batches`` and ``GET
/v1/batches/{id}``. Each request (direct, or a line of a batch) is answered as
:mod:`exampp.testing.batching_server` answers one: a grade digit chosen by the prompt's CRC-32, with the
digits as its top alternatives; or by ``reply(body)``, a text.

A batch stays ``in_progress`` while :attr:`hold` is set; the first look at it after that ends it:
``completed`` with every line answered, but for the lines ``fail(body)`` gives a status (those go to the
error file: a 500 as a response, 0 as a line without one), and with ``expire`` only the first half of
the lines answered and the batch ``expired``; with ``refuse`` (a message) the batch ``failed`` as a
whole. ``corrupt(line)`` may rewrite an output line (to test malformed ones, or add lines); with
``no_output`` a completed batch names no output file. A batch says it was created when it was and
expires 24 hours later, unless ``expires_at`` (a Unix time) says otherwise; ``bloat`` pads a batch
object with that many bytes of metadata. It records the batches created (:attr:`batches`) and the
direct requests (:attr:`direct`).
"""
from __future__ import annotations

import email.parser
import email.policy
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from exampp.testing.batching_server import digit_completion
from exampp.testing.loopback import Loopback, envelope, error_body, json_handler, read_body


class BatchServer(Loopback):
    """Serve ``name`` directly and through the Batch API on 127.0.0.1; use as a context manager."""

    def __init__(self, name: str = "judge", *, reply: Callable[[dict[str, Any]], str] | None = None) -> None:
        self.name = name
        self.reply = reply
        self.hold = threading.Event()
        self.fail: Callable[[dict[str, Any]], int | None] = lambda body: None
        self.corrupt: Callable[[bytes], bytes] = lambda line: line
        self.expire = False
        self.refuse: str | None = None  # a message: batches fail as a whole, with it as their error
        self.no_output = False
        self.expires_at: float | None = None
        self.bloat = 0
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.direct: list[dict[str, Any]] = []  # the bodies of direct completion requests
        self._lock = threading.Lock()
        super().__init__(_batch_handler)

    def reset(self) -> None:
        """No batches, files or requests seen; no hold, failures, corruption or expiry."""
        with self._lock:
            self.files.clear()
            self.batches.clear()
            self.direct.clear()
        self.hold.clear()
        self.fail, self.corrupt, self.expire, self.refuse = (lambda body: None), (lambda line: line), False, None
        self.no_output, self.expires_at, self.bloat = False, None, 0

    def lines(self, batch_id: str) -> list[dict[str, Any]]:
        """The request lines of a batch's input file."""
        return [json.loads(line) for line in self.files[self.batches[batch_id]["input_file_id"]].splitlines()]

    # --- answering ---------------------------------------------------------------------------------

    def complete(self, path: str, body: dict[str, Any]) -> tuple[int, dict]:
        """The answer to one completion request, direct or a batch's line."""
        if body.get("model") != self.name:
            return 404, error_body(f"The model `{body.get('model')}` does not exist.", "NotFoundError", 404)
        chat = path.endswith("/chat/completions")
        prompt = "\n".join(m["content"] for m in body["messages"]) if chat else body["prompt"]
        if self.reply is not None:
            text = self.reply(body)
            usage = {"prompt_tokens": len(prompt.split()), "completion_tokens": 1, "total_tokens": 0}
            return 200, envelope(self.name, text, chat, {"index": 0, "finish_reason": "stop", "logprobs": None}, usage)
        top = (body.get("top_logprobs") if body.get("logprobs") else None) if chat else body.get("logprobs")
        return 200, digit_completion(self.name, prompt, len(prompt.split()), chat, top)

    def answer(self, method: str, path: str, headers: Any, body: Any) -> tuple[int, dict[str, str], dict | bytes]:
        path = path.split("?")[0]
        if method == "GET" and path == "/v1/models":
            return 200, {}, {"object": "list", "data": [{"id": self.name, "object": "model", "created": 0,
                                                         "owned_by": "exampp-tests"}]}
        if method == "POST" and path.endswith(("/chat/completions", "/completions")):
            with self._lock:
                self.direct.append(body)
            status, payload = self.complete(path, body)
            return status, {}, payload
        if method == "POST" and path == "/v1/files":
            return 200, {}, self._upload(headers, body)
        if method == "POST" and path == "/v1/batches":
            return self._create(body)
        if method == "GET" and path.startswith("/v1/batches/"):
            return self._retrieve(path.rsplit("/", 1)[1])
        if method == "GET" and path.startswith("/v1/files/") and path.endswith("/content"):
            file_id = path.split("/")[3]
            if file_id not in self.files:
                return 404, {}, error_body(f"no file {file_id}", "NotFoundError", 404)
            return 200, {"Content-Type": "application/octet-stream"}, self.files[file_id]
        return 404, {}, error_body(f"no route {method} {path}", "NotFoundError", 404)

    def _upload(self, headers: Any, data: bytes) -> dict:
        # The SDK's multipart/form-data body, read as a MIME message: the part named "file" is the file.
        head = f"Content-Type: {headers['Content-Type']}\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + data)
        parts = {part.get_param("name", header="content-disposition"): part for part in message.iter_parts()}
        assert parts["purpose"].get_content() == "batch", parts["purpose"].get_content()
        with self._lock:
            file_id = f"file-{len(self.files)}"
            payload = parts["file"].get_payload(decode=True)
            assert isinstance(payload, bytes), payload  # a single part: its bytes
            self.files[file_id] = payload
        return {"id": file_id, "object": "file", "bytes": len(self.files[file_id]), "created_at": 0,
                "filename": parts["file"].get_filename(), "purpose": "batch", "status": "processed"}

    def _create(self, body: dict[str, Any]) -> tuple[int, dict[str, str], dict]:
        if body.get("input_file_id") not in self.files or body.get("completion_window") != "24h":
            return 400, {}, error_body("bad batch", "invalid_request_error", 400)
        with self._lock:
            batch_id = f"batch_{len(self.batches)}"
            now = int(time.time())
            self.batches[batch_id] = {"id": batch_id, "object": "batch", "endpoint": body["endpoint"],
                                      "input_file_id": body["input_file_id"], "completion_window": "24h",
                                      "status": "validating", "output_file_id": None, "error_file_id": None,
                                      "created_at": now, "expires_at": now + 24 * 3600,
                                      "metadata": body.get("metadata"), "errors": None,
                                      "request_counts": {"total": 0, "completed": 0, "failed": 0}}
            return 200, {}, dict(self.batches[batch_id])

    def _retrieve(self, batch_id: str) -> tuple[int, dict[str, str], dict]:
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return 404, {}, error_body(f"no batch {batch_id}", "NotFoundError", 404)
            if batch["status"] in ("validating", "in_progress"):
                if self.hold.is_set():
                    batch["status"] = "in_progress"
                else:
                    self._run(batch)
            shown = dict(batch)
            if self.expires_at is not None:
                shown["expires_at"] = self.expires_at
            if self.bloat:
                shown["metadata"] = {"padding": "x" * self.bloat}
            return 200, {}, shown

    def _run(self, batch: dict[str, Any]) -> None:
        if self.refuse is not None:
            batch["status"] = "failed"
            batch["errors"] = {"object": "list", "data": [{"code": "invalid", "message": self.refuse, "line": 1}]}
            return
        lines = [json.loads(line) for line in self.files[batch["input_file_id"]].splitlines()]
        answered = lines[:len(lines) // 2] if self.expire else lines
        output: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for n, line in enumerate(answered):
            status = self.fail(line["body"])
            if status == 0:
                errors.append({"id": f"req_{n}", "custom_id": line["custom_id"], "response": None,
                               "error": {"code": "server_error", "message": "injected"}})
                continue
            if status is None:
                status, payload = self.complete(line["url"], line["body"])
            else:
                payload = error_body("injected", "InjectedError", status)
            record = {"id": f"req_{n}", "custom_id": line["custom_id"],
                      "response": {"status_code": status, "request_id": f"r{n}", "body": payload}, "error": None}
            (output if status == 200 else errors).append(record)
        for expired in lines[len(answered):]:
            errors.append({"id": "req_x", "custom_id": expired["custom_id"], "response": None,
                           "error": {"code": "batch_expired", "message": "This request could not be executed "
                                                                         "before the completion window expired."}})
        for records, name in ((output, "output_file_id"), (errors, "error_file_id")):
            if records and not (self.no_output and name == "output_file_id"):
                file_id = f"file-{len(self.files)}"
                self.files[file_id] = b"".join(self.corrupt((json.dumps(r) + "\n").encode()) for r in records)
                batch[name] = file_id
        batch["status"] = "expired" if self.expire else "completed"
        batch["request_counts"] = {"total": len(lines), "completed": len(output), "failed": len(errors)}


def _batch_handler(server: BatchServer) -> type:
    base = json_handler(server)

    class Handler(base):  # type: ignore[misc, valid-type]
        def do_POST(self) -> None:
            data = read_body(self)
            if data is None:
                return
            if self.headers.get("Content-Type", "").startswith("multipart/"):
                self._serve("POST", data)
            else:
                self._serve("POST", json.loads(data or b"{}"))

        def _serve(self, method: str, body: Any) -> None:
            status, headers, payload = server.answer(method, self.path, self.headers, body)
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", headers.pop("Content-Type", "application/json"))
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler
