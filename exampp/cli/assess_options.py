"""The options the ``exampp assess`` commands share."""
from __future__ import annotations

import click

from exampp.cli.output import FILE
from exampp.cli.settings import FiniteRange

STRATEGIES = ["uniform", "stratified", "runs", "separating", "uncertainty"]  # exampp.assess.design's


def labels_options(command):
    """``--labels`` and ``--sample``: what every human-sample command reads."""
    command = click.option("--sample", "sample_file", required=True, type=FILE,
                           help="The sample the labels are of (exampp assess sample).")(command)
    return click.option("--labels", type=FILE,
                        help="People's labels: qrels (qid iter docid grade [assessor]) or Label Studio's export "
                             "(default: the workspace's assessments.sqlite, from exampp assess serve and import)."
                        )(command)


def measure_options(command):
    """``-m``, ``--rel-level`` and ``--level``: what is estimated, and how sure."""
    options = [
        click.option("--measure", "-m", "measures", multiple=True, default=("P@10",), show_default=True,
                     help="P@k, P(rel=2)@k or nDCG@k; with --nuggets V_strict, A_strict, V, A, W_strict, W; "
                          "with --support weighted_precision, weighted_recall. "
                          "Repeatable."),
        click.option("--rel-level", type=float, default=1, show_default=True,
                     help="Human grade from which a passage is relevant (as trec_eval -l)."),
        click.option("--level", type=FiniteRange(0, 1, min_open=True, max_open=True), default=0.9, show_default=True,
                     help="Confidence level of the intervals."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def strategy_option(help: str):
    return click.option("--strategy", type=click.Choice(STRATEGIES), default="runs", show_default=True, help=help)
