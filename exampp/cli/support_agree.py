"""``exampp support agree``: the agreement of two citation-judgment files."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

import click

from exampp.cli.output import FILE, format_option_of, one_stdin, output_option, write_output
from exampp.report.records import dumps, json_value

if TYPE_CHECKING:
    from exampp.api.support import SupportAgreement


@click.command()
@click.argument("first", type=FILE)
@click.argument("second", type=FILE)
@format_option_of("text", "json")
@output_option
def agree(first, second, fmt, output) -> None:
    """Agreement of two citation-judgment files (e.g. assessors against a model's predictions).

    On the citations both judged (same topic, run, sentence id and cited segment): Cohen's
    kappa on the three support levels and on full support against the rest, Krippendorff's
    alpha (ordinal), and the FIRST x SECOND support table. Then Kendall's tau and Spearman's
    rho of the run leaderboards the two files induce (weighted precision, weighted recall),
    over the runs both have and the topics both cover; when the files share no topic, over
    each file's own topics, and said so.

    \b
    Example:
      exampp support agree assessors.jsonl.gz predictions.jsonl.gz
      exampp support agree assessors.jsonl.gz llm.jsonl.gz --format json -o agreement.json
    """
    from exampp.api.support import support_agreement

    one_stdin(first, second)
    result = support_agreement(first, second)
    if fmt == "json":
        write_output(dumps(_json(result, first, second), indent=2) + "\n", output)
    else:
        write_output("\n".join(_text(result)) + "\n", output)


def _json(result: SupportAgreement, first: str, second: str) -> dict[str, Any]:
    table = result.confusion
    return {
        "first": first, "second": second, "n_citations": result.n,
        "kappa": json_value(result.kappa), "kappa_full": json_value(result.kappa_full),
        "alpha_ordinal": json_value(result.alpha),
        "confusion": [{"first": int(a), "second": int(b), "count": int(cast(int, table.at[a, b]))}
                      for a in table.index for b in table.columns],
        "topics": {"first": result.topics[0], "second": result.topics[1], "shared": list(result.shared_topics)},
        "leaderboards": {measure: {"kendall": json_value(c.kendall), "spearman": json_value(c.spearman),
                                   "n_runs": c.n_systems, "over": result.leaderboard_note}
                         for measure, c in result.correlations.items()},
    }


def _text(result: SupportAgreement) -> list[str]:
    if result.n:
        lines = [f"{result.n} citations judged in both",
                 f"Cohen's kappa (none/partial/full): {_number(result.kappa)}",
                 f"Cohen's kappa (full support or not): {_number(result.kappa_full)}",
                 f"Krippendorff's alpha (ordinal): {_number(result.alpha)}",
                 "",
                 "support in the first file (rows) x in the second (columns):",
                 result.confusion.to_string()]
    else:
        lines = ["no citation is judged in both files: no kappa or alpha"]
    lines += ["", f"run leaderboards, {result.leaderboard_note}:"]
    lines += [f"  {measure}: Kendall tau {_number(c.kendall)}, Spearman rho {_number(c.spearman)} "
              f"({c.n_systems} runs)" for measure, c in result.correlations.items()]
    return lines


def _number(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.4f}"
