"""`exampp nuggets assign`: every answer's topic nuggets assigned support / partial_support / not_support
(:mod:`exampp.api.nugget_assign`)."""
from __future__ import annotations

import click

from exampp.cli.backend_options import backend_options
from exampp.cli.output import InputPath, check_method, progress_option
from exampp.cli.settings import Setting
from exampp.defaults import CHUNK

_PATH = click.Path(dir_okay=False)


@click.command()
@click.argument("answers", type=InputPath())
@click.option("--bank", type=InputPath(dir_okay=False),
              help="The nuggets: a question bank whose items carry info.importance (vital or okay), e.g. the "
                   "nuggetizer's; required for responses files, and taken instead of an assignment file's nuggets.")
@click.option("--output", "-o", type=_PATH, required=True,
              help="The assignments, in the TREC 2024 RAG track's JSONL (gzipped when it ends in .gz).")
@click.option("--method", "--grader", "method", callback=check_method,
              help="Grading method assigning the nuggets, grades 0-2 [default: nugget-support, the AutoNuggetizer's "
                   "listwise prompt; nugget-support(window=1): one request per nugget].")
@backend_options(backend_help="[default: the method's; hf for LLM methods]",
                 model_help="[default: the method's, google/flan-t5-large for LLM methods]")
@click.option("--workspace", "-w", type=click.Path(file_okay=False), default=".", show_default=True,
              help="Workspace folder whose grades.sqlite keeps the grades.")
@click.option("--chunk-size", type=Setting("chunk_size"), default=CHUNK, show_default=True,
              help="Pairs (answer, nugget) graded between two commits to the store.")
@progress_option
def assign(answers, bank, output, method, workspace, chunk_size, progress, backend, model, **backend_settings) -> None:
    """Assign each answer of ANSWERS its topic's nuggets: support, partial_support or not_support.

    ANSWERS: a TREC 2024 RAG assignment file (its answers and nuggets; its assignments are ignored), a
    RAG responses file (JSONL or TSV; give --bank), or a folder of them. Grades go to the workspace's
    grade store as they come: an interrupted run resumes, and a second run asks the judge nothing.
    Replies the judge gives without a readable label for each nugget are asked again, then graded
    not_support and counted.

    \b
    Example:
      exampp nuggets assign nugget-assignments.dev.jsonl.gz -o assigned.jsonl.gz \\
          --backend openai --base-url http://localhost:8000/v1 --model Qwen/Qwen2.5-7B-Instruct
      exampp nuggets assign responses.jsonl --bank nuggets.jsonl -o assigned.jsonl --method nugget-embedding
    """
    from exampp.api.nugget_assign import DEFAULT_METHOD, NuggetAssignJob

    result = NuggetAssignJob(answers, output, bank=bank, method=method or DEFAULT_METHOD, backend=backend, model=model,
                             backend_options=backend_settings, workspace=workspace, chunk_size=chunk_size,
                             progress=progress).run()
    click.echo(f"{result}; wrote {result.written}", err=True)
