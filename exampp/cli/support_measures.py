"""``exampp support measures``: per-run citation-support measures of a judgment file."""
from __future__ import annotations

import click

from exampp.cli.output import FILE, emit, emit_leaderboard, format_option, output_option


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

    table = support_scores(judgments, per_query=per_query)
    (emit if per_query else emit_leaderboard)(table, fmt, output)
