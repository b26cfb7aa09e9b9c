"""Workspace configuration: an optional ``exampp.toml`` naming what ``exampp grade`` works on.

Flat ``key = value`` pairs; command-line flags override them. Relative paths are relative to
the file's folder (``irds:`` and ``pyserini:`` sources are left as they are)::

    topics = "topics/topics.jsonl"
    bank = "question_banks/questions.jsonl"
    corpus = "corpus/passages.jsonl"
    grader = "embedding"
    depth = 20
    tau = 4

Keys: see :data:`KEYS`. An unknown key, a value of the wrong type, or a number that breaks its
setting's rule (:mod:`exampp.setting_rules`: ``depth`` >= 1, a finite ``tau``...) is an :class:`InputError`
naming the file, the key's line and the key.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exampp.errors import InputError
from exampp.files.io import PathLike
from exampp.setting_rules import SettingError, check_setting

CONFIG_NAME = "exampp.toml"

# key -> (accepted types, what the value is, for messages)
KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "topics": ((str,), "topics file or irds:<dataset-id>"),
    "bank": ((str,), "question bank file"),
    "corpus": ((str,), "passage corpus: file, irds:<dataset-id> or pyserini:<index-dir>"),
    "responses": ((str,), "generated responses (RAG answers) to segment and grade"),
    "grader": ((str,), "grading method, e.g. self-rating, qa(verify=llm), direct:thomas"),
    "backend": ((str,), "backend: hf, openai, vllm, embedding, extractive [default: the method's]"),
    "model": ((str,), "model name or path (for openai: the served model's name)"),
    "base_url": ((str,), "OpenAI-compatible server's URL, e.g. http://localhost:8000/v1"),
    "api_key_env": ((str,), "environment variable holding the server's API key"),
    "tokenizer": ((str,), "local tokenizer folder of a served model (prompt fitting)"),
    "max_input_tokens": ((int,), "a served model's input length in tokens"),
    "endpoint": ((str,), "a server's endpoint: chat or completions"),
    "concurrency": ((int,), "requests in flight at most"),
    "adaptive_concurrency": ((bool,), "adapt the requests in flight to the server (false: always concurrency)"),
    "max_requests": ((int,), "requests a job may send at most"),
    "timeout": ((int, float), "seconds before a request is retried"),
    "max_retries": ((int,), "retries of a request"),
    "gpu_memory_utilization": ((int, float), "vllm: share of each GPU's memory for weights and KV cache"),
    "tensor_parallel_size": ((int,), "vllm: GPUs to split the model over"),
    "max_model_len": ((int,), "vllm: context length (prompt and output) the engine plans for"),
    "depth": ((int,), "top-k passages of each run to pool"),
    "workspace": ((str,), "workspace folder (grade store, qrels/)"),
    "store": ((str,), "grade store file"),
    "device": ((str,), "auto, cpu or cuda[:n]"),
    "dtype": ((str,), "model weights' dtype"),
    "batch_size": ((int,), "pairs per forward pass"),
    "max_batch_tokens": ((int,), "hf: padded tokens per forward pass at most"),
    "threads": ((int,), "hf: torch's CPU threads"),
    "compile": ((bool,), "hf: torch.compile the model"),
    "tau": ((int, float), "grade at which a question counts as answered (EXAM-Cover)"),
    "min_grade": ((int, float), "grade from which qrels labels are 1 (binary qrels)"),
    "label": ((str,), "EXAM label of the qrels: max, count, sum or expected"),
    "cascade": ((str,), "grading cascade: first stage and target recall, e.g. embedding:0.95"),
    "cascade_threshold": ((int, float), "the cascade's threshold on its first stage's score, instead of a recall"),
    "engine": ((str,), "where the grader runs: local (this process) or ray (Ray workers)"),
    "workers": ((int,), "Ray workers, one model replica each [default: one per GPU, else 1]"),
    "ray_address": ((str,), "a running Ray cluster's address [default: start Ray on this machine]"),
    "batch_api": ((bool,), "openai: grade through the OpenAI Batch API (half the price, answers within a day)"),
    "batch_price": ((str,), "with batch_api: IN,OUT dollars per million prompt and completion tokens"),
    "batch_poll": ((int, float), "with batch_api: seconds between looks at a batch"),
    "canaries": ((int,), "questions of other queries each pooled passage is also graded against (audit's canaries)"),
}
# options passed to the backend; one that a backend does not take is left out when it comes from the file
BACKEND_KEYS = ("device", "dtype", "batch_size", "max_batch_tokens", "threads", "compile", "base_url", "api_key_env",
                "tokenizer", "max_input_tokens", "endpoint", "concurrency", "adaptive_concurrency", "max_requests",
                "timeout", "max_retries", "gpu_memory_utilization", "tensor_parallel_size", "max_model_len")
PATH_KEYS = ("topics", "bank", "corpus", "responses", "workspace", "store", "tokenizer")
_SOURCE_PREFIXES = ("irds:", "pyserini:")
_TOML_LINE = re.compile(r"at line (\d+)")


@dataclass(frozen=True)
class Config:
    """Settings from a config file (empty when there is none); paths already resolved."""

    values: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    def get(self, key: str, default: Any = None) -> Any:
        if key not in KEYS:
            raise KeyError(key)
        return self.values.get(key, default)

    def pick(self, key: str, flag: Any, default: Any = None) -> Any:
        """The flag's value when given (not None), else the file's, else ``default``."""
        return flag if flag is not None else self.get(key, default)


def key_line(text: str, key: str) -> int | None:
    """The line of a TOML document where ``key`` (or the table ``[key]``) is set, None when not found.

    :param text: The document.
    :param key: A top-level key.
    """
    pattern = re.compile(rf"""^\s*(\[\s*)?(["']?){re.escape(key)}\2\s*[=\]\.]""")
    return next((n for n, line in enumerate(text.splitlines(), start=1) if pattern.match(line)), None)


def _resolve(value: str, base: Path) -> str:
    if value.startswith(_SOURCE_PREFIXES):
        if value.startswith("pyserini:"):
            return "pyserini:" + str(base / Path(value[len("pyserini:"):]).expanduser())
        return value
    return str(base / Path(value).expanduser())


def value_problem(key: str, value: Any) -> str | None:
    """What is wrong with ``value`` for the setting ``key`` of :data:`KEYS` (its type, its rule), or None.

    :param key: A key of :data:`KEYS`.
    :param value: Its value, as TOML (or another source of typed settings) gives it.
    """
    types, what = KEYS[key]
    if isinstance(value, bool) is not (bool in types) or not isinstance(value, types):
        kind = ("true or false" if bool in types else "a string" if str in types else "a number" if float in types
                else "an integer")
        return f"key {key!r} ({what}) must be {kind}, found {value!r}"
    try:
        check_setting(key, value)
    except SettingError as exc:
        return str(exc)
    return None


def read_toml(path: PathLike, what: str) -> tuple[dict[str, Any], str]:
    """A TOML file's values and its text (for :func:`key_line`).

    :param path: The file.
    :param what: What it is, for the message when it is missing (``no such <what>``).
    :raises InputError: A missing or unreadable file, or invalid TOML, naming the line.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, None, f"no such {what}") from None
    except (OSError, ValueError) as exc:  # ValueError: not UTF-8, or a NUL byte in the file name
        raise InputError(path, None, f"cannot read: {exc}") from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        match = _TOML_LINE.search(str(exc))
        raise InputError(path, int(match.group(1)) if match else None, f"invalid TOML: {exc}") from None


def read_config(path: PathLike) -> Config:
    """Read and check a config file."""
    path = Path(path)
    data, text = read_toml(path, "config file")
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in KEYS:
            raise InputError(path, key_line(text, key),
                             f"unknown key {key!r}; known keys: {', '.join(KEYS)}")
        problem = value_problem(key, value)
        if problem is not None:
            raise InputError(path, key_line(text, key), problem)
        what = KEYS[key][1]
        if key in PATH_KEYS:
            assert isinstance(value, str)  # every path key's type is str (KEYS), checked above
            try:
                if "\0" in value:
                    raise ValueError("a path cannot hold a NUL character")
                value = _resolve(value, path.parent)
            except (ValueError, RuntimeError) as exc:  # RuntimeError: expanding '~user' of no such user
                raise InputError(path, key_line(text, key), f"key {key!r} ({what}): {exc}") from None
        values[key] = value
    return Config(values, path)


def load_config(path: PathLike | None = None, directory: PathLike = ".") -> Config:
    """The config at ``path``, else ``directory/exampp.toml`` when it exists, else an empty one.

    :param path: A configuration file to read; it must exist.
    :param directory: Where to look for ``exampp.toml`` when no ``path`` is given. ``exampp grade``
        passes its ``-w`` folder when given, else the current folder.
    :raises InputError: A missing ``path``, invalid TOML, an unknown key or a bad value, naming its line.

    """

    if path is not None:
        return read_config(path)
    default = Path(directory) / CONFIG_NAME
    return read_config(default) if default.is_file() else Config()
