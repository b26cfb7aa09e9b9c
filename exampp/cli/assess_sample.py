"""``exampp assess sample``: the pool pairs people should judge."""
from __future__ import annotations

import click

from exampp.cli.assess_options import strategy_option
from exampp.cli.output import FILE, method_option, warn, workspace_option


@click.command()
@workspace_option
@click.option("--budget", "-n", type=click.IntRange(min=1), required=True,
              help="How many pairs people will judge.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the draw; the same seed with a larger budget extends the sample.")
@strategy_option("uniform; stratified (Neyman over the judge's grades); runs (toward pairs many runs' measures "
                 "weigh); separating (toward pairs that tell runs apart); uncertainty (toward pairs judges "
                 "disagree on).")
@click.option("--measure", "-m", "measures", multiple=True, default=("P@10",), show_default=True,
              help="A measure the sample must serve (P@k, nDCG@k; with --nuggets V_strict, A_strict, V, A, "
                   "W_strict, W; with --support weighted_precision, weighted_recall); "
                   "its cutoff sets the pool's depth. Repeatable.")
@method_option
@click.option("--nuggets", type=FILE,
              help="The judge's nugget assignment (RAG answers): sample (answer, nugget) pairs instead of passages.")
@click.option("--support", type=FILE,
              help="The judge's citation-support file (RAG answers, the track's format): sample the sentences "
                   "that cite segments, each to be judged on every citation.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, allow_dash=True), required=True,
              help="The sample (TSV). A sample already there is extended: the new draw holds it.")
def sample(workspace, budget, seed, strategy, measures, method, nuggets, support, output) -> None:
    """Choose the (query, passage) pairs of the runs' pool that assessors should judge, each with the
    probability it was drawn with (sequential Poisson sampling), so that `exampp assess estimate`
    stays unbiased. Rows come in the order to judge them.

    \b
    Example:
      exampp assess sample -w out/dl19 --budget 200 -m P@10 -o out/dl19/sample.tsv
      exampp assess sample --nuggets ours.jsonl.gz --budget 500 -m V_strict -o nugget-sample.tsv
      exampp assess sample --support ours.jsonl.gz --budget 300 -m weighted_precision -o support-sample.tsv
    """
    from exampp.api.assess import SampleJob, draw_sample

    result = draw_sample(SampleJob(workspace, budget, seed, strategy, tuple(measures), method=method,
                                   output=output, nuggets=nuggets, support=support), warn)
    kept = f", {result.kept} of them from the sample it held" if result.kept else ""
    click.echo(f"drew {len(result.pairs)} of {result.pool_size} pooled pairs ({strategy}, seed {seed}){kept}; "
               f"wrote {output}", err=True)
