"""``exampp assess``: people in the loop. Choose the pairs assessors should judge, let them judge
in a browser, and correct the judge's leaderboard with their labels, with intervals that hold."""
from __future__ import annotations

import click

from exampp.cli import LazyGroup

SUBCOMMANDS: dict[str, str] = {
    "sample": "exampp.cli.assess_sample:sample",
    "estimate": "exampp.cli.assess_estimate:estimate",
    "agree": "exampp.cli.assess_agree:agree",
    "plan": "exampp.cli.assess_plan:plan",
    "serve": "exampp.cli.assess_serve:serve",
    "export": "exampp.cli.assess_export:export",
    "import": "exampp.cli.assess_import:import_cmd",
}


@click.group(cls=LazyGroup, lazy=SUBCOMMANDS)
def assess() -> None:
    """A human sample to check the judge: draw the pairs to judge (`sample`), judge them in a
    browser (`serve`), move them between tools (`export`, `import`), and estimate every run's
    measures from judge and sample together (`estimate`), with the judge's agreement (`agree`)
    and the labels a target width needs (`plan`)."""
