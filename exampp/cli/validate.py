"""`exampp validate`: what a track checks when runs are submitted."""
from __future__ import annotations

import click

from exampp.cli.output import InputPath, format_option_of, output_option, write_output
from exampp.report.records import dumps


@click.command()
@click.argument("runs", nargs=-1, required=True, type=InputPath())
@click.option("--topics", type=InputPath(dir_okay=False),
              help="The topics the track asks for (any topics file exampp reads, AutoJudge requests too): "
                   "missing and unknown topics are found.")
@click.option("--corpus", help="Passages (JSONL/TSV file, irds:<dataset-id>, pyserini:<index-dir>): doc ids "
                               "not in it are found.")
@click.option("--spec", help="A track spec: rag24 (built in) or a TOML file of limits and severities.")
@format_option_of("text", "json")
@output_option
def validate(runs, topics, corpus, spec, fmt, output) -> None:
    """Check submitted runs as a track does at intake: RUNS are TREC run files, RAG answer files
    (AutoJudge reports, the TREC RAG track's answer files) or folders of them. One table per run
    of errors (which refuse it) and warnings; the exit status is 1 when any run has an error.

    \b
    Example:
      exampp validate runs/ --topics topics/topics.jsonl --corpus corpus/passages.jsonl
      exampp validate answers.jsonl --topics topics.tsv --spec rag24 --format json
    """
    from exampp.api.validate import validate as job

    result = job(runs, topics=topics, corpus=corpus, spec=spec)
    if fmt == "json":
        write_output(dumps({"spec": result.spec, "errors": result.errors, "runs": [
            {"run_id": run.run_id, "kind": run.kind, "files": list(run.files), "topics": run.topics,
             "errors": run.errors, "warnings": run.warnings,
             "findings": [{key: value for key, value in vars(finding).items() if key != "run_id"}
                          for finding in run.findings]}
            for run in result.runs]}, indent=2) + "\n", output)
    else:
        lines: list[str] = []
        for run in result.runs:
            verdict = "refused" if run.errors else "accepted"
            lines.append(f"run {run.run_id} ({run.kind}, {run.topics} topics, {', '.join(run.files)}): {verdict}, "
                         f"{run.errors} errors, {run.warnings} warnings")
            if run.findings:
                lines.extend(_aligned(result.table(run)))
            lines.append("")
        refused = sum(1 for run in result.runs if run.errors)
        lines.append(f"{len(result.runs)} runs checked against spec {result.spec}: {refused} refused")
        write_output("\n".join(lines) + "\n", output)
    if result.errors:
        raise SystemExit(1)


def _aligned(table) -> list[str]:
    """A findings table as text, each column left-aligned (the message last, unpadded)."""
    rows = [list(table.columns)] + table.astype(str).values.tolist()
    widths = [max(len(row[i]) for row in rows) for i in range(len(table.columns) - 1)]
    return ["  " + "  ".join([cell.ljust(width) for cell, width in zip(row, widths)] + [row[-1]]).rstrip()
            for row in rows]
