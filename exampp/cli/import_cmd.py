"""`exampp import`: fill a workspace from a reference EXAM++ graded-passages file."""
from __future__ import annotations

import click

from exampp.cli.output import InputPath


@click.command("import")
@click.argument("file", type=InputPath(dir_okay=False, allow_dash=True))
@click.option("--workspace", "-w", type=click.Path(file_okay=False), required=True,
              help="Workspace folder to fill (created when missing).")
@click.option("--questions", "bank", type=InputPath(dir_okay=False, allow_dash=True),
              help="Question bank with the texts of the graded question ids (exampp or reference format).")
def import_cmd(file: str, workspace: str, bank: str | None) -> None:
    """Import FILE, a reference EXAM++ graded-passages file (JSONL.gz, one line per query),
    into a workspace: grades into grades.sqlite, passages into corpus/, one run per ranking
    method into runs/, judgments into qrels/official.qrels, the bank into question_banks/.

    Importing the same file again leaves the same workspace.

    \b
    Example:
      exampp import DL19-graded-t5-rating-genq-exam-qrels-runs-with-text.jsonl.gz \\
          --workspace dl19 --questions dl19-genq.jsonl.gz
      exampp cover --workspace dl19 --tau 4
    """
    from exampp.cli.output import one_stdin
    from exampp.importer import import_reference

    one_stdin(file, bank)

    summary = import_reference(file, workspace, bank)
    for warning in summary.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(f"imported {file} into {workspace}")
    click.echo(f"  queries          {summary.queries}")
    click.echo(f"  passages         {summary.passages} ({summary.distinct_passages} distinct ids)")
    click.echo(f"  judged passages  {summary.judged}")
    click.echo(f"  questions        {summary.questions}")
    click.echo(f"  grades           {sum(summary.grades.values())} ({summary.store_grades} distinct in the store)")
    for method_id, count in summary.grades.items():
        click.echo(f"    {count:>8}  {method_id}")
    zero_based = sum(r.zero_based for r in summary.runs)
    click.echo(f"  runs             {len(summary.runs)} ({zero_based} with 0-based ranks)")
    for run in summary.runs:
        flags = [flag for flag, on in (("0-based ranks", run.zero_based), ("scores = -rank", run.scores_from_ranks))
                 if on]
        click.echo(f"    {run.name:<24} {run.queries:>4} queries  {', '.join(flags)}".rstrip())
