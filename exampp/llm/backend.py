"""The interface between grading methods and models: what a method may ask of a backend.

A grading method (:mod:`exampp.grading.methods`) never sees a model, a tokenizer or an HTTP
client; it asks a :class:`Backend` for one of these capabilities, each declared in
:attr:`Backend.capabilities` so that a method that needs one the backend lacks is refused before
anything is graded:

- ``generate``: greedy text for each prompt;
- ``label-logprobs``: for a fixed label set (grades "0".."5", Yes/No), the log-probability of each
  label at the next token, read from the :data:`~exampp.defaults.TOP_LOGPROBS` most likely next
  tokens, and greedy text where the most likely token is no label (:meth:`Backend.next_token_labels`);
- ``continuation-loglik``: the log-likelihood of given continuations (multiple choice);
- ``embed``: unit-length text embeddings;
- ``extract``: the answer span of an extractive (SQuAD2) reader.

Every backend counts tokens and fits a prompt to its input length (:meth:`Backend.fit`), and
applies its model's chat format where the model is a chat model. :attr:`Backend.name` is the
judge's identity (model name; for a server, the served model's name): it goes into every method
id, so grades of different judges never mix.

Backends live one per module in :mod:`exampp.llm.backends`; :func:`open_backend` finds them by
name (``hf`` is ``exampp/llm/backends/hf.py``) without importing the others. Installed packages add
theirs through the entry-point group ``exampp.backends`` (:data:`ENTRY_POINTS`): each entry is a
backend's name and its class, ``NAME = "package.module:TheBackend"``, loaded only when the backend is
chosen; a built-in backend's name stays the built-in's.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import math
import pkgutil
from abc import ABC
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from exampp.defaults import TOP_LOGPROBS
from exampp.errors import ExamppError
from exampp.llm.prompt import Conversation, Prompt
from exampp.setting_rules import check_settings


class Capability(str, Enum):
    GENERATE = "generate"
    LABEL_LOGPROBS = "label-logprobs"
    CONTINUATION = "continuation-loglik"
    EMBED = "embed"
    EXTRACT = "extract"


class BackendError(ExamppError):
    """A backend cannot be opened or cannot do what was asked (unknown name, a missing capability,
    a server that refuses the request); the message says what and where."""


@dataclass(frozen=True)
class Labels:
    """A fixed label set read at the next token: ``classify`` maps a token's text (as generated
    output decodes it) to the index of the label it stands for, or None."""

    names: tuple[str, ...]
    classify: Callable[[str], int | None]


@dataclass(frozen=True)
class NextToken:
    """What a backend saw at the first generated token of one prompt.

    ``logprobs``: per label, the log of the summed probability of the top next tokens that stand for
    it (``-inf`` for a label none of them stands for); None when the backend could not see
    probabilities, or a label was generated that none of the reported top tokens stands for.
    ``top_label``: the label of the single most likely token, None when that token is
    no label. ``text``: the greedy generation, present whenever ``top_label`` is None (the label
    must then be read from the text).
    """

    logprobs: tuple[float, ...] | None
    top_label: int | None
    text: str | None = None


def next_token_scores(top: Iterable[tuple[str, float]], first: str, labels: Labels, text: str | None) -> NextToken:
    """What every backend reports of a first token, from its most likely alternatives ``top`` (token
    text, log-probability) and the text of the token generated: per label, the log of the summed
    probability of the :data:`~exampp.defaults.TOP_LOGPROBS` most likely tokens standing for it (-inf
    for none), and the label ``first`` stands for. One function, so that backends agree.

    :param top: the first token's most likely alternatives, as (token text, log-probability).
    :param first: the text of the token generated.
    :param labels: the labels and the tokens that stand for each.
    :param text: the greedy generation, kept for reading the label from the text (None where not needed).
    :returns: the labels' log-probabilities and the label ``first`` stands for."""
    ranked = sorted(top, key=lambda item: -item[1])[:TOP_LOGPROBS]  # stable: ties keep the given order
    mass = [0.0] * len(labels.names)
    for token, logprob in ranked:
        label = labels.classify(token)
        if label is not None:
            mass[label] += math.exp(logprob)
    top_label = labels.classify(first)
    if top_label is not None and not any(mass):  # a server may leave out the token it generated
        return NextToken(None, top_label, text)
    return NextToken(tuple(math.log(m) if m > 0 else -math.inf for m in mass), top_label, text)


@dataclass
class Usage:
    """What a backend has consumed so far: an HTTP backend counts its requests; a local one the prompts
    it read (``unit`` ``prompts``), an embedding model the texts it encoded: no request was made."""

    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cut_contexts: int = 0  # prompts whose context (passage) was cut to fit the input (exampp.llm.fitting)
    cut_tokens: int = 0  # tokens those prompts lost
    cut_answers: int = 0  # answers longer than the tokens asked for allow, cut (a served judge's)
    unit: str = field(default="requests", compare=False)  # what ``requests`` counts, as a summary names it

    def _combined(self, other: "Usage", sign: int) -> "Usage":
        counts = [f.name for f in fields(self) if f.name != "unit"]
        return replace(self, **{name: getattr(self, name) + sign * getattr(other, name) for name in counts})

    def __add__(self, other: "Usage") -> "Usage":
        return self._combined(other, 1)

    def __sub__(self, other: "Usage") -> "Usage":
        return self._combined(other, -1)

    def __str__(self) -> str:
        text = f"{self.requests} {self.unit}" + (f" ({self.retries} retried)" if self.retries else "")
        for count, what in ((self.prompt_tokens, "prompt tokens"), (self.completion_tokens, "completion tokens"),
                            (self.cut_answers, "answers cut to the length asked for")):
            if count:
                text += f", {count} {what}"
        return text


class Backend(ABC):
    """A model behind the capabilities grading methods use. Subclasses set :attr:`capabilities`,
    implement the methods of those capabilities, and build themselves in :meth:`open`."""

    name: str  # the judge's identity in method ids
    capabilities: frozenset[Capability] = frozenset()
    answer_lead: str = ""  # what an answer to a prompt ending in "Answer:" starts with (" " for raw decoder-only LMs)
    max_input_tokens: int | None = None  # None: the backend does not cut prompts
    # How many callers may use the backend at once (each grading a chunk, in threads of their own): a
    # served model's requests then overlap across chunks; a local model computes one call at a time.
    parallel_calls: int = 1
    usage: Usage

    @classmethod
    def open(cls, model: str | None = None, *args: Any, **options: Any) -> "Backend":
        """Open the backend for ``model`` (None: its default) with its own ``options`` (each backend
        declares the keyword options it takes: this signature stands for any of theirs)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the backend holds (connections, worker threads)."""

    def __enter__(self) -> "Backend":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- prompts -----------------------------------------------------------------------------

    def count_tokens(self, text: str) -> int:
        raise NotImplementedError

    def fit(self, prompt: Prompt, *, context: str, **fields: str) -> str:
        """``prompt`` rendered with ``fields``; only its context is cut so that it fits."""
        return prompt.render(context=context, **fields)

    # --- capabilities --------------------------------------------------------------------------

    def generate(self, prompts: Sequence[str | Conversation], *, max_new_tokens: int = 32,
                 temperature: float = 0.0) -> list[str]:
        """Text per prompt (a text, or a conversation of turns): greedy at ``temperature`` 0, else sampled."""
        raise self._lacks(Capability.GENERATE)

    def next_token_labels(self, prompts: Sequence[str | Conversation], labels: Labels, *,
                          max_new_tokens: int = 32) -> list[NextToken]:
        raise self._lacks(Capability.LABEL_LOGPROBS)

    def continuation_logprobs(self, prompts: Sequence[str], continuations: Sequence[str]) -> list[tuple[float, int]]:
        """Per (prompt, continuation): summed log-probability of the continuation's tokens and their number."""
        raise self._lacks(Capability.CONTINUATION)

    def embed(self, texts: Sequence[str]) -> Any:
        """Unit-length embeddings, one row per text (numpy float32)."""
        raise self._lacks(Capability.EMBED)

    def extract(self, questions: Sequence[str], contexts: Sequence[str]) -> list[str]:
        """The answer span per (question, context); "" where the reader finds none."""
        raise self._lacks(Capability.EXTRACT)

    def require(self, needed: frozenset[Capability], who: str) -> None:
        """BackendError unless this backend has every capability in ``needed``."""
        require(needed, self.capabilities, who, f"{type(self).__name__} ({self.name})")

    def _lacks(self, capability: Capability) -> BackendError:
        return BackendError(f"backend {type(self).__name__} ({self.name}) cannot {capability.value}")


def require(needed: frozenset[Capability], offered: frozenset[Capability], who: str, backend: str) -> None:
    """BackendError naming what ``who`` needs and ``backend`` lacks, unless it offers all of ``needed``.

    :param needed: the capabilities ``who`` uses.
    :param offered: the capabilities the backend has.
    :param who: what needs them, as the message names it (a grading method, a command).
    :param backend: the backend's name, as the message names it.
    :raises BackendError: when a capability is missing."""
    missing = sorted(c.value for c in needed - offered)
    if missing:
        have = ", ".join(sorted(c.value for c in offered)) or "none"
        raise BackendError(f"{who} needs a backend that can {', '.join(missing)}; backend {backend} offers: {have}")


BUILT_IN = "exampp.llm.backends"  # the package whose modules are the built-in backends, by name
ENTRY_POINTS = "exampp.backends"  # the entry-point group of installed packages' backends: NAME = "module:Class"


def backend_names() -> list[str]:
    """Names :func:`open_backend` accepts: the modules of :mod:`exampp.llm.backends`, and the backends
    installed packages add (entry-point group :data:`ENTRY_POINTS`)."""
    return sorted({*_built_in(), *_installed()})


def backend_class(name: str) -> type[Backend]:
    """The backend class of module ``exampp.llm.backends.<name>`` (its ``BACKEND``), or of the installed
    package's entry point ``name`` (the class it names).

    :param name: the backend's name (:func:`backend_names`).
    :raises BackendError: for an unknown name, a package it needs that is missing, or a broken entry point."""
    if name in _installed():
        return _load(_installed()[name])
    if name not in _built_in():
        raise BackendError(f"unknown backend {name!r}; choose one of {', '.join(backend_names())}")
    try:
        return importlib.import_module(f"{BUILT_IN}.{name}").BACKEND
    except ImportError as exc:
        raise _missing_package(name, exc) from None


@cache
def _built_in() -> tuple[str, ...]:
    """The built-in backends: the modules of :data:`BUILT_IN`, listed where the package lies, not imported
    (each imports this module: the registry imports a backend only once it is chosen)."""
    spec = importlib.util.find_spec(BUILT_IN)
    folders = spec.submodule_search_locations if spec is not None else None
    return tuple(sorted(m.name for m in pkgutil.iter_modules(folders or []) if not m.name.startswith("_")))


@cache
def _installed() -> dict[str, EntryPoint]:
    """The installed packages' backends by name (a built-in's name stays the built-in's), not loaded."""
    built_in = set(_built_in())
    return {entry.name: entry for entry in entry_points(group=ENTRY_POINTS) if entry.name not in built_in}


def _load(entry: EntryPoint) -> type[Backend]:
    """The backend class an entry point names, or a BackendError saying which entry point fails, and why."""
    package = f" of the package {entry.dist.name}" if entry.dist is not None else ""
    where = f"its entry point {entry.name} = {entry.value!r} (group {ENTRY_POINTS}{package})"
    try:
        loaded = entry.load()
    except Exception as exc:  # a plugin's import may fail in any way: it is named, in one line
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise BackendError(f"backend {entry.name!r} cannot be loaded: {where} fails: {reason}") from None
    if not (isinstance(loaded, type) and issubclass(loaded, Backend)):
        raise BackendError(f"backend {entry.name!r} cannot be loaded: {where} names {loaded!r}, not a subclass "
                           "of exampp.llm.backend.Backend")
    return loaded


# The extra of pyproject.toml that brings each backend's packages.
BACKEND_EXTRAS = {"hf": "llm", "extractive": "llm", "embedding": "embed", "openai": "openai", "vllm": "vllm"}


def _missing_package(backend: str, exc: ImportError) -> BackendError:
    if backend not in _built_in():  # an installed package's backend: its own requirements
        return BackendError(f"backend {backend!r} needs the package {exc.name or exc}, which is not installed")
    extra = BACKEND_EXTRAS.get(backend, "llm")
    return BackendError(f"backend {backend!r} needs the package {exc.name or exc}: install the exampp extra "
                        f"'{extra}' (pip install 'exampp[{extra}]', or scripts/setup.sh ...,{extra}) or the package "
                        "itself")


@dataclass(frozen=True)
class BackendSpec:
    """Which backend to open, for which model, with which of its options (None values are left out:
    the backend's defaults apply)."""

    name: str
    model: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)  # like options, but left out where the backend takes none

    def given(self) -> dict[str, Any]:
        """The options the backend is opened with: those given, and the defaults it takes."""
        accepted = inspect.signature(backend_class(self.name).open).parameters
        takes_any = any(p.kind is p.VAR_KEYWORD for p in accepted.values())
        given = {k: v for k, v in self.defaults.items() if v is not None and (takes_any or k in accepted)}
        given.update({k: v for k, v in self.options.items() if v is not None})
        if not takes_any:
            wrong = sorted(set(given) - set(accepted))
            if wrong:
                flags = ", ".join("--" + k.replace("_", "-") for k in wrong)
                raise BackendError(f"backend {self.name!r} takes no {flags}")
        check_settings(given)  # what came through the Python API: a flag or exampp.toml was checked already
        return given

    def option(self, key: str) -> Any:
        """An option's value as the backend will get it (None: not given, or not taken)."""
        return self.given().get(key)

    def open(self) -> Backend:
        given = self.given()
        try:
            return backend_class(self.name).open(self.model, **given)
        except ImportError as exc:  # a package the backend imports on opening
            raise _missing_package(self.name, exc) from None


@contextmanager
def opened(backend: Backend | BackendSpec | None) -> Iterator[Backend | None]:
    """``backend`` for a ``with`` block: a spec is opened here and closed when the block ends; an
    open backend (the caller's to close) or None is what the block gets.

    :param backend: a spec to open, an open backend, or None."""
    if not isinstance(backend, BackendSpec):
        yield backend
        return
    with backend.open() as opened_here:
        yield opened_here


def open_backend(name: str, model: str | None = None, **options: Any) -> Backend:
    """Open backend ``name`` for ``model`` with its options.

    :param name: the backend (:func:`backend_names`: ``hf``, ``openai``, ``vllm``, ``embedding``, ...).
    :param model: the model to open (None: the backend's default).
    :param options: the backend's own keyword options (``base_url``, ``concurrency``, ``device``, ...).
    :raises BackendError: for an unknown backend, a missing package, or a model it cannot open."""
    return BackendSpec(name, model, options).open()
