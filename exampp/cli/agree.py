"""`exampp agree`: Cohen's kappa of EXAM labels against official judgments, per grade threshold."""
from __future__ import annotations

import json
import math

import click

from exampp.cli.output import format_option, one_stdin, output_option, render, write_output

FILE = click.Path(dir_okay=False, exists=True, allow_dash=True)


@click.command()
@click.option("--exam", required=True, type=FILE, help="EXAM qrels (graded labels, e.g. 0-5).")
@click.option("--official", required=True, type=FILE, help="Official qrels.")
@click.option("--rel-level", type=int, default=1, show_default=True,
              help="Official grade at which a passage counts as relevant (as trec_eval -l).")
@format_option
@output_option
def agree(exam, official, rel_level, fmt, output) -> None:
    """Agreement of EXAM labels with official judgments on the passages judged in both: for
    every threshold tau, EXAM label >= tau against official grade >= --rel-level, with
    Cohen's kappa and the 2x2 counts (tp both relevant, fp EXAM only, fn official only,
    tn neither). Text output adds the EXAM grade x official grade table.

    \b
    Example:
      exampp agree --exam qrels/exam.qrels --official qrels/official.qrels
      exampp agree --exam qrels/exam.qrels --official qrels/official.qrels --rel-level 2 --format json
    """
    from exampp.analysis.agreement import graded_confusion, kappa_table, overlap
    from exampp.collection.qrels import as_label, read_qrels

    one_stdin(exam, official)
    exam_labels, official_labels = read_qrels(exam), read_qrels(official)
    pairs = overlap(exam_labels, official_labels)
    if pairs.common == 0:
        raise click.ClickException(f"no (query, docid) pair is judged in both {exam} and {official}")
    kappas = kappa_table(exam_labels, official_labels, rel_level=rel_level).reset_index()
    graded = graded_confusion(exam_labels, official_labels)

    if fmt == "tsv":
        write_output(render(kappas, "tsv") + "\n", output)
    elif fmt == "json":
        report = {
            "exam": exam, "official": official, "rel_level": rel_level,
            "n_pairs": pairs.common, "only_in_exam": pairs.only_exam, "only_in_official": pairs.only_official,
            "thresholds": json.loads(render(kappas, "json")),
            "graded": [{"exam": as_label(e), "official": as_label(o), "count": int(graded.at[e, o])}
                       for e in graded.index for o in graded.columns],
        }
        write_output(json.dumps(report, indent=2) + "\n", output)
    else:
        lines = [f"{pairs.common} passages judged in both (not compared: {pairs.only_exam} only in EXAM, "
                 f"{pairs.only_official} only in official)",
                 f"EXAM relevant: grade >= tau; official relevant: grade >= {rel_level}",
                 "",
                 kappas.to_string(index=False, formatters={"kappa": lambda v: "-" if math.isnan(v) else f"{v:.4f}"}),
                 "",
                 "EXAM grade (rows) x official grade (columns):",
                 graded.to_string()]
        write_output("\n".join(lines) + "\n", output)
