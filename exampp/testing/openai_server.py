"""A real OpenAI-compatible HTTP server for tests, backed by a local model through :class:`HFBackend`.

:class:`OpenAIServer` listens on a free port of 127.0.0.1 (a thread per connection) and speaks what
exampp's ``openai`` backend uses, as vLLM speaks it: ``GET /v1/models``, ``POST /v1/chat/completions``
(one user message; ``logprobs``/``top_logprobs``) and ``POST /v1/completions`` (``logprobs`` = n; the
alternatives as a map from token text to log-probability, so tokens that print alike keep one
entry, the later one). Decoding is greedy; token strings are ``tokenizer.decode([id])``; the first
token's log-probabilities are the local backend's own (:meth:`HFBackend.first_token_logprobs`), later
tokens' come from generation.

Without a model it answers from canned replies instead: ``reply(seen)`` gives the text of the
answer to a request (tests use it to send malformed, truncated or empty answers). Run as a module,
``python -m exampp.testing.openai_server --replies FILE``, it serves the canned replies of a JSONL file
(``{"match": text?, "reply": text}``: the first rule whose ``match`` occurs in the request's last
user message answers; a rule without ``match`` answers anything) until it is stopped, for the
README's demonstration of ``exampp bank generate`` and ``exampp exam generate``.

It records every request (:attr:`OpenAIServer.requests`) and can be told to misbehave:
``faults[n]`` answers the n-th completion request (counted from 0) with an HTTP status (429 with
Retry-After, 500...) or answers it only after a delay; ``delay`` slows every completion request;
``api_key`` makes it answer 401 to requests without that key; ``list_models=False`` leaves out the
model list (404); ``logprobs=False`` ignores requests for log-probabilities, as some servers do.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from exampp.testing.loopback import Loopback, envelope, error_body, json_handler

if TYPE_CHECKING:
    import torch


_LOGPROB_FLOOR = -9999.0  # vLLM's floor: JSON has no -inf


@dataclass(frozen=True)
class Fault:
    """How to answer one request: with ``status`` (and ``headers``), or normally after ``sleep`` seconds."""

    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    sleep: float = 0.0


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    body: dict[str, Any]
    status: int  # what it answered; 0 while it is being answered

    @property
    def prompt(self) -> str | None:
        """The prompt of a completion request (the last message of a chat request)."""
        if "messages" in self.body:
            return self.body["messages"][-1]["content"]
        return self.body.get("prompt")

    @property
    def messages(self) -> list[dict[str, str]]:
        """The messages of a chat request."""
        return self.body.get("messages", [])


class OpenAIServer(Loopback):
    """Serve the model in ``model_dir`` (or the canned ``reply``) as ``name`` on 127.0.0.1; use as a
    context manager. ``port`` 0 takes a free one."""

    def __init__(self, model_dir: str | None = None, name: str = "tiny", *, api_key: str | None = None,
                 logprobs: bool = True, list_models: bool = True, reply: Callable[[Seen], str] | None = None,
                 port: int = 0) -> None:
        if (model_dir is None) == (reply is None):
            raise ValueError("give a model folder or a reply function, not both")
        self.backend = None
        # torch and the model only then: canned replies start in a second, not 20 s under load
        if model_dir is not None:
            from exampp.llm.backends.hf import HFBackend

            self.backend = HFBackend.load(model_dir, device="cpu", batch_size=1)
        self.reply = reply
        self.name = name
        self.api_key = api_key
        self.logprobs = logprobs
        self.list_models = list_models
        self.faults: dict[int, Fault] = {}
        self.delay = 0.0
        self.requests: list[Seen] = []
        self._lock = threading.Lock()  # the record and the fault counter
        self._model_lock = threading.Lock()  # one inference at a time
        self._completions = 0
        super().__init__(json_handler, port)

    def completions(self) -> list[Seen]:
        """The completion requests received so far (chat or not; answered, refused or in progress)."""
        with self._lock:
            return [seen for seen in self.requests if seen.method == "POST"]

    def prompts(self) -> list[str]:
        """The prompts of the completion requests answered with 200."""
        return [seen.prompt for seen in self.completions() if seen.status == 200 and seen.prompt is not None]

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.faults.clear()
            self._completions = 0
        self.delay = 0.0

    # --- answering -----------------------------------------------------------------------------

    def answer(self, method: str, path: str, headers: Any, body: dict[str, Any]) -> tuple[int, dict[str, str], dict]:
        """Record the request as it arrives (status 0 until answered), then answer it."""
        with self._lock:
            fault = None
            if method == "POST":
                fault = self.faults.get(self._completions)
                self._completions += 1
            index, seen = len(self.requests), Seen(method, path, body, 0)
            self.requests.append(seen)
        status, extra, payload = self._answer(method, path, headers, body, fault)
        with self._lock:
            if index < len(self.requests) and self.requests[index] is seen:  # not reset meanwhile
                self.requests[index] = replace(seen, status=status)
        return status, extra, payload

    def _answer(self, method, path, headers, body, fault: Fault | None) -> tuple[int, dict[str, str], dict]:
        if self.api_key is not None and headers.get("Authorization") != f"Bearer {self.api_key}":
            return 401, {}, error_body("Incorrect API key provided.", "invalid_request_error", 401)
        if method == "GET" and path.endswith("/models") and self.list_models:
            return 200, {}, {"object": "list", "data": [
                {"id": self.name, "object": "model", "created": 0, "owned_by": "exampp-tests"}]}
        if method != "POST" or not path.endswith(("/chat/completions", "/completions")):
            return 404, {}, error_body(f"no route {method} {path}", "NotFoundError", 404)
        if fault is not None and fault.status is not None:
            injected = error_body(f"injected HTTP {fault.status}", "InjectedError", fault.status)
            return fault.status, fault.headers, injected
        time.sleep(self.delay + (fault.sleep if fault is not None else 0.0))
        if body.get("model") != self.name:
            return 404, {}, error_body(f"The model `{body.get('model')}` does not exist.", "NotFoundError", 404)
        chat = path.endswith("/chat/completions")
        if self.reply is not None:
            return 200, {}, _payload(self.name, self.reply(Seen(method, path, body, 0)), chat, body)
        if chat:  # a conversation goes to the model as one, through its chat template where it has one
            messages = body["messages"]
            prompt = (messages[-1]["content"] if len(messages) == 1
                      else tuple((m["role"], m["content"]) for m in messages))
        else:
            prompt = body["prompt"]
        if chat:
            top = body.get("top_logprobs") if body.get("logprobs") else None
        else:
            top = body.get("logprobs")
        if not self.logprobs:
            top = None
        return 200, {}, self._completion(prompt, body.get("max_tokens") or 16, top, chat)

    def _completion(self, prompt, max_tokens: int, top: int | None, chat: bool) -> dict:
        import torch

        backend = self.backend
        assert backend is not None  # without a model it answers from canned replies, never here
        tokenizer = backend.tokenizer
        with self._model_lock:
            first_row = backend.first_token_logprobs([prompt])[0]
            ids = backend._encode([prompt])[0]
            output = backend.model.generate(
                input_ids=torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                max_new_tokens=max_tokens, do_sample=False, num_beams=1, output_scores=True,
                return_dict_in_generate=True, pad_token_id=tokenizer.pad_token_id)
        generated = output.sequences[0, 1:] if backend.is_encoder_decoder else output.sequences[0, len(ids):]
        generated = generated.tolist()
        text = tokenizer.decode(generated, skip_special_tokens=True)
        rows = [first_row] + [torch.log_softmax(score[0].float(), dim=-1) for score in output.scores[1:]]
        stopped = bool(generated) and generated[-1] == tokenizer.eos_token_id
        usage = {"prompt_tokens": len(ids), "completion_tokens": len(generated),
                 "total_tokens": len(ids) + len(generated)}
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop" if stopped else "length", "logprobs": None}
        if top:
            entries = [(tokenizer.decode([token]), _floor(row[token]), _top(tokenizer, row, top))
                       for token, row in zip(generated, rows)]
            if chat:
                choice["logprobs"] = {"content": [
                    {"token": token, "logprob": logprob, "bytes": list(token.encode()),
                     "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in alternatives]}
                    for token, logprob, alternatives in entries]}
            else:
                offsets, at = [], 0
                for token, _, _ in entries:
                    offsets.append(at)
                    at += len(token)
                choice["logprobs"] = {"tokens": [token for token, _, _ in entries],
                                      "token_logprobs": [logprob for _, logprob, _ in entries],
                                      "top_logprobs": [dict(alternatives) for _, _, alternatives in entries],
                                      "text_offset": offsets}
        return envelope(self.name, text, chat, choice, usage)


def _payload(name: str, text: str, chat: bool, body: dict[str, Any]) -> dict:
    """A canned answer: the text, no log-probabilities, words counted as tokens."""
    prompt = " ".join(m["content"] for m in body["messages"]) if chat else body["prompt"]
    usage = {"prompt_tokens": len(prompt.split()), "completion_tokens": len(text.split()),
             "total_tokens": len(prompt.split()) + len(text.split())}
    return envelope(name, text, chat, {"index": 0, "finish_reason": "stop", "logprobs": None}, usage)


def canned_replies(path: str) -> Callable[[Seen], str]:
    """The reply function of a JSONL file of rules ``{"match"?: text, "reply": text}`` (first match answers)."""
    with open(path, encoding="utf-8") as fh:
        rules = [json.loads(line) for line in fh if line.strip()]

    def reply(seen: Seen) -> str:
        prompt = seen.prompt or ""
        for rule in rules:
            if rule.get("match") is None or rule["match"] in prompt:
                return rule["reply"]
        return ""

    return reply


def _floor(value: torch.Tensor) -> float:
    return max(float(value), _LOGPROB_FLOOR)


def _top(tokenizer, row: torch.Tensor, n: int) -> list[tuple[str, float]]:
    import torch

    best = torch.topk(row, min(n, len(row)))
    return [(tokenizer.decode([token]), max(value, _LOGPROB_FLOOR))
            for value, token in zip(best.values.tolist(), best.indices.tolist())]


def main() -> None:
    import argparse
    import signal

    parser = argparse.ArgumentParser(description="Serve canned replies as an OpenAI-compatible server on 127.0.0.1.")
    parser.add_argument("--replies", required=True, help="JSONL of {\"match\"?: text, \"reply\": text} rules")
    parser.add_argument("--model", default="canned", help="the model name it serves (default: canned)")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    parser.add_argument("--port-file", help="write the port here once listening")
    args = parser.parse_args()
    server = OpenAIServer(name=args.model, reply=canned_replies(args.replies), port=args.port)
    with server:
        if args.port_file:
            with open(args.port_file + ".tmp", "w") as fh:
                fh.write(str(server.port))
            os.replace(args.port_file + ".tmp", args.port_file)
        print(f"serving {args.model} at {server.url}", flush=True)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
