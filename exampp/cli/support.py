"""``exampp support``: does the segment an answer's sentence cites support it (TREC 2024 RAG)?"""
from __future__ import annotations

import click

from exampp.cli import LazyGroup

SUBCOMMANDS: dict[str, str] = {
    "measures": "exampp.cli.support_measures:measures",
    "assess": "exampp.cli.support_assess:assess",
    "agree": "exampp.cli.support_agree:agree",
}


@click.group(cls=LazyGroup, lazy=SUBCOMMANDS)
def support() -> None:
    """Citation support of RAG answers (Thakur et al. 2025): per-run support measures from
    judgment files, judging (sentence, cited segment) pairs 0/1/2 with an LLM, and the agreement
    of two judgment files."""
