"""The public API's docstrings document their parameters with Sphinx fields (``:param name: ...``), which the
generated reference (mkdocstrings, ``docstring_style: sphinx``) shows as parameter tables: each parameter of an
exported function's signature, or of an exported class's constructor (a dataclass's fields), has a field, and no
field names a parameter that is not there (a stale one, left after a rename). The same holds of every public function
of the modules the reference pages render (docs/reference/api/*.md).


A named tuple's fields are documented as attributes (``:ivar name: ...``): griffe sees no constructor of a
``NamedTuple`` class, so that a ``:param`` field there fails the site's strict build."""
from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from typing import NamedTuple

import exampp
from conftest import REPO

_FIELD = re.compile(r"^:(param|parameter|arg|argument|key|keyword|ivar|var)\s+(?:[^:\s]+\s+)?\**(\w+)\s*:", re.M)
_ATTRIBUTE = {"ivar", "var"}
_SKIPPED = {"self", "cls"}


def is_named_tuple(obj) -> bool:
    return inspect.isclass(obj) and issubclass(obj, tuple) and hasattr(obj, "_fields")


def documented(obj) -> list[str]:
    """The parameter names that the ``:param name:`` fields of ``obj``'s own docstring give, in order (for a
    named tuple, its ``:ivar name:`` fields)."""
    fields = _FIELD.findall(inspect.cleandoc(obj.__doc__ or ""))
    return [name for kind, name in fields if (kind in _ATTRIBUTE) == is_named_tuple(obj)]


def parameters(obj) -> tuple[list[str], set[str]]:
    """The parameters ``obj`` takes, as (each one that needs a field, the ``*args``/``**kwargs`` names).

    A class's are its constructor's: a dataclass's fields that ``__init__`` takes, otherwise the signature
    of calling the class. ``*args`` and ``**kwargs`` need no field of their own (a docstring may document
    them as a group), but a field may name them.
    """
    if dataclasses.is_dataclass(obj):
        return [f.name for f in dataclasses.fields(obj) if f.init], set()
    if is_named_tuple(obj):
        return list(obj._fields), set()
    try:
        signature = inspect.signature(obj)
    except ValueError:  # a builtin base's constructor, with no signature to read: nothing to document
        return [], set()
    named, grouped = [], set()
    for parameter in signature.parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            grouped.add(parameter.name)
        elif parameter.name not in _SKIPPED:
            named.append(parameter.name)
    return named, grouped


def gaps(obj, name: str | None = None) -> list[str]:
    """What ``obj``'s docstring lacks or says wrongly of its parameters, a line each (none when it is right)."""
    name = name or obj.__qualname__
    named, grouped = parameters(obj)
    fields = documented(obj)
    kind = "ivar" if is_named_tuple(obj) else "param"
    lines = [f"{name}: no ':{kind} {p}:'" for p in named if p not in fields]
    lines += [f"{name}: ':{kind} {p}:' names no parameter" for p in fields if p not in named and p not in grouped]
    lines += [f"{name}: ':{kind} {p}:' twice" for p in sorted({p for p in fields if fields.count(p) > 1})]
    return lines



def exported() -> dict[str, object]:
    """The functions and classes ``import exampp`` offers, by exported name."""
    found = {}
    for name in exampp.__all__:
        value = getattr(exampp, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            found[name] = value
    return found


def reference_functions() -> dict[str, object]:
    """The public functions of the modules the generated reference renders (the ``::: module`` lines of
    docs/reference/api/*.md), by qualified name: what the pages list beside the exports."""
    found = {}
    for page in sorted((REPO / "docs" / "reference" / "api").glob("*.md")):
        for name in re.findall(r"^::: (\S+)", page.read_text(encoding="utf-8"), flags=re.M):
            module = importlib.import_module(name)
            public = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
            for attribute in public:
                value = getattr(module, attribute)
                if inspect.isfunction(value) and value.__module__ == name:
                    found[f"{name}.{attribute}"] = value
    return found


def test_every_export_documents_its_parameters():
    found = exported()
    assert len(found) > 100  # the check reached the API (it did not skip everything)
    missing = [line for name, value in found.items() for line in gaps(value, name)]
    assert not missing, "\n" + "\n".join(missing)


def test_every_function_on_the_reference_pages_documents_its_parameters():
    found = reference_functions()
    assert len(found) > 200
    missing = [line for name, value in found.items() for line in gaps(value, name)]
    assert not missing, "\n" + "\n".join(missing)


def test_the_check_finds_a_missing_and_a_stale_field():
    def planted(run, qrels, *, depth=10, **options):
        """A planted function: ``depth`` and ``options`` are in its signature, ``k`` is not.

        :param run: the run.
        :param qrels: the judgments.
        :param k: a stale name.
        :param options: passed on.
        """

    assert gaps(planted, "planted") == ["planted: no ':param depth:'", "planted: ':param k:' names no parameter"]

    @dataclasses.dataclass
    class Planted:
        """A planted dataclass.

        :param first: the first field.
        """

        first: int
        second: int = 0
        derived: int = dataclasses.field(init=False, default=0)

    assert gaps(Planted, "Planted") == ["Planted: no ':param second:'"]

    class Pair(NamedTuple):
        """A planted named tuple: ``:param`` does not document its fields, ``:ivar`` does.

        :param first: not an attribute field.
        :ivar second: the second.
        """

        first: int
        second: int

    assert gaps(Pair, "Pair") == ["Pair: no ':ivar first:'"]
