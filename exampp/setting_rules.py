"""The rules of the numeric settings, one per key, checked wherever a value comes from.

A setting comes from a key of ``exampp.toml`` (:func:`exampp.formats.exampp_toml.read_config`), a command-line
flag (:class:`exampp.cli.settings.Setting`, the click type of the flags that set one) or the Python
API (:class:`~exampp.api.grade.GradeJob`, :func:`~exampp.api.grade.grade_collection`, a backend's
options in :class:`~exampp.llm.backend.BackendSpec`). Each source asks :func:`check_setting`, so the
message is the same wherever the value came from; the source puts where in front of it
(``exampp.toml:3: depth must be ...``, ``Invalid value for '--depth': depth must be ...``).

NaN and infinities are refused everywhere: compared with a threshold they count nothing, and
as a time-out or a count they end in a traceback deep inside a library.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

from exampp.defaults import CAUSAL_OUTPUT_ROOM
from exampp.errors import ExamppError

MIN_INPUT_TOKENS = 32  # below any model's input length: a prompt template alone takes about this many
MAX_THREADS = 1024  # torch takes a C int, and starts every thread it is given
MAX_TIMEOUT = 86_400.0  # a day: a longer wait overflows the platform's timers


class SettingError(ExamppError, ValueError):
    """A setting's value breaks its rule: ``<key> must be <rule>, found <value>``."""


@dataclass(frozen=True)
class Rule:
    """Integers or finite numbers within bounds (``None``: unbounded; ``low_open``: the low bound excluded)."""

    integer: bool
    low: float | None = None
    high: float | None = None
    low_open: bool = False

    def holds(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, int if self.integer else (int, float)):
            return False
        if isinstance(value, float) and not math.isfinite(value):  # an int is finite, if too large for a float
            return False
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return self.high is None or value <= self.high

    def __str__(self) -> str:
        kind = "an integer" if self.integer else "a number" if self.high is not None else "a finite number"
        if self.low is not None and self.high is not None:
            return f"{kind} in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}]"
        if self.low is not None:
            return f"{kind} {'>' if self.low_open else '>='} {self.low:g}"
        return kind


_COUNT = Rule(integer=True, low=1)
_FINITE = Rule(integer=False)

# setting -> its rule: the numeric keys of exampp.toml (exampp.formats.exampp_toml.KEYS), and chunk_size (flag and
# API only)
RULES: dict[str, Rule] = {
    "depth": _COUNT,
    "tau": _FINITE,  # within the method's grades: check_grades
    "min_grade": _FINITE,
    "chunk_size": _COUNT,
    "batch_size": _COUNT,
    "max_batch_tokens": _COUNT,
    "threads": Rule(integer=True, low=1, high=MAX_THREADS),
    "concurrency": _COUNT,
    "max_requests": _COUNT,
    "timeout": Rule(integer=False, low=0, high=MAX_TIMEOUT, low_open=True),
    "max_retries": Rule(integer=True, low=0),
    "max_input_tokens": Rule(integer=True, low=MIN_INPUT_TOKENS),
    "gpu_memory_utilization": Rule(integer=False, low=0, high=1, low_open=True),
    "tensor_parallel_size": _COUNT,
    "max_model_len": Rule(integer=True, low=CAUSAL_OUTPUT_ROOM, low_open=True),
    "cascade_threshold": _FINITE,
    "workers": _COUNT,
    "canaries": Rule(integer=True, low=0),
    "batch_poll": Rule(integer=False, low=0, high=MAX_TIMEOUT, low_open=True),
}


def check_setting(key: str, value: Any) -> Any:
    """``value`` when it keeps the rule of setting ``key`` (None, not given, always does; a key
    without a rule is not checked here), else SettingError."""
    rule = RULES.get(key)
    if value is None or rule is None or rule.holds(value):
        return value
    raise SettingError(f"{key} must be {rule}, found {value!r}")


def check_settings(values: dict[str, Any]) -> None:
    """:func:`check_setting` on every item of ``values``."""
    for key, value in values.items():
        check_setting(key, value)


class CheckedSettings:
    """Base of a job's frozen spec: its fields with a rule (depth, tau, chunk_size...) are checked when
    the spec is made, however it was made; the other fields have none to keep."""

    def __post_init__(self) -> None:
        check_settings(vars(self))


class GradeScale(Protocol):
    """What :func:`check_grades` needs of a grading method (:class:`~exampp.grading.method.GradingMethod`):
    settings sit below grading, so they name the one attribute rather than import the class."""

    @property
    def top_grade(self) -> int: ...


def check_grades(method: GradeScale | None, *, tau: float | None, min_grade: float | None = None,
                 label: str = "max") -> None:
    """SettingError when ``tau`` or ``min_grade`` breaks its rule, or, ``method`` being known, when
    ``tau`` (or ``min_grade`` of a label on the grade scale: ``max``, ``expected``) lies outside
    ``(0, top grade]``, the method's grades above 0: at or below 0 every question counts as answered,
    above the top none does."""
    check_settings({"tau": tau, "min_grade": min_grade})
    if method is None:
        return
    top = method.top_grade
    for key, value in [("tau", tau)] + ([("min_grade", min_grade)] if label in ("max", "expected") else []):
        if value is not None and not 0 < value <= top:
            raise SettingError(f"{key} must be a grade of {method} in (0, {top:g}], found {value!r}")
