"""scikit-learn's estimator protocol for the IRT estimators: ``get_params``/``set_params`` and ``clone``.

An estimator's parameters are its ``__init__`` arguments, stored under the same names and never
changed by ``fit``; so ``type(m)(**m.get_params())`` builds an unfitted copy with the same settings
(what scikit-learn's own ``clone`` does, which works on these estimators too).
"""
from __future__ import annotations

import copy
import inspect
from typing import Any, TypeVar

E = TypeVar("E", bound="Estimator")


class Estimator:
    """Base of the IRT estimators: parameters from the ``__init__`` signature."""

    @classmethod
    def _param_names(cls) -> list[str]:
        parameters = inspect.signature(cls.__init__).parameters.values()
        return sorted(p.name for p in parameters if p.name != "self" and p.kind == p.POSITIONAL_OR_KEYWORD)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor parameters, by name. ``deep`` is scikit-learn's: no parameter of these
        estimators is itself an estimator, so deep and shallow are the same."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self: E, **params: Any) -> E:
        """Set constructor parameters by name (unknown names are a ValueError); returns self."""
        valid = self._param_names()
        unknown = sorted(set(params) - set(valid))
        if unknown:
            raise ValueError(f"invalid parameter(s) {', '.join(map(repr, unknown))} for {type(self).__name__}: "
                             f"use {', '.join(valid)}")
        for name, value in params.items():
            setattr(self, name, value)
        return self


def clone(estimator: E) -> E:
    """A new, unfitted estimator with copies of ``estimator``'s parameters."""
    return type(estimator)(**copy.deepcopy(estimator.get_params(deep=False)))
