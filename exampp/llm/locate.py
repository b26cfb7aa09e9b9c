"""Where a model loads from: a local folder, or a HuggingFace hub id (from the hub, or from the
local HuggingFace cache when the hub cannot be reached).

Every grader that loads a model asks :func:`locate_model` first and loads inside
:meth:`ModelSource.loading`, so that a missing folder, an uncached model without a hub, or a
folder that is no model each end in one :class:`~exampp.errors.ModelLoadError` saying what to do.

- A ``--model`` that looks like a path (absolute, starting with ``.`` or ``~``, or existing) is a
  local folder: it must hold ``config.json``, and the hub is never contacted for it.
- A hub id loads as usual when the hub answers. When ``HF_HUB_OFFLINE`` is set, or one quick TCP
  connect to the hub (``HF_ENDPOINT``, or the proxy that reaches it) fails, it loads from the
  local cache only: a cached model still loads, an uncached one fails at once instead of after
  huggingface_hub's retries.
"""
from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypedDict
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

from exampp.errors import ModelLoadError

DEFAULT_ENDPOINT = "https://huggingface.co"
PROBE_TIMEOUT_S = 2.0
LLM_REMEDY = ("Give a local copy of the model with --model PATH (a folder with config.json, weights and "
              "tokenizer files), or grade offline with --grader embedding.")
_TRUE = frozenset({"1", "ON", "YES", "TRUE"})  # huggingface_hub's spellings of a true variable


class LoadOptions(TypedDict):
    """The keyword arguments a located model is loaded with."""

    local_files_only: bool


@dataclass(frozen=True)
class ModelSource:
    """A located model: load ``name_or_path`` with :attr:`options`, inside :meth:`loading`."""

    name_or_path: str
    local_files_only: bool
    kind: str = "model"  # what the messages call it
    remedy: str = LLM_REMEDY  # what the user can do instead

    @property
    def options(self) -> LoadOptions:
        """Keyword arguments for ``from_pretrained`` (and SentenceTransformer) besides the name."""
        return {"local_files_only": self.local_files_only}

    @contextmanager
    def loading(self) -> Iterator[None]:
        """The loaders' errors (files missing, not a model of this kind) as one ModelLoadError; and
        no "Loading weights" bar of transformers' own, which would fill a log or a pipe and cut
        through exampp's bar on a terminal."""
        quiet_loading()
        try:
            yield
        except (OSError, ValueError) as error:  # huggingface_hub's errors subclass these too
            raise ModelLoadError(f"cannot load {self.kind} {self.name_or_path!r}: {error_reason(error)}. "
                                 f"{self.remedy}") from error


def error_reason(error: BaseException) -> str:
    """What a loader's error says, on one line: its first line, or its type's name when it says nothing."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def looks_like_path(spec: str) -> bool:
    """True for a ``--model`` meant as a folder: absolute, starting with ``.`` or ``~``, or existing."""
    return os.path.isabs(spec) or spec.startswith((".", "~")) or os.path.exists(spec)


def locate_model(spec: str, *, kind: str = "model", remedy: str = LLM_REMEDY) -> ModelSource:
    """The source to load ``spec`` (a folder or a hub id) from; ModelLoadError when it cannot be there."""
    if looks_like_path(spec):
        path = os.path.expanduser(spec)
        if not os.path.exists(path):
            raise ModelLoadError(f"no such model folder {path}")
        if not os.path.isdir(path):
            raise ModelLoadError(f"{path} is not a model folder: it is a file. {remedy}")
        if not os.path.isfile(os.path.join(path, "config.json")):
            raise ModelLoadError(f"{path} is not a model folder: it has no config.json. {remedy}")
        return ModelSource(path, True, kind, remedy)
    offline = _offline_reason()
    if offline is None:
        return ModelSource(spec, False, kind, remedy)
    if not _in_cache(spec):
        raise ModelLoadError(f"{kind} {spec!r} is not in the local HuggingFace cache and {offline}. {remedy}")
    return ModelSource(spec, True, kind, remedy)


def _offline_reason() -> str | None:
    """Why the hub is out of reach (None when it answered a TCP connect)."""
    for variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(variable, "").upper() in _TRUE:
            return f"{variable} is set"
    endpoint = os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT
    host, port = _first_hop(endpoint)
    try:
        socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S).close()
    except OSError:  # refused, unresolvable, timed out
        return f"the hub ({endpoint}) cannot be reached"
    return None


def _first_hop(url: str) -> tuple[str, int]:
    """Host and port a request to ``url`` connects to first: its proxy's when one applies."""
    parts = urlsplit(url)
    proxy = getproxies().get(parts.scheme)
    if proxy and not proxy_bypass(parts.hostname or ""):
        parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    return parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)


def _in_cache(repo_id: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    try:
        return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)
    except ValueError:  # not a valid repo id: it cannot be cached either
        return False


def quiet_loading() -> None:
    """Silence transformers' own progress bars (e.g. "Loading weights"): exampp shows its own."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # no LLM extra: nothing of transformers' will print
        return
    hf_logging.disable_progress_bar()
