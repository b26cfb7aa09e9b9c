"""The OpenAI Batch API (``exampp grade --backend openai --batch-api``): the same requests, at half the
price, answered within a day.

A grader runs as it always does, with a :class:`Book` attached to its :class:`OpenAIBackend` (an
:class:`~exampp.llm.openai.book.AnswerBook`, which the backend asks before it sends a request): each request
the backend would send (its endpoint's path and JSON body, :meth:`OpenAIBackend.request_body`) is looked up
by a key, the SHA-256 of that path and body (:func:`request_key`). A request whose 200 answer the book holds
is read as a direct answer is (:func:`~exampp.llm.openai.wire.read_answer`, usage counted alike), so
the grades are the direct path's; one whose batch ended without a good answer (an error line, a status
other than 200, a malformed body, a batch expired or cancelled before it) is sent directly, as an ordinary
request; any other is recorded for the next batch and stops the grading of its chunk (:class:`Deferred`)
until the answers are in. :mod:`exampp.grading.batch_engine` runs the rounds.

:class:`BatchClient` writes the recorded requests as the Batch API's JSONL (``custom_id`` the key), at most
:data:`MAX_FILE_REQUESTS` requests or :data:`MAX_FILE_BYTES` bytes a file, uploads each (``purpose=batch``),
creates its batch (``completion_window=24h``), polls it every ``poll_seconds`` and downloads its output and
error files, streamed (an output file may be gigabytes). A batch still open :data:`EXPIRY_GRACE` past its
expiry (``expires_at``, else its creation plus the 24 h window) is polled no more: the job stops in one
line. A request its batch ended without answering is sent directly, and a line says how many go at the
direct price. A request answered twice, differently, has no answer that can be trusted: a line names it,
and it is sent directly. Before the upload it tells what the requests cost at most: their prompt tokens (counted as the
backend counts them) and ``max_tokens`` each out, times the prices given. Everything the server says is
untrusted input: a batch or a line that is not as the API documents is named (server, batch, file, line)
in one line; a malformed output line is left out (a warning), its request asked again directly.

The grade store's journal (:class:`~exampp.stores.batch_journal.BatchJournal`) keeps the batches (id, server,
model, method, state, requests) and, per request key, its batch and, once downloaded, its answer, each
change in one transaction: a process killed between
submitting and downloading finds its batches in the journal and polls them instead of submitting again, and
one killed after downloading loses no answer. The answers go once the job has committed every grade.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import openai

from exampp.llm.backend import BackendError
from exampp.llm.openai.book import Requester
from exampp.llm.openai.transport import MAX_BODY, REFUSED, BoundedClient
from exampp.llm.openai.wire import ENDPOINT_PATHS, Answer, Malformed, one_line, read_answer, shown
from exampp.llm.prompt import Conversation
from exampp.setting_rules import SettingError

if TYPE_CHECKING:
    from exampp.llm.openai.backend import OpenAIBackend
    from exampp.stores.batch_journal import BatchJournal

PATHS = {name: "/v1" + path for name, path in ENDPOINT_PATHS.items()}  # the Batch API's endpoint names
MAX_FILE_REQUESTS = 50_000  # the Batch API's limit per file
MAX_FILE_BYTES = 190_000_000  # under its 200 MB per file
MAX_FILE_BODY = 1 << 31  # bytes of a downloaded output or error file read at most
WINDOW = 24 * 3600.0  # seconds: the completion window asked for
EXPIRY_GRACE = 3600.0  # seconds a batch may stay open past its expiry before it is given up on
FILE_TIMEOUT = 600.0  # seconds an upload or a download may take
POLL_SECONDS = 30.0  # between looks at a batch's status, by default
OPEN = frozenset({"validating", "in_progress", "finalizing", "cancelling"})
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
NO_ANSWER = 0  # the status kept for a request its batch ended without answering
_WARNINGS = 5  # malformed lines named per file; the rest counted
_T = TypeVar("_T")  # what a call of the SDK gives


class Deferred(Exception):
    """A request recorded for the Batch API: its chunk is graded again once the answer is in."""


def request_key(path: str, body: dict[str, Any]) -> str:
    """The key of a request: the SHA-256 of its path and JSON body, written canonically."""
    text = json.dumps([path, body], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def parse_price(text: str) -> tuple[float, float]:
    """``IN,OUT``: dollars per million prompt and completion tokens, each a finite number >= 0."""
    parts = text.split(",")
    try:
        prices = tuple(float(part) for part in parts)
    except ValueError:
        prices = ()
    if len(prices) != 2 or not all(0 <= price < float("inf") for price in prices):
        raise SettingError(f"batch_price must be IN,OUT (dollars per million prompt and completion tokens, "
                           f"e.g. 1.25,5), found {text!r}")
    return prices


@dataclass
class Book:
    """The Batch API's answers by request key (status, body; None: in a batch not yet downloaded), and the
    requests recorded for the next batches (key -> path, body)."""

    answers: dict[str, tuple[int | None, bytes | None]] = field(default_factory=dict)
    recorded: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)

    def look_up(self, backend: Requester, prompt: str | Conversation, max_new_tokens: int, *, logprobs: bool,
                temperature: float) -> Answer | None:
        """The answer to the request, as a direct one is read; None: send it directly (its batch gave no
        good answer); :class:`Deferred`: recorded (or already in a batch), to be answered by the Batch API."""
        path = PATHS[backend.endpoint]
        body = backend.request_body(prompt, max_new_tokens, logprobs=logprobs, temperature=temperature)
        key = request_key(path, body)
        if key not in self.answers:
            self.recorded[key] = (path, body)
            raise Deferred(key)
        status, content = self.answers[key]
        if status is None:  # in a batch not yet downloaded
            raise Deferred(key)
        if status == 200 and content is not None:
            try:
                return read_answer(content, "application/json", chat=backend.endpoint == "chat", logprobs=logprobs)
            except Malformed:
                pass
        return None


@dataclass(frozen=True)
class Estimate:
    """What requests cost at most: their prompt tokens and ``max_tokens`` each out, in dollars where priced."""

    requests: int
    files: int
    prompt_tokens: int
    completion_tokens: int  # at most
    price: tuple[float, float] | None = None  # dollars per million prompt, completion tokens

    @property
    def dollars(self) -> float | None:
        if self.price is None:
            return None
        return (self.prompt_tokens * self.price[0] + self.completion_tokens * self.price[1]) / 1e6

    def __str__(self) -> str:
        text = (f"Batch API: {self.requests} requests in {self.files} file{'s' * (self.files != 1)}, about "
                f"{self.prompt_tokens} prompt tokens and at most {self.completion_tokens} completion tokens")
        if self.price is not None:
            text += (f": at most ${self.dollars:.2f} at ${self.price[0]:g} and ${self.price[1]:g} per million "
                     "tokens")
        return text


def estimate(backend: OpenAIBackend, files: list[list[tuple[str, dict[str, Any]]]],
             price: tuple[float, float] | None) -> Estimate:
    """The cost of ``files`` of (key, body) requests: prompt tokens as ``backend`` counts them."""
    bodies = [body for lines in files for _, body in lines]
    prompt = sum(backend.count_tokens(_prompt_text(body)) for body in bodies)
    return Estimate(len(bodies), len(files), prompt, sum(body["max_tokens"] for body in bodies), price)


def _prompt_text(body: dict[str, Any]) -> str:
    if "messages" in body:
        return "\n".join(message["content"] for message in body["messages"])
    return body["prompt"]


def split_files(requests: dict[str, tuple[str, dict[str, Any]]]) -> list[list[tuple[str, dict[str, Any]]]]:
    """The requests (key -> path, body) as files of (key, body): at most :data:`MAX_FILE_REQUESTS`
    requests and :data:`MAX_FILE_BYTES` bytes each."""
    files: list[list[tuple[str, dict[str, Any]]]] = []
    size = 0
    for key, (_, body) in requests.items():
        line = len(_line(PATHS["chat"], key, body))  # the path's length differs by a few bytes at most
        if not files or len(files[-1]) >= MAX_FILE_REQUESTS or size + line > MAX_FILE_BYTES:
            files.append([])
            size = 0
        files[-1].append((key, body))
        size += line
    return files


def _line(path: str, key: str, body: dict[str, Any]) -> bytes:
    return (json.dumps({"custom_id": key, "method": "POST", "url": path, "body": body}, ensure_ascii=False)
            + "\n").encode()


class BatchClient:
    """The Batch API of ``backend``'s server, on its client and loop, with its batches and answers kept in
    ``journal`` (the grade store's, :attr:`~exampp.stores.grade_store.GradeStore.batches`). ``report``: where
    progress and the estimate go (a line each)."""

    def __init__(self, backend: OpenAIBackend, journal: BatchJournal, method_id: str, *,
                 poll_seconds: float = POLL_SECONDS, price: tuple[float, float] | None = None,
                 report: Callable[[str], None] = lambda line: None) -> None:
        self.backend = backend
        self.journal = journal
        self.method_id = method_id
        self.poll_seconds = poll_seconds
        self.price = price
        self.report = report
        self.path = PATHS[backend.endpoint]
        # Files are larger than answers: their own bound and deadline, on the backend's client otherwise.
        self._files = backend.client.with_options(
            http_client=BoundedClient(max(backend.timeout, FILE_TIMEOUT), MAX_FILE_BODY),
            timeout=max(backend.timeout, FILE_TIMEOUT))

    def close(self) -> None:
        """Close the connections of the file transfers (the backend closes its own)."""
        self.backend.call(self._files.close())

    def book(self) -> Book:
        """A book holding the answers the journal keeps for this server and model (and the requests in its
        open batches, as awaited)."""
        return Book(self.journal.answers(self.backend.url, self.backend.model))

    # --- submitting ------------------------------------------------------------------------------

    def submit(self, requests: dict[str, tuple[str, dict[str, Any]]]) -> list[str]:
        """Upload ``requests`` (key -> path, body) and create their batches, each kept in the journal with
        its requests as soon as it is created; the estimate is reported first. The batch ids."""
        files = split_files(requests)
        self.report(str(estimate(self.backend, files, self.price)))
        ids = []
        for lines in files:
            data = b"".join(_line(self.path, key, body) for key, body in lines)
            uploaded = self._json(self._files.files.with_raw_response.create(
                file=("exampp-batch.jsonl", data, "application/jsonl"), purpose="batch"), "the upload of a batch file")
            file_id = self._text(uploaded, "id", "the uploaded file")
            created = self._json(self.backend.client.batches.with_raw_response.create(
                input_file_id=file_id, endpoint=self.path, completion_window="24h",  # type: ignore[arg-type]
                metadata={"exampp_model": self.backend.model[:512], "exampp_method": self.method_id[:512]}),
                f"the batch of file {file_id}")
            batch_id = self._text(created, "id", f"the batch of file {file_id}")
            self.journal.add(batch_id, self.backend.url, self.backend.model, self.method_id, [key for key, _ in lines])
            self.report(f"Batch API: submitted batch {batch_id} ({len(lines)} requests) to {self.backend.url}")
            ids.append(batch_id)
        return ids

    # --- waiting and downloading -----------------------------------------------------------------

    def finish_open(self, book: Book) -> None:
        """Poll the journal's open batches of this server and model until each ends, download the answers
        of each as it ends (into the journal, then ``book``)."""
        waiting = self.journal.pending(self.backend.url, self.backend.model)
        states: dict[str, str] = {}
        first_seen: dict[str, float] = {}
        while waiting:
            for batch_id in list(waiting):
                batch = self._json(self.backend.client.batches.with_raw_response.retrieve(batch_id),
                                   f"batch {batch_id}")
                status = self._text(batch, "status", f"batch {batch_id}")
                if status not in OPEN | ENDED:
                    raise BackendError(f"{self.backend.url} gave batch {batch_id} the status {shown(status)}, "
                                       f"not one of {', '.join(sorted(OPEN | ENDED))}")
                if states.get(batch_id) != status:
                    states[batch_id] = status
                    self.report(f"Batch API: batch {batch_id} {status}{_counts(batch)}")
                if status in ENDED:
                    self._download(batch_id, status, batch, book)
                    waiting.remove(batch_id)
                else:
                    self._check_expiry(batch_id, status, batch, first_seen.setdefault(batch_id, time.time()))
            if waiting:
                time.sleep(self.poll_seconds)

    def _check_expiry(self, batch_id: str, status: str, batch: dict[str, Any], first_seen: float) -> None:
        """Stop polling a batch still open :data:`EXPIRY_GRACE` past its expiry: its ``expires_at``, else its
        ``created_at`` plus the window, else the window from when this job first saw it."""
        expires = _time(batch.get("expires_at"))
        if expires is None:
            created = _time(batch.get("created_at"))
            expires = (first_seen if created is None else created) + WINDOW
        late = time.time() - expires
        if late > EXPIRY_GRACE:
            raise BackendError(f"{self.backend.url} still has batch {batch_id} {status} {late / 3600:.0f} h past its "
                               "expiry (Batch API): exampp stops polling it; cancel it there (its requests are then "
                               "sent directly) or run again to look once more")

    def _download(self, batch_id: str, status: str, batch: dict[str, Any], book: Book) -> None:
        """Store the answers of an ended batch: its output and error lines, and, for its other requests,
        no answer (sent directly). A batch that failed as a whole (its input refused) is an error."""
        if status == "failed":
            self.journal.end(batch_id, status, None)
            raise BackendError(f"{self.backend.url} failed batch {batch_id}{_errors(batch)}; run again to submit "
                               "its requests anew")
        output = Output(self.report)
        for name in ("output_file_id", "error_file_id"):
            file_id = batch.get(name)
            if file_id is None:
                continue
            if not isinstance(file_id, str):
                raise BackendError(f"{self.backend.url} gave batch {batch_id} the {name} {shown(file_id)}, not a "
                                   "file id")
            where = f"{self.backend.url} file {file_id} of batch {batch_id}"
            self._call(self._read_file(file_id, batch_id, output, where), f"file {file_id}")
        self.journal.end(batch_id, status, output.answers.items())
        answers = self.journal.answers(self.backend.url, self.backend.model, batch_id)
        direct = sum(code != 200 for code, _ in answers.values())  # HTTP status, or NO_ANSWER
        if direct:
            why = " with no output file" if batch.get("output_file_id") is None else ""
            self.report(f"Batch API: batch {batch_id} {status}{why}: "
                        f"{'its' if direct == len(answers) else f'{direct} of its'} {len(answers)} requests have no "
                        "answer in it and are sent directly, at the direct price")
        book.answers.update(answers)

    async def _read_file(self, file_id: str, batch_id: str, output: Output, where: str) -> None:
        """Read file ``file_id`` of ``batch_id`` into ``output``, streamed, a line at a time."""
        async with self._files.files.with_streaming_response.content(file_id) as response:
            refused = response.http_response.extensions.get(REFUSED)
            if refused is not None:
                raise BackendError(f"{self.backend.url} sent file {file_id} of batch {batch_id} with {refused}, "
                                   "which exampp did not ask for and cannot read")
            size, number, pending = 0, 0, bytearray()  # pending: the line not yet ended
            async for piece in response.iter_bytes():
                size += len(piece)
                if size > MAX_FILE_BODY:
                    raise BackendError(f"{self.backend.url} sent more than {MAX_FILE_BODY >> 30} GiB for file "
                                       f"{file_id} of batch {batch_id}: exampp reads at most that much")
                start, end = 0, piece.find(b"\n")  # only the new piece is searched: a long line costs no rescans
                while end >= 0:
                    number += 1
                    output.read(bytes(pending) + piece[start:end], where, number)
                    pending.clear()
                    start, end = end + 1, piece.find(b"\n", end + 1)
                pending += piece[start:]
            if pending:
                output.read(bytes(pending), where, number + 1)
        output.done(where)

    # --- calls -----------------------------------------------------------------------------------

    def _call(self, work: Coroutine[Any, Any, _T], what: str) -> _T:
        """The result of ``work`` (calls of the SDK) on the backend's loop, or one BackendError."""
        try:
            return self.backend.call(work)
        except openai.APIStatusError as exc:
            message = self.backend.server_message(exc)
            raise BackendError(f"{self.backend.url} answered HTTP {exc.status_code} to {what} (Batch API)"
                               f"{': ' + message if message else ''}") from None
        except openai.APIError as exc:
            cause = f": {one_line(str(exc.__cause__ or exc))}"
            raise BackendError(f"cannot reach {self.backend.url} for {what} (Batch API){cause}") from None

    def _json(self, work: Any, what: str) -> dict[str, Any]:
        content = self._call(_body(work), what)
        if len(content) > MAX_BODY:  # cut there: what was read says nothing of what was sent
            raise BackendError(f"{self.backend.url} sent more than {MAX_BODY >> 20} MiB for {what} (Batch API): "
                               "exampp reads at most that much")
        try:
            data = json.loads(content)
        except (ValueError, RecursionError):
            data = None
        if not isinstance(data, dict):
            quoted = shown(content[:41].decode("utf-8", "replace"))
            raise BackendError(f"{self.backend.url} answered {what} with {quoted}, not a JSON object (Batch API)")
        return data

    def _text(self, data: dict[str, Any], key: str, what: str) -> str:
        value = data.get(key)
        if not isinstance(value, str) or not value or not value.isprintable():
            raise BackendError(f"{self.backend.url} gave {what} the {key} {shown(value)}, not a string (Batch API)")
        return value


async def _body(work: Any) -> bytes:
    raw = await work
    return raw.http_response.content


class Output:
    """The answers of a batch's output and error files, read a line at a time: custom_id -> (status, body as
    JSON; :data:`NO_ANSWER` and the error for a line without a response). A malformed line is reported
    (where, its number and what is wrong) and left out; so is a request answered again otherwise than
    before (in the same file or the other), and neither answer is used: which one the server meant cannot
    be told. Its request, without an answer, is sent directly."""

    def __init__(self, report: Callable[[str], None]) -> None:
        self.report = report
        self.answers: dict[str, tuple[int, bytes]] = {}
        self._lines: dict[str, tuple[str, int]] = {}  # custom_id -> where it was first answered: (file, line)
        self._contradicted: set[str] = set()
        self._bad = 0  # malformed lines of the file being read

    def read(self, line: bytes, where: str, number: int) -> None:
        """Read line ``number`` of the file ``where`` names."""
        if not line.strip():
            return
        try:
            key, status, body = _output_line(line)
        except Malformed as exc:
            self._warn(f"{where}:{number}: {exc}; its request is asked again directly")
            return
        if key in self._contradicted:
            return
        first = self.answers.get(key)
        if first is None:
            self.answers[key] = (status, body)
            self._lines[key] = (where, number)
        elif first != (status, body):
            self._contradicted.add(key)
            del self.answers[key]
            earlier_file, earlier_number = self._lines[key]
            earlier = f"line {earlier_number}" if earlier_file == where else f"{earlier_file}:{earlier_number}"
            self._warn(f"{where}:{number}: custom_id {key[:16]}... answers its request again, otherwise than "
                       f"{earlier}: neither answer is used; its request is asked again directly")

    def _warn(self, message: str) -> None:
        self._bad += 1
        if self._bad <= _WARNINGS:
            self.report(message)

    def done(self, where: str) -> None:
        """The file ``where`` names is read: count the lines left unnamed (and start counting anew)."""
        if self._bad > _WARNINGS:
            self.report(f"{where}: {self._bad - _WARNINGS} more malformed lines left out")
        self._bad = 0


def _output_line(line: bytes) -> tuple[str, int, bytes]:
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        raise Malformed(f"not JSON: {shown(line[:41].decode('utf-8', 'replace'))}") from None
    if not isinstance(data, dict):
        raise Malformed(f"{shown(data)}, not an object")
    key = data.get("custom_id")
    if not isinstance(key, str) or len(key) != 64 or not all(c in "0123456789abcdef" for c in key):
        raise Malformed(f"custom_id {shown(key)} is not a request exampp sent")
    response = data.get("response")
    if response is None:
        return key, NO_ANSWER, json.dumps(data.get("error")).encode()
    if not isinstance(response, dict):
        raise Malformed(f"response is {shown(response)}, not an object")
    status = response.get("status_code")
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status < 600:
        raise Malformed(f"response.status_code is {shown(status)}, not an HTTP status")
    return key, status, json.dumps(response.get("body")).encode()


def _time(value: Any) -> float | None:
    """A Unix time a batch object gives (seconds), or None where it gives none that reads."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1e11:
        return float(value)
    return None


def _counts(batch: dict[str, Any]) -> str:
    counts = batch.get("request_counts")
    if not isinstance(counts, dict) or not all(isinstance(counts.get(k), int) for k in ("completed", "failed",
                                                                                         "total")):
        return ""
    return f" ({counts['completed']} of {counts['total']} requests done, {counts['failed']} failed)"


def _errors(batch: dict[str, Any]) -> str:
    errors = batch.get("errors")
    data = errors.get("data") if isinstance(errors, dict) else None
    messages = [shown(entry.get("message"), 200) for entry in data or () if isinstance(entry, dict)][:3]
    return f": {'; '.join(messages)}" if messages else ""
