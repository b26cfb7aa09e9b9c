"""`exampp assess export`: the sample with its texts for other tools, or the labels as qrels."""
from __future__ import annotations

import click

from exampp.cli.output import InputPath, workspace_option

_FILE = InputPath(dir_okay=False)


@click.command()
@workspace_option
@click.option("--sample", type=_FILE, help="The assessment sample (TSV) to export with its texts.")
@click.option("--labels", "labels", is_flag=True,
              help="Export the store's labels instead, as qrels with an assessor column.")
@click.option("--format", "fmt", type=click.Choice(["tsv", "label-studio"]), default="tsv", show_default=True,
              help="Format of the exported sample: TSV with texts, or Label Studio's tasks JSON (its labeling "
                   "config is written beside it as .xml).")
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False), help="File to write.")
@click.option("--grades", metavar="SCALE", help="Grade scale of the Label Studio config (as `assess serve --grades`).")
@click.option("--answers", type=_FILE, help="Nugget assignment file with the answers and nuggets (nugget pairs).")
@click.option("--topics", type=_FILE, help="Topics file [default: WORKSPACE/topics/topics.jsonl].")
@click.option("--corpus", help="Passages: a file, irds:<id> or pyserini:<index> [default: the workspace's].")
def export(workspace, sample, labels, fmt, output, grades, answers, topics, corpus) -> None:
    """Write the sample for other tools (--sample), or the labels people gave (--labels).

    The sample is exported blind: the pairs' ids and texts (query, description, narrative,
    passage or answer, nugget), never the judge's grade, the stratum or the inclusion
    probability. Labels are written as qrels `query_id 0 key grade assessor`.

    \b
    Example:
      exampp assess export -w . --sample sample.tsv --format label-studio -o tasks.json
      exampp assess export -w . --labels -o labels.qrels
    """
    from exampp.api.assess_labels import export_labels, export_sample

    if labels == (sample is not None):
        raise click.UsageError("give --sample SAMPLE (the pairs with their texts) or --labels (the labels), "
                               "one of them")
    if labels:
        written = export_labels(workspace, output)
        click.echo(f"{written.count} labels written to {written.path}")
        return
    written = export_sample(workspace, sample, output, fmt=fmt, topics=topics, corpus=corpus, answers=answers,
                            grades=grades)
    config = f"; Label Studio's labeling config: {written.config}" if written.config else ""
    click.echo(f"{written.count} pairs written to {written.path}{config}")
