"""The grading methods by name: each module of :mod:`exampp.grading.methods` registers its methods
with :func:`exampp.grading.method.register`, so adding a method is adding one file there. Installed packages add theirs
through the entry-point group ``exampp.grading_methods`` (each entry a module to import).

Method modules import no model libraries (methods talk to backends), so discovering them all is
cheap; backends, and torch behind them, load only when a grader is made.
"""
from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from functools import cache, lru_cache
from importlib.metadata import entry_points
from typing import Any

from exampp.collection.grades import SELF_RATING, Method
from exampp.grading.method import (
    BoundGrader,
    GradingMethod,
    MethodError,
    registered,
    show_value,
    split_name,
)
from exampp.llm.backend import Backend, BackendSpec, backend_class, require

ENTRY_POINTS = "exampp.grading_methods"
# Names the command line accepted before methods took parameters.
ALIASES = {"qa-llm": "qa(verify=llm)"}

@cache
def _discover() -> None:
    from exampp.grading import methods

    for module in pkgutil.iter_modules(methods.__path__):
        importlib.import_module(f"{methods.__name__}.{module.name}")
    for entry in entry_points(group=ENTRY_POINTS):
        entry.load()


def methods() -> dict[str, type[GradingMethod]]:
    """Every registered method class by name, sorted."""
    _discover()
    return dict(sorted(registered().items()))


def method_names() -> list[str]:
    return list(methods())


def parse_method(text: str) -> GradingMethod:
    """The method a name gives.

    :param text: A method name with its parameters (``self-rating``, ``qa(verify=llm)``, ``direct:thomas``...).
    :raises MethodError: An unknown method or bad parameters, naming what is wrong.
    """
    name, shorthand, arguments = split_name(ALIASES.get(text.strip(), text))
    cls = methods().get(name)
    if cls is None:
        raise MethodError(f"unknown grading method {name!r}; choose one of {', '.join(method_names())} "
                          "(exampp grade --list-graders)")
    return cls.from_text(text.strip(), shorthand, arguments)


def as_method(method: str | GradingMethod) -> GradingMethod:
    """The method itself, or the one a name gives (:func:`parse_method`).

    :param method: A grading method, or its name.
    """
    return parse_method(method) if isinstance(method, str) else method


def stored_method(method_id: str) -> GradingMethod | None:
    """The method whose grades a store method id holds (its name part), None when unknown here.

    :param method_id: A store method id.
    """
    name = Method.parse(method_id).name if "|" in method_id else method_id
    try:
        return parse_method(name)
    except MethodError:
        return None


@lru_cache(maxsize=64)  # a file names a few methods; a hostile one, one per line: bounded
def top_grade(method_name: str) -> int:
    """The top of the grade scale of the method whose grades are filed under ``method_name``; for a
    method unknown here (a plugin not installed, a reference prompt class), the reference tool's
    self-rating scale."""
    try:
        known = stored_method(method_name)
    except ValueError:  # not a method name at all ('|' in it): refused as such once the method is named
        known = None
    return (known or parse_method(SELF_RATING)).top_grade


def default_tau(method: str, grades: Any = None) -> float:
    """The τ at which a grade counts as answered: the method's default (4 for 0-5 self-ratings, 1
    for 0/1 grades).

    :param method: A method name or a store method id.
    :param grades: For a method unknown here, its grades (a sequence or the store's DataFrame): τ is
        1 when they are all 0 or 1, else 4.
    """
    known = stored_method(method)
    if known is not None:
        return known.tau
    values = grades["grade"] if hasattr(grades, "columns") else grades
    if values is not None and len(values) and all(float(v) in (0.0, 1.0) for v in values):
        return 1.0
    return 4.0


def check_backend(method: GradingMethod, backend: str) -> None:
    """Check, before anything is opened, that a backend has what a method requires.

    :param method: The grading method.
    :param backend: The backend's name.
    :raises BackendError: The backend lacks it.
    """

    require(method.requires, backend_class(backend).capabilities, f"method {method}", repr(backend))


def make_grader(method: str | GradingMethod, backend: Backend | BackendSpec | str | None = None,
                model: str | None = None, **options: Any) -> BoundGrader:
    """The grader of ``method`` on ``backend``. Close it (or use it in a ``with`` block) to release a
    backend it opened.

    :param method: The grading method, or its name (:func:`parse_method`).
    :param backend: An open backend, a spec, a backend name, or None for the method's default backend.
    :param model: The model a backend opened by name loads (the backend's default when None).
    :param options: Options of a backend opened by name, e.g. ``device``, ``batch_size``.
    :raises BackendError: The backend lacks what the method requires (checked before it is opened).
    """

    grading_method = as_method(method)
    if isinstance(backend, Backend):
        return grading_method.bind(backend)
    spec = backend if isinstance(backend, BackendSpec) else None
    name = backend if isinstance(backend, str) else grading_method.default_backend
    if spec is None and name is not None:
        spec = BackendSpec(name, model, options)
    if spec is None:
        return grading_method.bind(None)
    check_backend(grading_method, spec.name)
    opened = spec.open()
    try:
        return grading_method.bind(opened, owned=True)
    except BaseException:
        opened.close()
        raise


def describe_methods() -> str:
    """What ``exampp grade --list-graders`` prints: each method, its scale, needs and parameters."""
    lines = []
    for name, cls in methods().items():
        example = cls.from_text(name, None, {}) if _defaults_complete(cls) else None
        top = example.grades[-1] if example is not None else "1 or 0-2 by prompt"
        scale = f"grades 0-{top}, default tau {cls.tau:g}"
        extra = [scale, f"backend {cls.default_backend or 'none'}"]
        if cls.needs:
            extra.append("needs " + " and ".join(cls.needs))
        lines.append(f"{name}  ({'; '.join(extra)})")
        lines.append(f"    {cls.description}")
        if example is not None:
            lines.append(f"    prompt: {example.prompt_id}")
        for spec in cls.parameters():
            meta = spec.metadata
            default = "" if spec.default is dataclasses.MISSING else f" [default: {show_value(spec, spec.default)}]"
            choices = f" {{{'|'.join(meta['choices'])}}}" if meta.get("choices") else ""
            form = f"{name}:{spec.name.upper()}" if spec.name == cls.shorthand else f"{spec.name}=..."
            same = "" if meta.get("in_id", True) else " (the same grades either way)"
            lines.append(f"    {form}{choices}{default}: {meta.get('help', '')}{same}")
    aliases = ", ".join(f"{old} = {new}" for old, new in ALIASES.items())
    lines.append(f"aliases: {aliases}")
    return "\n".join(lines)


def _defaults_complete(cls: type[GradingMethod]) -> bool:
    return all(f.default is not dataclasses.MISSING for f in cls.parameters())
