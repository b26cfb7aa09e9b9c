"""``exampp assess plan``: how many labels a target interval width needs."""
from __future__ import annotations

import click

from exampp.cli.assess_options import labels_options, measure_options, strategy_option
from exampp.cli.output import emit, format_option, method_option, output_option, warn, workspace_option
from exampp.cli.settings import FiniteRange


@click.command()
@workspace_option
@labels_options
@click.option("--target-width", type=FiniteRange(0, 1, min_open=True), required=True,
              help="The mean interval width wanted.")
@measure_options
@strategy_option("The design the sample was drawn with.")
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
    from exampp.api.assess import PlanJob

    result = PlanJob(workspace, sample=sample_file, labels=labels, target_width=target_width, measures=measures,
                     rel_level=rel_level, level=level, strategy=strategy, method=method).run(warn=warn)
    emit(result.table, fmt, output)
