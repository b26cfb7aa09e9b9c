"""`exampp assess import`: labels from another tool into the workspace's label store."""
from __future__ import annotations

import click

from exampp.cli.output import InputPath, workspace_option


@click.command("import")
@workspace_option
@click.argument("file", type=InputPath(dir_okay=False, allow_dash=True))
@click.option("--assessor", help="Assessor of the labels when FILE names none (qrels of four columns, "
                                 "annotations without a username).")
def import_cmd(workspace, file, assessor) -> None:
    """Read the labels of FILE into WORKSPACE/assessments.sqlite: TREC qrels `query_id iter key
    grade [assessor]`, Label Studio's JSON export of the tasks `exampp assess export` wrote,
    or the JSONL of TREC AutoJudge's annotation page (autojudge-annotate): a rated document
    is the pair (topic, docid), a rated report the pair (topic, RUN/answer), Perfect, Mostly
    Good, So-so, Bad the grades 3, 2, 1, 0, username the assessor; citation annotations are
    skipped (exampp's support pairs grade a sentence against all it cites).
    A label its assessor already has (same grade and note) is not added again: importing a file
    twice adds nothing.

    \b
    Example:
      exampp assess import -w . label-studio-export.json
      exampp assess import -w . nist.qrels --assessor nist
      exampp assess import -w . rag24-annotations.jsonl
    """
    from pathlib import Path

    from exampp.api.assess_labels import import_labels

    result = import_labels(workspace, file, assessor=assessor)
    click.echo(f"{result.added} labels added to {Path(workspace) / 'assessments.sqlite'} ({result.read} read, "
               f"{result.read - result.added} there already)")
