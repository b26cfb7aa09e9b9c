"""``exampp exam``: multiple-choice exams generated from a document corpus."""
from __future__ import annotations

import click

from exampp.cli import LazyGroup

SUBCOMMANDS: dict[str, str] = {
    "generate": "exampp.cli.exam_generate:generate",
}


@click.group(cls=LazyGroup, lazy=SUBCOMMANDS)
def exam() -> None:
    """Multiple-choice exams generated document by document (Guinet et al.)."""
