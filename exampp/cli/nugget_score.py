"""`exampp nuggets score`: nugget scores of answers and runs from a nugget assignment file."""
from __future__ import annotations

import click

from exampp.analysis.nugget_scores import MEASURES
from exampp.cli.output import (
    EVAL_RESULT_FORMATS,
    FILE,
    bootstrap_options,
    check_bootstrap_output,
    emit,
    emit_eval_results,
    emit_leaderboard,
    leaderboard_format_option,
    output_option,
)


@click.command()
@click.argument("assignments", type=FILE)
@click.option("--measure", "-m", type=click.Choice(MEASURES), default="V_strict", show_default=True,
              help="The measure the leaderboard is ordered by, and the one --bootstrap gives intervals of.")
@click.option("--complete", is_flag=True,
              help="A run's mean over every topic of the file, a topic it did not answer scoring 0 (default: "
                   "over the topics it answered, as the track averages).")
@click.option("--per-query", is_flag=True,
              help="Print each answer's scores (run, query_id, measures) instead of the leaderboard.")
@bootstrap_options
@leaderboard_format_option
@output_option
def score(assignments, measure, complete, per_query, bootstrap, seed, confidence, fmt, output) -> None:
    """Nugget scores of the answers of ASSIGNMENTS (the TREC 2024 RAG track's nugget assignment
    JSONL, as `nuggets assign` and the `nuggetizer` package write it) and the run leaderboard:
    V_strict, A_strict, V, A (the share of the vital / all nuggets an answer supports, partial
    support counting 0.5, in the strict scores 0), W_strict and W (all nuggets weighted, vital 1
    and okay 0.5), each run's mean over the topics it answered.

    The leaderboard is a table (JSON: {run: {measure: value}}) that correlate, significance and
    meta-evaluate read (--a-column V_strict picks a measure); --per-query writes the per-query
    table they read (a topic a run did not answer counts 0 there, as with --complete).
    --format tot (or ir_measures, jsonl) writes every measure of every answer and each run's
    means (topic 'all') for TREC AutoJudge's autojudge-evaluate: every run on every topic,
    an unanswered one as 0, so the means are those of --complete.

    \b
    Example:
      exampp nuggets score nugget-assignments.jsonl.gz
      exampp nuggets score nugget-assignments.jsonl.gz --format json -o nuggets.json
      exampp nuggets score nugget-assignments.jsonl.gz --per-query --format tsv -o per-query.tsv
      exampp nuggets score nugget-assignments.jsonl.gz -m W --bootstrap 1000 --seed 1
      exampp nuggets score nugget-assignments.jsonl.gz --format tot -o nuggets.tot
    """
    from exampp.api.nuggets import score_nuggets

    check_bootstrap_output(bootstrap, per_query, fmt)
    result = score_nuggets(assignments, measure=measure, complete=complete, bootstrap=bootstrap, seed=seed,
                           confidence=confidence)
    if fmt in EVAL_RESULT_FORMATS:
        emit_eval_results(result.per_answer, fmt, output)
    elif per_query:
        emit(result.per_answer, fmt, output)
    else:
        emit_leaderboard(result.leaderboard, fmt, output)
