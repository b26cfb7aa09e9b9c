"""Measure options checked while the command line is read: a bad name is a usage error naming
the option, before any run or qrels file is opened (:func:`exampp.scoring.parse_measures`)."""
from __future__ import annotations

import click


def _columns(names: tuple[str, ...]) -> list[str]:
    from exampp.scoring import MeasureError, parse_measures

    try:
        return [column for column, _ in parse_measures(names)]
    except MeasureError as error:
        raise click.BadParameter(str(error)) from None


def check_measures(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """Callback of a repeatable measure option."""
    _columns(value)
    return value


def check_one_measure(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Callback of an option that names exactly one measure (a multi-valued trec_eval name is refused)."""
    if value is not None:
        columns = _columns((value,))
        if len(columns) != 1:
            raise click.BadParameter(f"{value!r} names {len(columns)} measures ({', '.join(columns)}); give one")
    return value
