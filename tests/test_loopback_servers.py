"""The test servers record only requests they read whole: a client killed after sending a request's
head but before its body (as test_exam_generate's killed run can be, under load) made no request."""
from __future__ import annotations

import json
import socket
import time
import urllib.request

import pytest

from exampp.testing.batch_server import BatchServer
from exampp.testing.openai_server import OpenAIServer

BODY = json.dumps({"model": "canned", "prompt": "Is this read whole?", "max_tokens": 4}).encode()


def send_cut_short(url: str, sent: bytes) -> None:
    """A completion request whose head promises BODY, of which only ``sent`` comes before the client goes."""
    host, port = url.removeprefix("http://").split("/")[0].split(":")
    with socket.create_connection((host, int(port))) as conn:
        conn.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     + f"Content-Length: {len(BODY)}\r\n\r\n".encode() + sent)
        conn.shutdown(socket.SHUT_WR)
        conn.recv(1)  # the server closes its side: the request is dealt with


def complete(url: str) -> dict:
    request = urllib.request.Request(f"{url}/completions", data=BODY, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)


@pytest.mark.parametrize("sent", [b"", BODY[:10]], ids=["no body", "part of the body"])
def test_openai_server_records_no_request_whose_body_never_came(sent):
    with OpenAIServer(name="canned", reply=lambda seen: "5") as server:
        send_cut_short(server.url, sent)
        assert server.requests == []
        complete(server.url)
        assert [seen.prompt for seen in server.requests] == ["Is this read whole?"]


def test_batch_server_records_no_request_whose_body_never_came():
    with BatchServer(name="canned", reply=lambda body: "5") as server:
        send_cut_short(server.url, b"")
        time.sleep(0.1)
        assert server.direct == []
        complete(server.url)
        assert len(server.direct) == 1
