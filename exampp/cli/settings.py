"""Numeric flags checked while the command line is read: a flag that sets a setting of
:mod:`exampp.setting_rules` keeps that setting's rule and gives its message (the one exampp.toml and the
Python API give); the other number flags refuse NaN and the infinities, which pass click's range checks."""
from __future__ import annotations

import math
from typing import Any

import click

from exampp.setting_rules import RULES, SettingError, check_setting


class Setting(click.ParamType):
    """The click type of a flag that sets setting ``key``: ``Invalid value for '--depth': depth must be ...``."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.integer = RULES[key].integer
        self.name = "integer" if self.integer else "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            try:  # "5" is an integer, as exampp.toml reads it, so that a message quotes the value alike
                value = int(value)
            except ValueError:
                value = (click.INT if self.integer else click.FLOAT).convert(value, param, ctx)
        try:
            return check_setting(self.key, value)
        except SettingError as exc:
            self.fail(str(exc), param, ctx)


class FiniteRange(click.FloatRange):
    """click's FloatRange without NaN and the infinities (NaN passes every comparison of a range)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{number!r} is not a finite number", param, ctx)
        return number
