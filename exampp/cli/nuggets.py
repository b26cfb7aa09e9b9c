"""``exampp nuggets``: RAG answers judged by nuggets, as the TREC RAG track judges them."""
from __future__ import annotations

import click

from exampp.cli import LazyGroup

SUBCOMMANDS: dict[str, str] = {
    "assign": "exampp.cli.nugget_assign:assign",
    "score": "exampp.cli.nugget_score:score",
    "agree": "exampp.cli.nugget_agree:agree",
}


@click.group(cls=LazyGroup, lazy=SUBCOMMANDS)
def nuggets() -> None:
    """Nugget evaluation of RAG answers (AutoNuggetizer, TREC 2024 RAG): assign a topic's nuggets
    to every answer with an LLM or offline, score answers and runs (V, A, W, strict and not), and
    measure an assignment's agreement with another (the official one)."""
