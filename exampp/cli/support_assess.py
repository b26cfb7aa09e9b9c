"""``exampp support assess``: an LLM judges whether each cited segment supports its sentence."""
from __future__ import annotations

import click

from exampp.cli.backend_options import backend_options
from exampp.cli.output import FILE, progress_option
from exampp.cli.settings import Setting
from exampp.defaults import CHUNK


@click.command()
@click.argument("judgments", type=FILE)
@click.option("--corpus", required=True,
              help="The cited segments' texts: JSONL/TSV file, irds:<dataset-id> (e.g. irds:msmarco-segment-v2.1) "
                   "or pyserini:<index-dir>.")
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False),
              help="The judgments to write (the track's predictions format; .gz: gzipped).")
@backend_options(backend_help="[default: hf]",
                 model_help="; a chat model that follows instructions (the track used GPT-4o)")
@click.option("--workspace", "-w", type=click.Path(file_okay=False), default=".", show_default=True,
              help="Workspace folder whose grades.sqlite keeps the grades.")
@click.option("--store", type=click.Path(dir_okay=False), help="Grade store file [default: WORKSPACE/grades.sqlite].")
@click.option("--chunk-size", type=Setting("chunk_size"), default=CHUNK, show_default=True,
              help="Pairs judged between two commits to the store.")
@progress_option
def assess(judgments, corpus, output, workspace, store, chunk_size, progress, backend, model,
           **backend_settings) -> None:
    """Judge every (sentence, cited segment) pair of JUDGMENTS (a citation-judgment file: its
    answers' sentences and citations; the support it gives is ignored) 0 No Support, 1 Partial
    Support, 2 Full Support with an LLM, as the TREC 2024 RAG track's support evaluation does,
    and write the answers with the model's support to OUTPUT.

    Grades go to the workspace's grade store (method citation-support) as each chunk is
    judged: the same command again sends nothing; an interrupted run resumes. Citations whose
    segment the corpus lacks, or whose sentence has no text, are reported and written unjudged
    (-1). A model's answer without exactly one of the three labels is asked again (3 requests
    in all); one still unread is graded No Support and counted.

    \b
    Example:
      exampp support assess judgments.jsonl.gz --corpus segments.jsonl -o llm-judgments.jsonl.gz \\
             --backend openai --base-url http://localhost:8000/v1 --model meta-llama/Llama-3.1-8B-Instruct
      exampp support measures llm-judgments.jsonl.gz
    """
    from exampp.api.support import assess_support
    from exampp.formats.corpus_sources import open_corpus
    from exampp.llm.backend import BackendSpec
    from exampp.stores.layout import Workspace

    spec = BackendSpec(backend or "hf", model, backend_settings)
    result = assess_support(judgments, open_corpus(corpus), output, spec,
                            store or Workspace.at(workspace).store, chunk_size=chunk_size, progress=progress)
    if result.missing:
        shown = ", ".join(result.missing[:3]) + (", ..." if len(result.missing) > 3 else "")
        click.echo(f"warning: {len(result.missing)} cited segments are not in the corpus ({shown}): their "
                   "citations are left unjudged (-1)", err=True)
    if result.untexted:
        click.echo(f"warning: {result.untexted} citations of sentences without text are left unjudged (-1)",
                   err=True)
    click.echo(str(result.summary), err=True)
    if result.unread:
        click.echo(f"{result.unread} pairs gave no label after every attempt: graded No Support (0)", err=True)
    if result.usage is not None and result.usage.requests:
        click.echo(f"judge: {result.usage}", err=True)
    click.echo(f"wrote {len(result.answers)} answers ({result.citations} citations) to {result.output}", err=True)
