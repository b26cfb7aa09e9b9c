"""``exampp assess agree``: the judge against people on the sample."""
from __future__ import annotations

from typing import cast

import click

from exampp.cli.assess_options import labels_options
from exampp.cli.output import format_option, method_option, output_option, render, warn, workspace_option, write_output


@click.command()
@workspace_option
@labels_options
@click.option("--rel-level", type=float, default=1, show_default=True,
              help="Human grade from which a passage is relevant (as trec_eval -l).")
@click.option("--depth", "-k", type=click.IntRange(min=1), default=10, show_default=True,
              help="The pool's depth the sample was drawn from.")
@click.option("--top", type=click.IntRange(min=0), default=20, show_default=True,
              help="How many of the largest disagreements to list.")
@method_option
@format_option
@output_option
def agree(workspace, labels, sample_file, rel_level, depth, top, method, fmt, output) -> None:
    """Cohen's kappa of judge and people (relevant: judge grade >= the method's tau, human grade >=
    --rel-level), the judge grade x human grade table, the judge's calibration (P(human relevant)
    per judge grade, weighted to the pool) and the pairs they disagree on most.

    \b
    Example:
      exampp assess agree -w out/dl19 --labels labels.qrels --sample sample.tsv --rel-level 2
    """
    from exampp.api.assess import judge_agreement
    from exampp.report.records import dumps, json_value, records

    result = judge_agreement(workspace, sample=sample_file, labels=labels, rel_level=rel_level, method=method,
                             depth=depth, top=top, warn=warn)
    if fmt == "json":
        confusion = result.confusion
        write_output(dumps({
            "n_pairs": result.n_pairs, "kappa": json_value(result.kappa), "judge_relevant_from": result.relevant_grade,
            "rel_level": result.rel_level, "calibration": records(result.calibration),
            "confusion": [{"judge": float(j), "human": float(h), "count": int(cast(int, confusion.at[j, h]))}
                          for j in confusion.index for h in confusion.columns],
            "disagreements": records(result.disagreements)}, indent=2) + "\n", output)
    elif fmt == "tsv":
        write_output(render(result.calibration, "tsv") + "\n", output)
    else:
        write_output("\n".join([
            f"{result.n_pairs} labelled pairs; kappa {result.kappa:.4f} (judge grade >= {result.relevant_grade:g} "
            f"against human grade >= {result.rel_level:g})", "",
            "judge grade (rows) x human grade (columns):", result.confusion.to_string(), "",
            "calibration: P(human relevant) per judge grade, weighted to the pool:",
            render(result.calibration, "text"), "",
            "largest disagreements:", render(result.disagreements, "text")]) + "\n", output)
