"""The assessors' web server: a Starlette app under uvicorn, serving the page of
:mod:`exampp.assess.page` and a small JSON API over the label store.

API (every POST takes a JSON object, ``Content-Type: application/json``; an error is a 4xx answer
``{"error": message}``):

- ``GET api/setup``: the title, the kind of pairs (``passage`` or ``nugget``), the grade scale, the
  number of pairs, how long a claim lasts (the page renews its pair's claim three times as often);
- ``POST api/next {assessor}``: the pair the assessor should judge now, claimed for them (``null``
  when none is left), and the progress;
- ``POST api/label {assessor, query_id, key, grade, note}``: stores the label, committed before the
  answer is sent: an acknowledged label survives ``kill -9``;
- ``POST api/undo {assessor}``: undoes the assessor's last label and gives its pair back to them;
- ``GET api/labels?assessor=NAME``: the assessor's own labels, newest first (at most
  :data:`RECENT`);
- ``POST api/signout {assessor}``: releases the assessor's pair.

No answer carries a sample's stratum or inclusion probability (often the judge's grade, or a sign
of it). Beyond the API's checks: the page's Content-Security-Policy runs no inline script; a
request whose Host is not the server's own name is refused when it listens on loopback (DNS
rebinding), and so is a POST from another origin.
"""
from __future__ import annotations

import ipaddress
import json
import os
import socket
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from exampp.assess.page import CSS, SCRIPT, page_html
from exampp.assess.tasks import Scale, Task
from exampp.errors import OutputError
from exampp.stores.assessments import CLAIM_SECONDS, MAX_NOTE_CHARS, AssessmentStore, assessor_problem

RECENT = 50  # of an assessor's labels listed on the page
MAX_BODY = 64 * 1024  # bytes of a request body: a note is at most MAX_NOTE_CHARS characters
_SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
                                 b"img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]
_LOOPBACK_NAMES = {"localhost", "127.0.0.1", "[::1]"}

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


@dataclass(frozen=True)
class Assessment:
    """What a server serves: the tasks in sample order, the labels each needs
    (:func:`exampp.assess.assignment.labels_needed`), the scale and the store."""

    tasks: Sequence[Task]
    needed: Sequence[tuple[str, str, int]]
    scale: Scale
    store: AssessmentStore
    title: str
    claim_seconds: float = CLAIM_SECONDS


class _ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def assessment_app(assessment: Assessment, *, host: str = "127.0.0.1") -> Starlette:
    """The app; ``host``: the address it listens on (on loopback, other Host names are refused)."""
    tasks = {(task.pair.query_id, task.pair.key): task for task in assessment.tasks}
    store, scale = assessment.store, assessment.scale
    kind = "nugget" if assessment.tasks and assessment.tasks[0].pair.is_nugget else "passage"
    total_needed = sum(need for _, _, need in assessment.needed)

    def progress(assessor: str) -> dict[str, int]:
        who = store.assessors()
        given = [len(who.get((q, k), ())) for q, k, _ in assessment.needed]
        return {"done": sum(n >= need for n, (_, _, need) in zip(given, assessment.needed)),
                "pairs": len(assessment.needed),
                "labels": sum(min(n, need) for n, (_, _, need) in zip(given, assessment.needed)),
                "needed": total_needed,
                "mine": sum(assessor in who.get((q, k), ()) for q, k, _ in assessment.needed)}

    def next_pair(assessor: str) -> dict[str, Any]:
        chosen = store.claim_next(assessor, assessment.needed, claim_seconds=assessment.claim_seconds)
        return {"pair": tasks[chosen].view() if chosen else None, "progress": progress(assessor)}

    def label(assessor: str, query_id: str, key: str, grade: int, note: str) -> dict[str, Any]:
        store.add(query_id, key, assessor, grade, note)
        return {"saved": {"query_id": query_id, "key": key, "grade": grade, "note": note},
                "progress": progress(assessor)}

    def undo(assessor: str) -> dict[str, Any]:
        undone = store.undo(assessor, claim_seconds=assessment.claim_seconds)
        shown = None if undone is None else {"query_id": undone.query_id, "key": undone.key, "grade": undone.grade,
                                             "note": undone.note}
        return {"undone": shown, "progress": progress(assessor)}

    def recent(assessor: str) -> dict[str, Any]:
        table = store.labels(assessor).tail(RECENT).iloc[::-1]
        return {"labels": [{"query_id": q, "key": k, "grade": int(g), "note": n, "time": t.isoformat()}
                           for q, k, g, n, t in table[["query_id", "key", "grade", "note", "time"]]
                           .itertuples(index=False)]}

    async def page(_request: Request) -> Response:
        return HTMLResponse(page_html(assessment.title))

    async def stylesheet(_request: Request) -> Response:
        return Response(CSS, media_type="text/css; charset=utf-8")

    async def script(_request: Request) -> Response:
        return Response(SCRIPT, media_type="text/javascript; charset=utf-8")

    async def setup(_request: Request) -> Response:
        return JSONResponse({"title": assessment.title, "kind": kind, "pairs": len(assessment.tasks),
                             "claim_seconds": assessment.claim_seconds,
                             "scale": [{"value": g.value, "name": g.name, "hint": g.hint} for g in scale.grades]})

    async def next_endpoint(request: Request) -> Response:
        body = await _body(request)
        return JSONResponse(await run_in_threadpool(next_pair, _assessor(body.get("assessor"))))

    async def label_endpoint(request: Request) -> Response:
        body = await _body(request)
        assessor = _assessor(body.get("assessor"))
        query_id, key, grade, note = (body.get(field) for field in ("query_id", "key", "grade", "note"))
        if not isinstance(query_id, str) or not isinstance(key, str):
            raise _ApiError(400, "query_id and key must be strings")
        if (query_id, key) not in tasks:
            raise _ApiError(404, f"no pair {query_id[:100]!r} {key[:100]!r} in the sample")
        if isinstance(grade, bool) or not isinstance(grade, int) or grade not in scale:
            raise _ApiError(400, f"grade {json.dumps(grade)[:40]} is not on the scale ({scale.spec()})")
        note = "" if note is None else note
        if not isinstance(note, str) or len(note) > MAX_NOTE_CHARS:
            raise _ApiError(400, f"note must be a string of at most {MAX_NOTE_CHARS:,} characters")
        return JSONResponse(await run_in_threadpool(label, assessor, query_id, key, grade, note))

    async def undo_endpoint(request: Request) -> Response:
        body = await _body(request)
        return JSONResponse(await run_in_threadpool(undo, _assessor(body.get("assessor"))))

    async def labels_endpoint(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(recent, _assessor(request.query_params.get("assessor"))))

    async def signout_endpoint(request: Request) -> Response:
        body = await _body(request)
        await run_in_threadpool(store.release, _assessor(body.get("assessor")))
        return JSONResponse({"signed_out": True})

    async def api_error(_request: Request, exc: Exception) -> Response:
        assert isinstance(exc, _ApiError)
        return JSONResponse({"error": exc.message}, status_code=exc.status)

    async def no_icon(_request: Request) -> Response:  # browsers ask for one; answered without a 404
        return Response(status_code=204)

    routes = [Route("/", page), Route("/assess.css", stylesheet), Route("/assess.js", script),
              Route("/favicon.ico", no_icon),
              Route("/api/setup", setup), Route("/api/next", next_endpoint, methods=["POST"]),
              Route("/api/label", label_endpoint, methods=["POST"]),
              Route("/api/undo", undo_endpoint, methods=["POST"]),
              Route("/api/labels", labels_endpoint), Route("/api/signout", signout_endpoint, methods=["POST"])]
    app = Starlette(routes=routes, exception_handlers={_ApiError: api_error})
    app.add_middleware(_Guard, loopback=_is_loopback(host), host=host)
    return app


def _assessor(name: object) -> str:
    problem = assessor_problem(name)
    if problem:
        raise _ApiError(400, f"assessor name {str(name)[:100]!r} {problem}" if name else
                             "sign in: an assessor name is needed")
    return str(name)


async def _body(request: Request) -> dict[str, Any]:
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise _ApiError(415, "send a JSON object with Content-Type: application/json")
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise _ApiError(413, f"a request body is at most {MAX_BODY:,} bytes")
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        raise _ApiError(400, "the body is not valid JSON") from None
    if not isinstance(body, dict):
        raise _ApiError(400, "the body must be a JSON object")
    return body


def _is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _Guard:
    """Security headers on every answer; on loopback, only requests to the server's own names
    (a page of another site resolving its name to 127.0.0.1 is refused); POSTs only from the page's
    own origin (a browser sends Origin with every cross-site POST)."""

    def __init__(self, app: ASGIApp, *, loopback: bool, host: str):
        self.app = app
        self.names = _LOOPBACK_NAMES | {f"[{host}]" if ":" in host else host} if loopback else None

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {key.decode("latin-1"): value.decode("latin-1") for key, value in scope["headers"]}
        host = headers.get("host", "")
        name = host[:host.index("]") + 1] if host.startswith("[") and "]" in host else host.split(":")[0]
        refusal = None
        if self.names is not None and name.lower() not in self.names:
            refusal = "unknown Host: this server answers requests to its own address only"
        elif scope["method"] == "POST" and "origin" in headers and headers["origin"].split("://", 1)[-1] != host:
            refusal = "a request from another site's page"
        if refusal is not None:
            await JSONResponse({"error": refusal}, status_code=403)(scope, receive, send)
            return

        async def send_secured(message: Any) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_secured)


def run_server(app: Starlette, host: str, port: int, *, ready: Callable[[str], None]) -> None:
    """Serve ``app`` on ``host:port`` (port 0: a free one) until interrupted; ``ready(url)`` is called
    once the socket listens, so that the URL it gives answers at once."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        sock = socket.create_server((host, port), family=family)
    except OSError as exc:
        why = os.strerror(exc.errno) if exc.errno else str(exc)  # create_server's own message names the address again
        raise OutputError(f"{host}:{port}", f"cannot listen there: {why}") from None
    bound = sock.getsockname()[1]
    url = f"http://{f'[{host}]' if family == socket.AF_INET6 else host}:{bound}/"
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    ready(url)
    server.run(sockets=[sock])
