"""``exampp support measures``: per-run citation-support measures of a judgment file."""
from __future__ import annotations

import json

import click

from exampp.cli.output import FILE, emit, format_option, output_option, write_output


@click.command()
@click.argument("judgments", type=FILE)
@click.option("--per-query", is_flag=True, help="One row per answer (run, topic) instead of per run.")
@format_option
@output_option
def measures(judgments, per_query, fmt, output) -> None:
    """Per-run citation-support measures of JUDGMENTS, a TREC 2024 RAG citation-judgment file
    (either spelling, or what `exampp support assess` writes).

    As Thakur et al. 2025 define them: weighted precision over judged citations and weighted
    recall over sentences (full support 1, partial 0.5, none 0; unjudged citations left out),
    and the share of sentences citing nothing. Per answer, then each run's mean over its
    topics, best weighted precision first. JSON:
    {run: {measure: value}}; with --per-query, a list of records (run, query_id, measures),
    which `exampp correlate` takes like any per-query table.

    \b
    Example:
      exampp support measures final.citation_judgments_Webassess.20241031.jsonl.gz
      exampp support measures judgments.jsonl.gz --format json -o support.json
    """
    from exampp.api.support import support_scores
    from exampp.report.records import json_value

    table = support_scores(judgments, per_query=per_query)
    if fmt == "json" and not per_query:
        board = {row.pop("run"): {k: json_value(v) for k, v in row.items()}
                 for row in table.to_dict(orient="records")}
        write_output(json.dumps(board, indent=2) + "\n", output)
    else:
        emit(table, fmt, output)
