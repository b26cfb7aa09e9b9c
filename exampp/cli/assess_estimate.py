"""``exampp assess estimate``: every run's measures from the judge and a human sample, with intervals."""
from __future__ import annotations

import click

from exampp.cli.assess_options import labels_options, measure_options
from exampp.cli.output import (
    FILE,
    emit,
    format_option,
    method_option,
    output_option,
    warn,
    workspace_option,
    write_output,
)


@click.command()
@workspace_option
@labels_options
@measure_options
@click.option("--estimator", type=click.Choice(["eb", "calibrated", "ppi++", "ppi", "humans", "judge"]),
              default="eb", show_default=True,
              help="eb: calibrated judge, shrunk over runs (intervals hold on average over runs); calibrated: "
                   "design-unbiased per run; ppi, ppi++: ppi-python's; humans: the sample alone; judge: no people.")
@click.option("--differences", type=click.Path(dir_okay=False, allow_dash=True),
              help="Also write every pair of runs' difference (TSV): which orderings the sample confirms.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of cross-fitting and the bootstrap.")
@click.option("--nuggets", type=FILE,
              help="The judge's nugget assignment (RAG answers); --labels is then people's assignment of the sampled "
                   "(answer, nugget) pairs (the track's format) or qrels keyed run/nugget.")
@click.option("--support", type=FILE,
              help="The judge's citation-support file (RAG answers); --labels is then people's citation-support "
                   "file for the sampled sentences (the track's format).")
@method_option
@format_option
@output_option
def estimate(workspace, labels, sample_file, measures, rel_level, level, estimator, differences, seed, nuggets, support,
             method, fmt, output) -> None:
    """Every run's measures estimated from the judge's labels on the whole pool and people's labels on
    the sample, each with its interval; JSON is {run: {measure: {estimate, low, high}}}.

    \b
    Example:
      exampp assess estimate -w out/dl19 --labels labels.qrels --sample sample.tsv -m P@10 --rel-level 2
      exampp assess estimate --nuggets ours.jsonl.gz --labels assessors.jsonl.gz --sample s.tsv -m V_strict
      exampp assess estimate --support ours.jsonl.gz --labels people.jsonl.gz --sample s.tsv -m weighted_recall
    """
    from exampp.api.assess import EstimateJob, estimates_json
    from exampp.report.records import dumps

    job = EstimateJob(workspace, sample=sample_file, labels=labels, measures=measures, rel_level=rel_level,
                      level=level, estimator=estimator, method=method, nuggets=nuggets, support=support, seed=seed)
    result = job.run(warn=warn)
    if differences:
        emit(result.differences, "tsv", differences)
    if fmt == "json":
        write_output(dumps(estimates_json(result), indent=2) + "\n", output)
    else:
        emit(result.table.drop(columns="se"), fmt, output)
