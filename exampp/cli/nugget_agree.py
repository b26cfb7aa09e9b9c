"""``exampp nuggets agree``: how a nugget assignment agrees with another (the official one)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import click

from exampp.analysis.nugget_scores import MEASURES
from exampp.cli.output import FILE, bootstrap_options, format_option, one_stdin, output_option, render, write_output
from exampp.report.records import dumps, records

if TYPE_CHECKING:
    from exampp.analysis.nugget_agreement import NuggetAgreement


@click.command()
@click.argument("ours", type=FILE)
@click.argument("official", type=FILE)
@click.option("--measure", "-m", "measures", type=click.Choice(MEASURES), multiple=True, default=("V_strict",),
              show_default=True, help="Correlate the run leaderboards of this measure (repeatable).")
@bootstrap_options
@format_option
@output_option
def agree(ours, official, measures, bootstrap, seed, confidence, fmt, output) -> None:
    """Agreement of the nugget assignment OURS with OFFICIAL (both in the TREC 2024 RAG track's
    assignment format, as `nuggets assign` writes it) on the (topic, run, nugget) both assign.

    Nugget level: Cohen's kappa of support / partial_support / not_support, kappa of support
    against the rest, Krippendorff's alpha (ordinal) of the grades 0/1/2, and the OURS x
    OFFICIAL table. Run level: Kendall's tau-b, Spearman's rho and tau_ap (OFFICIAL the
    reference) of each --measure's run leaderboards over the shared topics, on the runs that
    answered all of them (the others are listed). --bootstrap N adds symmetric bootstrap intervals
    over N resamplings of the topics (the same draws for every statistic). TSV is the statistics
    table; JSON holds everything.

    \b
    Example:
      exampp nuggets agree offline.jsonl.gz nugget-assignments.jsonl.gz --bootstrap 1000
      exampp nuggets agree llm.jsonl.gz official.jsonl.gz -m V_strict -m W --format json -o agreement.json
    """
    from exampp.api.nugget_agreement import assignment_agreement

    one_stdin(ours, official)
    result = assignment_agreement(ours, official, measures=measures, bootstrap=bootstrap, seed=seed,
                                  confidence=confidence)
    if fmt == "json":
        write_output(dumps(_json(result, ours, official), indent=2) + "\n", output)
    elif fmt == "tsv":
        write_output(render(result.table(), "tsv") + "\n", output)
    else:
        write_output("\n".join(_text(result, ours, official)) + "\n", output)


def _json(result: NuggetAgreement, ours: str, official: str) -> dict[str, Any]:
    table = result.confusion
    return {
        "ours": ours, "official": official, "n_nuggets": result.n_nuggets,
        "only_in_ours": result.only_ours, "only_in_official": result.only_official,
        "topics": list(result.topics), "n_runs": result.n_runs, "runs_left_out": list(result.runs_left_out),
        "bootstrap": {"n": result.bootstrap, "seed": result.seed, "confidence": result.confidence},
        "statistics": records(result.table()),
        "confusion": [{"ours": a, "official": b, "count": int(cast(int, table.at[a, b]))}
                      for a in table.index for b in table.columns],
    }


def _text(result: NuggetAgreement, ours: str, official: str) -> list[str]:
    lines = [f"ours: {ours}", f"official: {official}",
             f"{result.n_nuggets} (topic, run, nugget) assigned in both, {len(result.topics)} topics (not compared: "
             f"{result.only_ours} only in ours, {result.only_official} only in official)",
             f"run leaderboards: {result.n_runs} runs answering every topic (left out: "
             f"{', '.join(result.runs_left_out) or 'none'})"]
    if result.bootstrap:
        lines.append(f"bootstrap: {result.bootstrap} resamplings of the topics, seed {result.seed}, "
                     f"{100 * result.confidence:g}% symmetric intervals")
    number = {column: "{:.4f}".format for column in ("value", "low", "high")}
    lines += ["", result.table().to_string(index=False, formatters=number, na_rep="-"),
              "", "ours (rows) x official (columns):", result.confusion.to_string()]
    return lines
