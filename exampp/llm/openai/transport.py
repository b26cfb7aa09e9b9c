"""The HTTP client under the ``openai`` SDK, hardened: a server's answer is untrusted input.

:class:`BoundedClient` holds each attempt to a wall-clock deadline, however slowly the server trickles
its bytes. At most :data:`MAX_BODY` bytes of an answer are read, and as many decoded: exampp asks for no
compression, and a gzip or deflate answer sent all the same is inflated no further (another encoding is
refused at once, why in the response's extension :data:`REFUSED`). Redirects are not followed: the SDK
reports them as status errors, which the backend refuses, naming where they point, so that grades come
from the address given. A response the SDK streams (the Batch API's files) is read, bounded alike, into a
temporary file on disk, and streamed from there.

:data:`HTTP` is the httpx package the SDK's client is built on (its errors and response class).
"""
from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
import zlib
from collections.abc import AsyncIterator
from types import ModuleType
from typing import IO, Any
from urllib.parse import urlsplit

import openai

from exampp.llm.openai.wire import shown

MAX_BODY = 4 << 20  # bytes of an answer read at most: 20 alternatives for 32 tokens take about 50 KB
REFUSED = "exampp_refused"  # the extension by which BoundedClient says why it read nothing of an answer
_INFLATED = frozenset({"gzip", "x-gzip", "deflate"})  # encodings read (zlib's, bounded); others are refused

# The httpx package the SDK's client is built on: httpx under openai 1.x, httpx2 under openai 3.x.
HTTP: ModuleType = sys.modules[openai.DefaultAsyncHttpxClient.__mro__[1].__module__.partition(".")[0]]


def origin(url: str) -> tuple[str, str, int | None] | None:
    """The scheme, host and port of ``url`` (None where it does not parse)."""
    try:
        parts = urlsplit(url)
        return parts.scheme, parts.hostname or "", parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return None


class BoundedClient(openai.DefaultAsyncHttpxClient):
    """The SDK's HTTP client, holding each attempt (one :meth:`send`) to ``deadline`` seconds, wall-clock,
    and reading at most ``max_body`` + 1 bytes of an answer, decoded (one more than allowed says it was cut).

    httpx's own time-outs are per read, so a server that sends a byte every few seconds never trips
    them; the deadline is a time-out to the SDK, which retries it as its own. Answers are asked for
    uncompressed, since a small compressed body can inflate to any size; one sent gzip or deflate all
    the same is inflated here up to the bound (httpx would inflate a whole read at once). Another
    encoding, or a body that does not inflate, is read no further: the answer comes back empty, with
    why in its extension ``exampp_refused`` (an error raised here, the SDK would retry as a lost
    connection). Redirects are not followed: the SDK reports them as status errors. A response the SDK
    streams (``with_streaming_response``: the Batch API's files) is read, bounded alike, into a temporary
    file on disk, and streamed from there: a file of gigabytes costs no memory."""

    def __init__(self, deadline: float, max_body: int, **options: Any) -> None:
        super().__init__(follow_redirects=False, headers={"Accept-Encoding": "identity"}, **options)
        self.deadline = deadline
        self.max_body = max_body

    async def send(self, request: Any, **options: Any) -> Any:
        """One attempt: the response, its body read (bounded) before the deadline, or a time-out."""
        http = HTTP
        spool = tempfile.TemporaryFile() if options.get("stream") else None  # noqa: SIM115 - the response closes it
        try:
            async with asyncio.timeout(self.deadline):
                response = await super().send(request, **{**options, "stream": True})
                try:
                    body, refused = await self._read(response, spool)
                finally:
                    await response.aclose()
        except BaseException as exc:
            if spool is not None:
                spool.close()
            if isinstance(exc, TimeoutError):
                raise http.ReadTimeout(f"no whole answer within {self.deadline:g} s", request=request) from None
            raise
        # The body as read, decoded: the headers that describe it as sent go.
        headers = [(key, value) for key, value in response.headers.multi_items()
                   if key.lower() not in ("content-encoding", "content-length")]
        extensions = {**response.extensions, **({REFUSED: refused} if refused else {})}
        if spool is not None:
            return http.Response(response.status_code, headers=headers, stream=_Spooled(spool), request=request,
                                 extensions=extensions)
        return http.Response(response.status_code, headers=headers, content=body, request=request,
                             extensions=extensions)

    async def _read(self, response: Any, spool: IO[bytes] | None = None) -> tuple[bytes, str | None]:
        """The first ``max_body`` + 1 bytes of ``response``'s body, decoded (written to ``spool`` where
        given, else returned); or nothing, and why."""
        encoding = response.headers.get("Content-Encoding", "").strip().lower()
        if encoding not in ("", "identity") and encoding not in _INFLATED:
            return b"", f"Content-Encoding {shown(encoding)}"
        # wbits: a gzip or a zlib header, as HTTP's deflate has
        inflate = zlib.decompressobj(zlib.MAX_WBITS | 32) if encoding in _INFLATED else None
        body = bytearray()
        size = 0
        async with contextlib.aclosing(response.aiter_raw()) as chunks:
            async for chunk in chunks:
                room = self.max_body + 1 - size
                try:
                    piece = inflate.decompress(chunk, room) if inflate else chunk[:room]
                except zlib.error:
                    if spool is not None:
                        spool.truncate(0)
                    return b"", f"Content-Encoding {shown(encoding)} that does not inflate"
                size += len(piece)
                if spool is None:
                    body += piece
                else:
                    spool.write(piece)
                if size > self.max_body:
                    break
        return bytes(body), None


class _Spooled(HTTP.AsyncByteStream):  # type: ignore[name-defined]
    """A body read into a temporary file, streamed back in pieces; closing it removes the file."""

    _PIECE = 1 << 16

    def __init__(self, spool: IO[bytes]) -> None:
        self._spool = spool

    async def __aiter__(self) -> AsyncIterator[bytes]:
        self._spool.seek(0)
        while piece := self._spool.read(self._PIECE):
            yield piece

    async def aclose(self) -> None:
        self._spool.close()
