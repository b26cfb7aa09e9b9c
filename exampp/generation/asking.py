"""Asking a generating LLM for one thing per item, reading the answers, asking again: the engine of
``exampp bank generate`` (an item: a query or a subtopic) and ``exampp exam generate`` (a document).

:func:`ask` sends the first prompt of every item as one batch (the ``openai`` backend runs them
concurrently; ``hf`` batches them on the model), reads each answer with the command's ``read``
(which raises :class:`Unusable` saying what is wrong, or returns what it read :class:`Noted` with what
it left out), and asks again the items whose answer was unusable, all in one batch, each in its own
conversation: the prompt, the answer, a corrective turn (``corrective(problem)``), the next
answer..., up to ``max_attempts`` requests per item. An answer is taken as valid text: a lone
UTF-16 surrogate (a server's JSON can escape one) becomes U+FFFD, so that it can be journaled.

:func:`ask_all` runs a command's items through it with a :class:`~exampp.generation.journal.Journal`
and settles each one: what ``read`` made of its last answer, or the problem of its last answer
(failed), with every answer received, the model and the date. Items the journal holds an outcome
of (for the same text) are not asked again; the others are asked ``chunk_size`` at a time, each
outcome journaled as soon as it is settled, a progress bar showing items/s and an ETA. A failed
item is journaled too: a deterministic model (temperature 0) asked again answers the same way, so
failed items are asked again only with ``retry_failed``. The generator is opened only when
something is to be asked: a rerun that asks nothing loads no model and reaches no server.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Generic, TypeVar

from exampp.collection.ids import valid_text
from exampp.errors import InputError, Interrupted
from exampp.generation.journal import Journal
from exampp.llm.backend import (
    Backend,
    BackendError,
    BackendSpec,
    Capability,
    Usage,
    backend_class,
    opened,
    require,
)
from exampp.llm.prompt import Conversation, Prompt
from exampp.progress import progress_bar

T = TypeVar("T")
CHUNK = 8  # items asked at once unless the openai backend's --concurrency says otherwise


class Unusable(ValueError):
    """An answer that holds nothing usable; the message says what is wrong (a corrective turn may name it)."""


@dataclass(frozen=True)
class Noted(Generic[T]):
    """What a reader returns when it left part of an answer out: the ``value`` read, and a ``note``
    for the user saying what was left out."""

    value: T
    note: str


@dataclass(frozen=True)
class Asking:
    """How items are asked. Each of these changes the answers: they go into the journal's settings."""

    max_new_tokens: int = 1024
    temperature: float = 0.0
    max_attempts: int = 3  # requests per item: the first, and the corrective turns after unusable answers

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.max_new_tokens < 1:
            raise ValueError("max_new_tokens must be at least 1")
        if self.temperature < 0:
            raise ValueError("temperature must not be negative")

    def settings(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "max_new_tokens": self.max_new_tokens,
                "max_attempts": self.max_attempts}


@dataclass(frozen=True)
class Answered(Generic[T]):
    """What asking the ``index``-th item gave: ``value``, read from its last answer (with the reader's
    ``note`` where it left something out), or None and the ``problem`` of its last answer;
    ``answers``: every answer received, in order."""

    index: int
    value: T | None
    problem: str | None
    answers: tuple[str, ...]
    note: str | None = None


def ask(backend: Backend, prompts: Sequence[str], read: Callable[[str], T | Noted[T]], corrective: Callable[[str], str],
        asking: Asking) -> Iterator[Answered[T]]:
    """Ask ``prompts`` (one per item) as one batch per attempt; yield each item's outcome as soon as it
    is settled (usable answers after every round, failures after the last)."""
    turns: list[Conversation] = [() for _ in prompts]  # the turns after the first prompt
    answers: list[list[str]] = [[] for _ in prompts]
    pending = list(range(len(prompts)))
    for attempt in range(1, asking.max_attempts + 1):
        batch: list[str | Conversation] = [(("user", prompts[i]), *turns[i]) if turns[i] else prompts[i]
                                           for i in pending]
        replies = backend.generate(batch, max_new_tokens=asking.max_new_tokens, temperature=asking.temperature)
        still = []
        for i, reply in zip(pending, replies, strict=True):
            reply = valid_text(reply)
            answers[i].append(reply)
            try:
                value = read(reply)
            except Unusable as problem:
                if attempt == asking.max_attempts:
                    yield Answered(i, None, str(problem), tuple(answers[i]))
                else:
                    turns[i] += (("assistant", reply), ("user", corrective(str(problem))))
                    still.append(i)
            else:
                value, note = (value.value, value.note) if isinstance(value, Noted) else (value, None)
                yield Answered(i, value, None, tuple(answers[i]), note)
        pending = still
        if not pending:
            return


def utc_now() -> str:
    """Now, UTC, to the second: a generated item's date."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Task:
    """An item to ask: its ``key`` in the journal, and ``text``, what its prompt is made of (the
    prompt itself, or a document). An outcome journaled for another text is stale: asked again."""

    key: str
    text: str

    @property
    def digest(self) -> str:
        return hashlib.md5(self.text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Outcome:
    """One item settled: ``value`` (JSON: what ``read`` made of the last answer) or, failed, the
    ``problem`` of its last answer; every answer received; the ``model`` that answered (the
    backend's name) and when (``date``, UTC); ``note``: what the reader left out of a usable answer.
    ``asked``: in this run (False: from the journal)."""

    key: str
    value: Any
    problem: str | None
    answers: tuple[str, ...]
    model: str
    date: str
    note: str | None = None
    asked: bool = field(default=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.problem is None

    @property
    def attempts(self) -> int:
        return len(self.answers)

    def provenance(self, prompt: Prompt, temperature: float) -> dict[str, Any]:
        """What a question made from this outcome records of its making (its ``info``)."""
        return {"model": self.model, "prompt": prompt.prompt_id, "temperature": temperature, "date": self.date,
                "attempts": self.attempts}

    def entry(self, digest: str) -> dict[str, Any]:
        """The journal's value: the outcome, and the digest of the text it was asked for."""
        settled = {"value": self.value} if self.ok else {"problem": self.problem}
        noted = {"note": self.note} if self.note else {}
        return {**settled, **noted, "answers": list(self.answers), "model": self.model, "date": self.date,
                "text_md5": digest}

    @classmethod
    def from_entry(cls, key: str, entry: Any) -> "Outcome":
        """An outcome from its journal value (a value of another shape: ValueError)."""
        try:
            problem = entry.get("problem")
            if (problem is None) == ("value" not in entry):
                raise ValueError("an entry holds a value or a problem")
            note = entry.get("note")
            return cls(key, entry.get("value"), None if problem is None else str(problem),
                       tuple(str(a) for a in entry["answers"]), str(entry["model"]), str(entry["date"]),
                       None if note is None else str(note))
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"not a settled item ({type(exc).__name__}: {exc})") from None


def record(journal: Journal, task: Task, outcome: Outcome) -> None:
    """Journal ``outcome`` as ``task``'s (the journal must be open)."""
    journal.record(task.key, outcome.entry(task.digest))


@dataclass(frozen=True)
class Run:
    """What :func:`ask_all` settled."""

    outcomes: dict[str, Outcome]  # every task's, in the tasks' order
    asked: int  # tasks asked in this run
    usage: Usage  # the generator's requests and tokens (none when it was not opened)


def journaled(journal: Journal, task: Task) -> Outcome | None:
    """``task``'s outcome in ``journal``; None when it holds none, or one for another text."""
    entry = journal.done.get(task.key)
    if entry is None:
        return None
    try:
        outcome = Outcome.from_entry(task.key, entry)
    except ValueError as exc:
        raise InputError(str(journal.path), None, f"item {task.key}: {exc}") from None
    return outcome if entry.get("text_md5") == task.digest else None


def _as_is(backend: Backend, text: str) -> str:
    return text


def ask_all(generator: Backend | BackendSpec, journal: Journal, tasks: Sequence[Task], read: Callable[[str], Any],
            corrective: Callable[[str], str], asking: Asking, *,
            render: Callable[[Backend, str], str] = _as_is, retry_failed: bool = False, chunk_size: int | None = None,
            progress: bool = True, unit: str = "item", desc: str = "generating",
            now: Callable[[], str] = utc_now) -> Run:
    """Settle every task: from ``journal``, or by asking ``generator`` (a spec: opened only when
    something is to be asked, and closed) ``chunk_size`` (at least 1) tasks at a time [default:
    the openai backend's concurrency, else 8], each outcome journaled at once. ``render(backend,
    text)``: a task's prompt [default: its text]. ``read`` must return JSON values. A BackendError while
    asking (a server gone, a spent request budget) says where the answers are kept."""
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, not {chunk_size}")
    outcomes: dict[str, Outcome] = {}
    for task in tasks:
        outcome = journaled(journal, task)
        if outcome is not None:
            outcomes[task.key] = outcome
    todo = [t for t in tasks if t.key not in outcomes or (retry_failed and not outcomes[t.key].ok)]
    usage = generator.usage if isinstance(generator, Backend) else Usage()
    if todo:
        if chunk_size is None and isinstance(generator, BackendSpec):
            chunk_size = generator.option("concurrency")
        chunk_size = chunk_size or CHUNK
        with opened(generator) as backend, journal:
            assert backend is not None
            bar = progress_bar(len(todo), progress, unit=unit, desc=desc)
            try:
                for begin in range(0, len(todo), chunk_size):
                    chunk = todo[begin:begin + chunk_size]
                    prompts = [render(backend, task.text) for task in chunk]
                    for answered in ask(backend, prompts, read, corrective, asking):
                        task = chunk[answered.index]
                        outcome = Outcome(task.key, answered.value, answered.problem, answered.answers, backend.name,
                                          now(), answered.note, asked=True)
                        record(journal, task, outcome)
                        outcomes[task.key] = outcome
                        if bar is not None:
                            bar.update(1)
            except BackendError as exc:
                raise BackendError(f"{exc} ({kept_in(journal.path)})") from None
            except KeyboardInterrupt:  # each outcome was journaled as it came: count what is kept
                raise Interrupted(f"{len(outcomes):,} of {len(tasks):,} {unit}s answered and kept in {journal.path}; "
                                  "run the same command to resume") from None
            finally:
                if bar is not None:
                    bar.close()
            usage = backend.usage
    return Run({t.key: outcomes[t.key] for t in tasks}, len(todo), usage)


def kept_in(journal: Path) -> str:
    """Where a stopped run's answers are (its ``journal`` file), and what to do."""
    return f"what was answered is kept in {journal}: the same command again goes on from there"


@contextmanager
def interrupted_keeps(journal: Path) -> Iterator[None]:
    """A Ctrl-C inside becomes :class:`~exampp.errors.Interrupted` saying where the answers are kept
    (:func:`kept_in`; while asking, :func:`ask_all` says how many), which the command line prints
    (exit status 130)."""
    try:
        yield
    except Interrupted:
        raise
    except KeyboardInterrupt:
        raise Interrupted(kept_in(journal)) from None


_MODEL_HELP = {"hf": "a local model folder or HF hub id", "openai": "the served model's name"}


def generator_identity(generator: Backend | BackendSpec, who: str) -> dict[str, str]:
    """The generator as the journal's settings record it, known before it is opened (a rerun that
    asks nothing checks it without loading a model): the backend and the model asked for (an open
    backend: its class and name). BackendError, before anything is opened, when it cannot
    generate or no model is named: generation wants a capable chat model, not a backend's default."""
    require_capability(generator, Capability.GENERATE, who)
    if isinstance(generator, Backend):
        return {"backend": type(generator).__name__, "model": generator.name}
    if not generator.model:
        raise BackendError(f"{who} needs --model: a generating (chat) model; with --backend {generator.name}, "
                           f"{_MODEL_HELP.get(generator.name, 'the model to open')}")
    return {"backend": generator.name, "model": generator.model}


def require_capability(backend: Backend | BackendSpec, capability: Capability, who: str) -> None:
    """BackendError naming ``who`` unless ``backend`` (open, or a spec: checked without opening it) can
    do ``capability``."""
    if isinstance(backend, Backend):
        backend.require(frozenset({capability}), who)
    else:
        require(frozenset({capability}), backend_class(backend.name).capabilities, who, backend.name)
