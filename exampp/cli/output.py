"""Printing tables the same way in every command: aligned text for people, TSV or JSON for tools."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from exampp.cli.settings import FiniteRange, Setting
from exampp.defaults import DEPTH, TOP_TIES
from exampp.formats.eval_results import LINE_FORMATS

if TYPE_CHECKING:  # pandas is imported by what makes tables: `exampp eval` starts without it
    import pandas as pd

FORMATS = ("text", "tsv", "json")


def format_option_of(*formats: str, help: str = "Output format."):
    """The ``--format`` option (parameter ``fmt``, default the first format) of a command that
    cannot honour all of :data:`FORMATS`."""
    return click.option("--format", "fmt", type=click.Choice(formats), default=formats[0], show_default=True,
                        help=help)


format_option = format_option_of(*FORMATS)
"""``--format text|tsv|json``: every command that prints tables takes it."""



class InputPath(click.Path):
    """A file or folder the command reads. A missing one is told as every reader tells bad input
    (``Error: runs/x.run: no such file``, exit 1) rather than as a misuse of the command (click's
    usage block, exit 2): the command was used right, a file is not there."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(exists=True, **kwargs)

    def convert(self, value, param, ctx):
        import os

        from exampp.errors import InputError

        if not (self.allow_dash and value == "-") and not os.path.exists(value):
            what = "file or folder" if self.file_okay and self.dir_okay else "folder" if self.dir_okay else "file"
            raise InputError(value, None, f"no such {what}")
        return super().convert(value, param, ctx)


FILE = InputPath(dir_okay=False, allow_dash=True)  # an input file, - for standard input
RESPONSES = InputPath(allow_dash=True)  # RAG answers: a file, a folder of files (AutoJudge reports), or -

# The options of the commands that read a workspace's grades.
workspace_option = click.option(
    "--workspace", "-w", type=click.Path(file_okay=False), default=".", show_default=True,
    help="Workspace folder (grades.sqlite, question_banks/, runs/).",
)
progress_option = click.option("--progress/--no-progress", default=True, show_default=True,
                               help="Progress on stderr: a bar on a terminal, else (a log, CI) "
                                    "a line every 10 s with the rate and an ETA.")
method_option = click.option("--method", help="Grading method id in the store (default: the only one there).")
depth_option = click.option(
    "--depth", "-k", type=Setting("depth"), default=DEPTH, show_default=True, help="Top-k passages of each run."
)


def check_method(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """The callback of a command's ``--grader``: a method name that does not parse is a usage
    error, before anything is read."""
    if value is not None:
        from exampp.grading.method import MethodError
        from exampp.grading.registry import parse_method

        try:
            parse_method(value)
        except MethodError as exc:
            raise click.BadParameter(str(exc)) from None
    return value


def render(table: pd.DataFrame, fmt: str, *, decimals: int = 4) -> str:
    """A DataFrame as text (aligned, rounded), TSV or JSON (list of records), floats to 12 significant digits."""
    from exampp.report.records import dumps, records, tsv

    if fmt == "json":
        return dumps(records(table), indent=2)
    if fmt == "tsv":
        return tsv(table).rstrip("\n")
    return table.to_string(index=False, float_format=lambda v: f"{v:.{decimals}f}")


def bootstrap_options(command):
    """``--bootstrap N --seed S --confidence C``: symmetric bootstrap intervals over N resamplings of the queries."""
    options = [
        click.option("--bootstrap", type=click.IntRange(min=0), default=0, metavar="N",
                     help="Bootstrap over queries: N resamplings give each score a confidence interval (0: none)."),
        click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap's draws."),
        click.option("--confidence", type=FiniteRange(0, 1, min_open=True, max_open=True), default=0.95,
                     show_default=True, help="Confidence level of the bootstrap intervals."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def check_bootstrap_output(bootstrap: int, per_query: bool, fmt: str) -> None:
    """Intervals are of the means: a per-query table, or a per-topic results format, has none to print.

    :param bootstrap: The ``--bootstrap`` resamplings (0: none).
    :param per_query: ``--per-query`` was given.
    :param fmt: The ``--format``.
    :raises click.UsageError: ``--bootstrap`` with either.
    """
    if bootstrap and (per_query or fmt in EVAL_RESULT_FORMATS):
        raise click.UsageError(f"--bootstrap gives intervals of the means: drop "
                               f"{'--per-query' if per_query else f'--format {fmt}'}")


top_ties_option = click.option(
    "--top-ties", type=click.Choice(TOP_TIES), default="include", show_default=True,
    help="kendall_top's runs tied at the cut: include them all, or truncate to exactly --top by the "
         "reference's order (autojudge-evaluate's kendall@k).")


output_option = click.option(
    "--output", "-o", type=click.Path(dir_okay=False, allow_dash=True),
    help="Write to this file instead of stdout (- is stdout; a link, device or FIFO is written through).",
)


def one_stdin(*sources: str | None) -> None:
    """Standard input can be read once: ``-`` for two of a command's inputs is a usage error."""
    if sum(source == "-" for source in sources) > 1:
        raise click.UsageError("- (standard input) is given for more than one input; it can be read only once")


def write_output(text: str, output: str | None = None) -> None:
    """Print ``text``, or write it to ``output`` when given: a regular file atomically, ``-``,
    ``/dev/stdout``, a device or a FIFO by writing into it (see :func:`~exampp.files.io.atomic_write`)."""
    if output:
        from exampp.files.io import atomic_write

        with atomic_write(output) as fh:
            fh.write(text)
    else:
        click.echo(text, nl=False)


def emit(table: pd.DataFrame, fmt: str, output: str | None = None) -> None:
    """Print a table, or write it to ``output`` when given."""
    write_output(render(table, fmt) + "\n", output)


def emit_leaderboard(table: pd.DataFrame, fmt: str, output: str | None = None) -> None:
    """A leaderboard table (a ``run`` column, then its measures), JSON as ``{run: {measure: value}}``,
    the shape leaderboard files are read in (:mod:`exampp.formats.leaderboard`); else as :func:`emit`."""
    if fmt != "json":
        emit(table, fmt, output)
        return
    from exampp.report.records import dumps

    board = {str(row.pop("run")): row for row in table.to_dict(orient="records")}
    write_output(dumps(board, indent=2) + "\n", output)


EVAL_RESULT_FORMATS = LINE_FORMATS
"""The ``--format`` choices of the commands that write TREC AutoJudge's per-topic results
(:mod:`exampp.formats.eval_results`)."""
LEADERBOARD_FORMATS = (*FORMATS, *EVAL_RESULT_FORMATS)

leaderboard_format_option = format_option_of(
    *LEADERBOARD_FORMATS,
    help="Output format; tot, ir_measures and jsonl write per-query values and each run's mean (topic 'all') "
         "in the formats of TREC AutoJudge's autojudge-evaluate.")


def emit_eval_results(values: pd.DataFrame, fmt: str, output: str | None = None) -> None:
    """Print per-query values (columns ``run, query_id`` and the measures, or ``measure, value``) with
    each run's means in a TREC AutoJudge format, or write them to ``output``."""
    from exampp.errors import OutputError
    from exampp.formats.eval_results import eval_result_lines

    try:
        text = "".join(eval_result_lines(values, fmt))
    except ValueError as exc:  # an id the format cannot hold
        raise OutputError(output or "-", str(exc)) from None
    write_output(text, output)


strict_option = click.option(
    "--strict", is_flag=True, help="A run query the qrels/exam lack is an error (default: a warning; it is left out)."
)


def warn(line: str) -> None:
    """The jobs' warnings (:data:`exampp.api.Warn`), printed on stderr as they come."""
    click.echo(line, err=True)
