"""`exampp assess serve`: the assessors' page, a local web server."""
from __future__ import annotations

import click

from exampp.cli.output import InputPath, workspace_option
from exampp.cli.settings import FiniteRange

_FILE = InputPath(dir_okay=False)
DEFAULT_PORT = 8765


@click.command()
@workspace_option
@click.option("--sample", required=True, type=_FILE, help="The assessment sample (TSV) to judge.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0: every interface, so that others on the network can judge).")
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True,
              help="Port to listen on (0: a free one, printed).")
@click.option("--overlap", type=FiniteRange(0, 1), default=0.0, show_default=True,
              help="Fraction of the pairs judged by two assessors (for inter-assessor agreement).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the hash that picks the --overlap pairs.")
@click.option("--grades", metavar="SCALE",
              help="Grade scale 'grade:name,...' with grades 0-9 [default: 0:irrelevant,1:related,"
                   "2:highly relevant,3:perfectly relevant for passages; 0:not_support,1:partial_support,"
                   "2:support for nuggets].")
@click.option("--claim-minutes", type=FiniteRange(0, min_open=True), default=10.0, show_default=True,
              help="How long a pair shown to an assessor stays theirs; an open page renews it, a closed one "
                   "frees it then.")
@click.option("--answers", type=_FILE,
              help="Nugget assignment file (JSONL) with the runs' answers and the topics' nuggets (nugget pairs).")
@click.option("--topics", type=_FILE, help="Topics file [default: WORKSPACE/topics/topics.jsonl].")
@click.option("--corpus", help="Passages: a JSONL/TSV file, irds:<id> or pyserini:<index> "
                               "[default: WORKSPACE/corpus/passages.jsonl(.gz)].")
def serve(workspace, sample, host, port, overlap, seed, grades, claim_minutes, answers, topics, corpus) -> None:
    """Serve the sample's pairs to assessors in the browser, until Ctrl-C. Each assessor signs in
    by name and is given pairs no one else is judging (a shown pair is theirs while their page is open);
    number keys give grades, u or Backspace undoes their last label, and a note goes with each
    grade. Labels are committed to WORKSPACE/assessments.sqlite as they are given: a closed tab or
    a killed server loses none that the page acknowledged.

    \b
    Example:
      exampp assess serve -w . --sample sample.tsv --overlap 0.1
    """
    from pathlib import Path

    from exampp.api.assess_labels import ServeJob

    job = ServeJob(Path(workspace), Path(sample), topics=Path(topics) if topics else None, corpus=corpus,
                   answers=Path(answers) if answers else None, grades=grades, overlap=overlap, seed=seed,
                   claim_seconds=claim_minutes * 60)

    def ready(url: str) -> None:
        click.echo(f"Assessors judge at {url} (labels: {Path(workspace) / 'assessments.sqlite'}); Ctrl-C stops.")
        if host not in ("127.0.0.1", "localhost", "::1"):
            click.echo(f"warning: listening on {host}: anyone who reaches this address can judge as anyone", err=True)

    job.serve(host, port, ready=ready)
