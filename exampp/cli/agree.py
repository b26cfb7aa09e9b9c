"""`exampp agree`: Cohen's kappa and Krippendorff's alpha of EXAM labels against official judgments."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

import click

from exampp.cli.output import FILE, format_option, one_stdin, output_option, render, write_output
from exampp.report.records import dumps, json_value, records

if TYPE_CHECKING:
    from exampp.api.agreement import LabelAgreement


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
    Cohen's kappa, Krippendorff's alpha (nominal, of those 0/1 labels) and the 2x2 counts
    (tp both relevant, fp EXAM only, fn official only, tn neither); and Krippendorff's
    alpha (ordinal) of the graded labels, EXAM label and official grade as two coders.
    Text output adds the EXAM grade x official grade table; TSV is the threshold table.

    \b
    Example:
      exampp agree --exam qrels/exam.qrels --official qrels/official.qrels
      exampp agree --exam qrels/exam.qrels --official qrels/official.qrels --rel-level 2 --format json
    """
    from exampp.api.agreement import label_agreement

    one_stdin(exam, official)
    result = label_agreement(exam, official, rel_level=rel_level)
    if fmt == "tsv":
        write_output(render(result.kappas.reset_index(), "tsv") + "\n", output)
    elif fmt == "json":
        write_output(dumps(_json(result, exam, official), indent=2) + "\n", output)
    else:
        write_output("\n".join(_text(result)) + "\n", output)


def _json(result: LabelAgreement, exam: str, official: str) -> dict[str, Any]:
    from exampp.collection.qrels import as_label

    graded, pairs = result.graded, result.pairs
    return {
        "exam": exam, "official": official, "rel_level": result.rel_level,
        "n_pairs": pairs.common, "only_in_exam": pairs.only_exam, "only_in_official": pairs.only_official,
        "alpha_ordinal": json_value(result.alpha),
        "thresholds": records(result.kappas.reset_index()),
        # labels and counts (pandas-stubs type a column label as str, a cell as any scalar)
        "graded": [{"exam": as_label(e), "official": as_label(cast(float, o)), "count": int(cast(int, graded.at[e, o]))}
                   for e in graded.index for o in graded.columns],
    }


def _text(result: LabelAgreement) -> list[str]:
    pairs = result.pairs
    return [f"{pairs.common} passages judged in both (not compared: {pairs.only_exam} only in EXAM, "
            f"{pairs.only_official} only in official)",
            f"Krippendorff's alpha (ordinal) of EXAM label and official grade: {_number(result.alpha)}",
            "",
            f"EXAM relevant: grade >= tau; official relevant: grade >= {result.rel_level}",
            "",
            result.kappas.reset_index().to_string(index=False, formatters={"kappa": _number, "alpha": _number}),
            "",
            "EXAM grade (rows) x official grade (columns):",
            result.graded.to_string()]


def _number(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.4f}"
