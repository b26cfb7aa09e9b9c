"""``exampp assess plan``: how many labels a target interval width needs."""
from __future__ import annotations

import click

from exampp.cli.assess_estimate import labels_options
from exampp.cli.output import emit, format_option, method_option, output_option, warn, workspace_option
from exampp.cli.settings import FiniteRange


@click.command()
@workspace_option
@labels_options
@click.option("--target-width", type=FiniteRange(0, 1, min_open=True), required=True,
              help="The mean interval width wanted.")
@click.option("--measure", "-m", "measures", multiple=True, default=("P@10",), show_default=True,
              help="P@k or nDCG@k. Repeatable.")
@click.option("--rel-level", type=float, default=1, show_default=True,
              help="Human grade from which a passage is relevant.")
@click.option("--level", type=FiniteRange(0, 1, min_open=True, max_open=True), default=0.9, show_default=True,
              help="Confidence level of the intervals.")
@click.option("--strategy", type=click.Choice(["uniform", "stratified", "runs", "separating", "uncertainty"]),
              default="runs", show_default=True, help="The design the sample was drawn with.")
@method_option
@format_option
@output_option
def plan(workspace, labels, sample_file, target_width, measures, rel_level, level, strategy, method, fmt,
         output) -> None:
    """From a pilot sample's labels: the mean interval width of the design-unbiased (calibrated)
    estimator now, and how many labels in all the same design needs for --target-width.

    \b
    Example:
      exampp assess plan -w out/dl19 --labels labels.qrels --sample sample.tsv --target-width 0.1
    """
    from exampp.api.assess import plan_budget

    result = plan_budget(workspace, sample=sample_file, labels=labels, target_width=target_width, measures=measures,
                         rel_level=rel_level, level=level, strategy=strategy, method=method, warn=warn)
    emit(result.table, fmt, output)
