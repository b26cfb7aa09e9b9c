"""`exampp agree`: Cohen's kappa and Krippendorff's alpha of EXAM labels against official judgments."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

import click

from exampp.cli.output import FILE, bootstrap_options, format_option, one_stdin, output_option, render, write_output
from exampp.report.records import dumps, json_value, records

if TYPE_CHECKING:
    from exampp.api.agreement import LabelAgreement, TopicAgreement


@click.command()
@click.option("--exam", required=True, type=FILE, help="EXAM qrels (graded labels, e.g. 0-5).")
@click.option("--official", required=True, type=FILE, help="Official qrels.")
@click.option("--rel-level", type=int, default=1, show_default=True,
              help="Official grade at which a passage counts as relevant (as trec_eval -l).")
@click.option("--per-topic", is_flag=True,
              help="autojudge-evaluate's qrel-evaluate: each topic over the union of both sides' documents "
                   "(missing = grade 0), then the mean over topics.")
@click.option("--exam-level", type=click.IntRange(min=1), default=1, show_default=True,
              help="With --per-topic: EXAM grade at which a passage counts as relevant.")
@click.option("--official-max-grade", type=click.IntRange(min=1),
              help="With --per-topic: clip official grades to 0..this [default: the highest official grade].")
@click.option("--exam-max-grade", type=click.IntRange(min=1),
              help="With --per-topic: clip EXAM grades to 0..this [default: the highest EXAM grade].")
@bootstrap_options
@format_option
@output_option
def agree(exam, official, rel_level, per_topic, exam_level, official_max_grade, exam_max_grade, bootstrap, seed,
          confidence, fmt, output) -> None:
    """Agreement of EXAM labels with official judgments on the passages judged in both: for
    every threshold tau, EXAM label >= tau against official grade >= --rel-level, with
    Cohen's kappa, Krippendorff's alpha (nominal, of those 0/1 labels) and the 2x2 counts
    (tp both relevant, fp EXAM only, fn official only, tn neither); and Krippendorff's
    alpha (ordinal) of the graded labels, EXAM label and official grade as two coders.
    Text output adds the EXAM grade x official grade table; TSV is the threshold table.

    --per-topic computes instead what autojudge-evaluate's qrel-evaluate does (the official
    qrels its truth): each topic over the union of both sides' passages, a passage one side
    lacks graded 0, grades clipped to 0..max grade; set precision, recall, F1 and Jaccard
    of the relevant passages, Cohen's kappa of the binary labels at every pair of
    thresholds, linear-weighted kappa, Krippendorff's alpha (ordinal) and the adjusted Rand
    index; then the mean over the topics where each is defined, with a bootstrap interval
    over topics (--bootstrap N). TSV is the per-topic table with a MEAN row.

    \b
    Example:
      exampp agree --exam qrels/exam.qrels --official qrels/official.qrels
      exampp agree --exam qrels/exam.qrels --official qrels/official.qrels --rel-level 2 --format json
      exampp agree --exam qrels/exam.qrels --official qrels/official.qrels --per-topic --bootstrap 1000
    """
    from exampp.api.agreement import label_agreement

    one_stdin(exam, official)
    if per_topic:
        _per_topic(exam, official, rel_level, exam_level, official_max_grade, exam_max_grade, bootstrap, seed,
                   confidence, fmt, output)
        return
    given = [flag for flag, value in (("--exam-level", exam_level != 1), ("--official-max-grade", official_max_grade),
                                      ("--exam-max-grade", exam_max_grade), ("--bootstrap", bootstrap)) if value]
    if given:
        raise click.UsageError(f"{', '.join(given)} go(es) with --per-topic")
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


def _per_topic(exam, official, rel_level, exam_level, official_max, exam_max, bootstrap, seed, confidence, fmt,
               output) -> None:
    from exampp.api.agreement import topic_label_agreement

    if rel_level < 1:
        raise click.UsageError("--per-topic needs --rel-level of at least 1")
    result = topic_label_agreement(exam, official, rel_level=rel_level, exam_level=exam_level,
                                   official_max=official_max, exam_max=exam_max, bootstrap=bootstrap, seed=seed,
                                   confidence=confidence)
    if fmt == "json":
        write_output(dumps(_topics_json(result, exam, official), indent=2) + "\n", output)
    elif fmt == "tsv":
        write_output(render(_with_mean(result).reset_index(), "tsv") + "\n", output)
    else:
        write_output("\n".join(_topics_text(result)) + "\n", output)


def _with_mean(result: TopicAgreement):
    """The per-topic table and a MEAN row (counts left empty), as qrel-evaluate prints it."""
    import pandas as pd

    from exampp.analysis.topic_agreement import COUNTS

    mean = result.mean["mean"].rename("MEAN").to_frame().T.astype(object)
    mean[list(COUNTS)] = ""
    table = pd.concat([result.per_topic.astype(object), mean])[list(result.per_topic.columns)]
    table.index.name = "topic"
    return table


def _topics_json(result: TopicAgreement, exam: str, official: str) -> dict[str, Any]:
    return {
        "exam": exam, "official": official, "per_topic": True,
        "official_max_grade": result.official_max, "exam_max_grade": result.exam_max,
        "rel_level": result.rel_level, "exam_level": result.exam_level,
        "bootstrap": {"n": result.bootstrap, "seed": result.seed, "confidence": result.confidence}
        if result.bootstrap else None,
        "topics": records(result.per_topic.reset_index()),
        "mean": records(result.mean.reset_index()),
    }


def _topics_text(result: TopicAgreement) -> list[str]:
    lines = [f"{len(result.per_topic)} topics, each over the union of both sides' passages (missing: grade 0); "
             f"official grades clipped to 0..{result.official_max}, EXAM grades to 0..{result.exam_max}",
             f"relevant: official grade >= {result.rel_level}, EXAM grade >= {result.exam_level}",
             "",
             render(_with_mean(result).reset_index(), "text")]
    if result.bootstrap:
        lines += ["", f"mean over topics with {result.confidence:.0%} intervals from {result.bootstrap} bootstrap "
                      f"resamples of the topics (seed {result.seed}):",
                  result.mean.reset_index().to_string(index=False, formatters={
                      "mean": _number, "low": _number, "high": _number})]
    return lines
