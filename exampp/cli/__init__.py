"""The ``exampp`` command: a thin click layer over the Python API.

Subcommands live one per module and are imported only when invoked, so ``exampp --help``
stays fast and a command's heavy dependencies are loaded only by that command.
"""
from __future__ import annotations

import importlib
from typing import Any

import click

from exampp.errors import ExamppError, Interrupted

# command name -> "module:attribute" (each module holds one click command)
COMMANDS: dict[str, str] = {
    "eval": "exampp.cli.eval_cmd:eval_cmd",
    "import": "exampp.cli.import_cmd:import_cmd",
    "cover": "exampp.cli.scores:cover",
    "audit": "exampp.cli.audit:audit",
    "qrels": "exampp.cli.scores:qrels",
    "leaderboard": "exampp.cli.scores:leaderboard",
    "correlate": "exampp.cli.correlate:correlate",
    "agree": "exampp.cli.agree:agree",
    "significance": "exampp.cli.significance:significance",
    "grade": "exampp.cli.grade:grade",
    "irt": "exampp.cli.irt:irt",
    "bank": "exampp.cli.bank:bank",
    "exam": "exampp.cli.exam:exam",
    "meta-evaluate": "exampp.cli.meta_evaluate:meta_evaluate",
    "report": "exampp.cli.report:report",
    "nuggets": "exampp.cli.nuggets:nuggets",
    "support": "exampp.cli.support:support",
    "assess": "exampp.cli.assess:assess",
    "validate": "exampp.cli.validate:validate",
}


class LazyGroup(click.Group):
    """A group whose subcommands (``lazy``: name -> "module:attribute") are imported when used."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = COMMANDS if lazy is None else lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self.lazy)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self.lazy.get(cmd_name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)

    def invoke(self, ctx: click.Context) -> object:
        # Bad input, an unwritable output, a model that cannot load: the user's to fix, so one
        # line naming what and where, no traceback.
        try:
            return super().invoke(ctx)
        except ExamppError as exc:
            raise click.ClickException(str(exc)) from None
        except Interrupted as exc:  # Ctrl-C in a job that keeps its work: what was kept, not "Aborted!"
            click.echo(f"interrupted: {exc.kept}", err=True)
            ctx.exit(130)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="exampp")
def main() -> None:
    """EXAM++ answerability evaluation: question banks, LLM grading, EXAM-Cover and EXAM-Qrels.

    \b
    Example:
      exampp leaderboard runs/ --qrels qrels/official.qrels -m nDCG@20 -m P@20
    """
