"""`exampp report`: one HTML page (with its tables as TSV and its figures as PNG) on a workspace's
evaluation."""
from __future__ import annotations

import click

from exampp.cli.meta_evaluate import draw_options
from exampp.cli.output import FILE, depth_option, method_option, warn, workspace_option


@click.command()
@workspace_option
@click.option("--output", "-o", "output_dir", required=True, type=click.Path(file_okay=False),
              help="Folder for report.html, the TSV tables and figures/ (made if missing).")
@click.option("--official-qrels", type=FILE,
              help="Official qrels (default: the workspace's qrels/official.qrels).")
@click.option("--official-measure", default="nDCG@10", show_default=True,
              help="Measure of the official leaderboard (ir_measures name).")
@method_option
@draw_options
@depth_option
@click.option("--exclude", multiple=True, help="Run name to leave out, repeatable.")
@click.option("--rel-level", type=int, default=1, show_default=True,
              help="Official grade at which a passage counts as relevant (agreement, bank review).")
def report(workspace, output_dir, official_qrels, official_measure, method, bootstrap, irt_bootstrap, seed, depth,
           exclude, rel_level) -> None:
    """A self-contained HTML report on a workspace: leaderboards with bootstrap intervals, the
    EXAM++ comparison plot, the meta-evaluation table, agreement with the official judgments,
    per-query scatter plots, grade histograms and the bank diagnostics. Every table is also
    written as TSV beside report.html, every figure as PNG under figures/.

    \b
    Example:
      exampp report -w out/dl19 -o out/dl19/report --official-measure nDCG@10 --bootstrap 1000
    """
    from exampp.api.report import build_report

    result = build_report(workspace, output_dir, official_qrels=official_qrels, official_measure=official_measure,
                          method=method, bootstrap=bootstrap, irt_bootstrap=irt_bootstrap, seed=seed, depth=depth,
                          exclude=exclude,
                          rel_level=rel_level, warn=warn)
    click.echo(f"{result.html} ({len(result.tables)} tables as TSV, {len(result.figures)} figures)")
