"""``exampp bank``: make, import, review and change question banks (one module per subcommand family)."""
from __future__ import annotations

import click

from exampp.cli import LazyGroup

SUBCOMMANDS: dict[str, str] = {
    "generate": "exampp.cli.bank_generate:generate",
    "import": "exampp.cli.bank_io:import_bank",
    "export": "exampp.cli.bank_io:export_bank",
    "add": "exampp.cli.bank_edit:add",
    "remove": "exampp.cli.bank_edit:remove",
    "edit": "exampp.cli.bank_edit:edit",
    "disable": "exampp.cli.bank_edit:disable",
    "enable": "exampp.cli.bank_edit:enable",
    "log": "exampp.cli.bank_edit:log",
    "restore": "exampp.cli.bank_edit:restore",
    "review": "exampp.cli.bank_review:review",
    "impact": "exampp.cli.bank_impact:impact",
}


@click.group(cls=LazyGroup, lazy=SUBCOMMANDS)
def bank() -> None:
    """Question banks: generate them with an LLM, import and export them, review them against the
    grades, change them with a history, and see what a change does to the leaderboard."""
