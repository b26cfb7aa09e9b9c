"""Grading methods as value objects, parsed from their names like ir_measures measures.

``self-rating``, ``qa(verify=llm)``, ``direct:thomas``, ``embedding(thresholds=0.5/0.6/0.6/0.7/0.8)``:
a name, optionally ``:value`` for the method's shorthand parameter, optionally ``(key=value, ...)``.
A method is a frozen dataclass whose fields are its parameters (declared with :func:`param`); it
knows its prompt(s) and their version (:attr:`GradingMethod.prompt_id`), its grade scale and
default τ, what it needs from a question (an answer key, choices) and from a backend
(:class:`~exampp.llm.backend.Capability`), and it grades by asking a backend only through
:class:`~exampp.llm.backend.Backend`. ``str(method)`` is its canonical name (defaults left out),
which parses back to an equal method; the store files its grades under
``Method(store_name, judge, prompt_id)`` (:meth:`GradingMethod.method_id`).
"""
from __future__ import annotations

import dataclasses
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from exampp.collection.grades import Method
from exampp.collection.questions import Question
from exampp.errors import ExamppError
from exampp.grading.base import Grader, Judgment, Pair
from exampp.llm.backend import Backend, Capability, Usage

_NAME = re.compile(r"\s*([a-z][a-z0-9_-]*)(?::([^()\s]+))?\s*(?:\((.*)\))?\s*", re.DOTALL)
_TRUE, _FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off")


class MethodError(ExamppError, ValueError):
    """A grading method name that does not parse, an unknown parameter or a bad value."""


def param(help: str, *, choices: Sequence[str] | None = None, in_id: bool = True,
          parse: Callable[[str], Any] | None = None, show: Callable[[Any], str] | None = None) -> dict[str, Any]:
    """Metadata of a parameter field of a grading method.

    :param help: What it sets, in a few words.
    :param choices: Its allowed values, where they are few.
    :param in_id: It changes grades: it must then change :attr:`GradingMethod.prompt_id`.
    :param parse: How its text in a method name parses (default: as the type of the field's default).
    :param show: How its value prints in a method name (default: ``str``, booleans in lower case).

    """
    return {"help": help, "choices": tuple(choices) if choices is not None else None, "in_id": in_id,
            "parse": parse, "show": show}


def _parse_value(method: str, spec: dataclasses.Field, text: str) -> Any:
    meta = spec.metadata
    if meta.get("choices") is not None and text not in meta["choices"]:
        raise MethodError(f"{method}: {spec.name}={text!r} is not one of {', '.join(meta['choices'])}")
    if meta.get("parse") is not None:
        try:
            return meta["parse"](text)
        except ValueError as exc:
            raise MethodError(f"{method}: {spec.name}={text!r}: {exc}") from None
    kind = type(spec.default) if spec.default is not dataclasses.MISSING else str
    if kind is bool:
        if text.lower() not in _TRUE + _FALSE:
            raise MethodError(f"{method}: {spec.name}={text!r} is not true or false")
        return text.lower() in _TRUE
    try:
        return kind(text)
    except ValueError:
        raise MethodError(f"{method}: {spec.name}={text!r} is not a {kind.__name__}") from None


def show_value(spec: dataclasses.Field, value: Any) -> str:
    """A parameter value as it is written in a method name.

    :param spec: The parameter's field.
    :param value: Its value.
    """
    if spec.metadata.get("show") is not None:
        return spec.metadata["show"](value)
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class GradingMethod(ABC):
    """One grading method with its parameters. Subclasses are frozen dataclasses registered with
    :func:`register`."""

    name: ClassVar[str]
    description: ClassVar[str]
    shorthand: ClassVar[str | None] = None  # the parameter that "name:value" sets (direct:thomas)
    needs: ClassVar[tuple[str, ...]] = ()  # what a question must carry: "answers", "choices"
    direct: ClassVar[bool] = False  # judges passages against the query title, not exam questions
    # False for a check of the texts themselves (injection-check): its grades are stored and read like
    # all grades, but no measure, qrels or leaderboard ever takes them for relevance
    judges_relevance: ClassVar[bool] = True

    @property
    def whole_passages(self) -> bool:
        """Whether the method must see all of a passage's pairs in one call (one prompt lists them)."""
        return False
    default_backend: ClassVar[str | None] = "hf"  # None: the method needs no model
    judge: ClassVar[str] = "none"  # the judge's name in the method id of a method that needs no model
    top_grade: ClassVar[int] = 1
    tau: ClassVar[float] = 1.0  # default threshold at which a grade counts as answered

    # --- what it is ----------------------------------------------------------------------------

    @property
    @abstractmethod
    def prompt_id(self) -> str:
        """Prompt(s) and version(s): what makes two methods' grades comparable for one judge."""

    @property
    def requires(self) -> frozenset[Capability]:
        """Backend capabilities the method calls."""
        return frozenset({Capability.GENERATE})

    @property
    def store_name(self) -> str:
        """The name part of the store's method id."""
        return self.name

    @property
    def grades(self) -> tuple[int, ...]:
        """The grade scale: 0..top."""
        return tuple(range(self.top_grade + 1))

    def method_id(self, judge: str) -> Method:
        """The store's id of this method's grades by ``judge`` (a backend's name)."""
        return Method(self.store_name, judge, self.prompt_id)

    def usable(self, question: Question) -> bool:
        """Whether ``question`` carries what the method needs (an answer key, choices with the key)."""
        if "answers" in self.needs and not question.answers:
            return False
        if "choices" in self.needs and (not question.choices or question.correct_choice is None):
            return False
        return True

    # --- what it does --------------------------------------------------------------------------

    @abstractmethod
    def grade(self, backend: Backend | None, pairs: Sequence[Pair]) -> list[Judgment]:
        """Judgments in the order of ``pairs``, asking ``backend`` only through its interface."""

    def bind(self, backend: Backend | None, *, owned: bool = False) -> "BoundGrader":
        """This method with the backend that runs it: what the runner drives. ``owned``: the
        grader closes the backend when it is closed (else the backend is the caller's to close)."""
        return BoundGrader(self, backend, owned=owned)

    # --- names ---------------------------------------------------------------------------------

    @classmethod
    def parameters(cls) -> tuple[dataclasses.Field, ...]:
        return dataclasses.fields(cls)

    @classmethod
    def from_text(cls, text: str, shorthand: str | None, arguments: dict[str, str]) -> "GradingMethod":
        """The method from the parsed parts of its name (see :func:`exampp.grading.registry.parse_method`)."""
        specs = {f.name: f for f in cls.parameters()}
        if shorthand is not None:
            if cls.shorthand is None:
                raise MethodError(f"{text}: method {cls.name!r} takes no ':' value")
            if cls.shorthand in arguments:
                raise MethodError(f"{text}: {cls.shorthand} given twice")
            arguments = {cls.shorthand: shorthand, **arguments}
        unknown = sorted(set(arguments) - set(specs))
        if unknown:
            known = ", ".join(specs) or "none"
            raise MethodError(f"{text}: unknown parameter(s) {', '.join(unknown)} of {cls.name!r} (has: {known})")
        values = {key: _parse_value(text, specs[key], value) for key, value in arguments.items()}
        missing = [f.name for f in specs.values() if f.name not in values
                   and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
        if missing:
            raise MethodError(f"{text}: method {cls.name!r} needs {', '.join(missing)}")
        try:
            return cls(**values)
        except ValueError as exc:
            raise MethodError(f"{text}: {exc}") from None

    def __str__(self) -> str:
        head, arguments = self.name, []
        for spec in self.parameters():
            value = getattr(self, spec.name)
            if spec.name == self.shorthand:
                head += f":{show_value(spec, value)}"
            elif value != spec.default:
                arguments.append(f"{spec.name}={show_value(spec, value)}")
        return head + (f"({','.join(arguments)})" if arguments else "")


M = TypeVar("M", bound=type[GradingMethod])

# Filled by the method modules as they are imported. It lives here, beside the base class, rather than
# in the registry, so that a method module imports only this module and the registry's import of the
# method modules closes no circle.
_REGISTERED: dict[str, type[GradingMethod]] = {}


def register(method: M) -> M:
    """Class decorator: make the method ``method.name`` known to
    :func:`exampp.grading.registry.parse_method`.

    :param method: A :class:`GradingMethod` subclass.
    :raises ValueError: Another class is registered under the same name.
    """
    if method.name in _REGISTERED and _REGISTERED[method.name] is not method:
        raise ValueError(f"grading method {method.name!r} is registered twice")
    _REGISTERED[method.name] = method
    return method


def registered() -> dict[str, type[GradingMethod]]:
    """The methods registered so far, by name: the registry itself, not a copy (the registry module
    imports the method modules first)."""
    return _REGISTERED


def split_name(text: str) -> tuple[str, str | None, dict[str, str]]:
    """``name[:value][(key=value, ...)]`` → (name, value, {key: value}).

    :param text: A method name.
    :raises MethodError: The text does not parse.
    """

    match = _NAME.fullmatch(text)
    if match is None:
        raise MethodError(f"{text!r} is not a grading method name: name[:value][(key=value, ...)]")
    name, shorthand, inner = match.groups()
    arguments: dict[str, str] = {}
    if inner is not None and inner.strip():
        for part in inner.split(","):
            key, sep, value = part.partition("=")
            key, value = key.strip(), value.strip()
            if not sep or not key or not value:
                raise MethodError(f"{text}: {part.strip()!r} is not key=value")
            if key in arguments:
                raise MethodError(f"{text}: {key} given twice")
            arguments[key] = value
    return name, shorthand, arguments


class BoundGrader(Grader):
    """A grading method bound to the backend that runs it (None for a method without a model)."""

    def __init__(self, grading_method: GradingMethod, backend: Backend | None, *, owned: bool = False) -> None:
        if backend is None:
            if grading_method.default_backend is not None:
                raise MethodError(f"method {grading_method} needs a backend")
        else:
            backend.require(grading_method.requires, f"method {grading_method}")
        self.grading_method = grading_method
        self.backend = backend
        self.owned = owned
        self.name = str(grading_method)
        self.direct = grading_method.direct
        # Grader's attributes, fixed once the method and its backend are
        self.whole_passages = grading_method.whole_passages
        self.parallel_calls = backend.parallel_calls if backend is not None else 1

    @property
    def method(self) -> Method:
        judge = self.backend.name if self.backend is not None else self.grading_method.judge
        return self.grading_method.method_id(judge)

    def grade(self, pairs: Sequence[Pair]) -> list[Judgment]:
        return self.grading_method.grade(self.backend, pairs)

    def usable(self, question: Question) -> bool:
        return self.grading_method.usable(question)

    @property
    def usage(self) -> Usage | None:
        return self.backend.usage if self.backend is not None else None

    def close(self) -> None:
        """Release the backend (connections, worker threads) where it is the grader's own."""
        if self.owned and self.backend is not None:
            self.backend.close()

    def __enter__(self) -> "BoundGrader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
