"""`exampp audit`: the pooled texts that address the judge, copy the exam, stuff the query or repeat
a text, and what they are worth to each run's score."""
from __future__ import annotations

from typing import TYPE_CHECKING

import click

from exampp.cli.output import (
    FILE,
    RESPONSES,
    depth_option,
    format_option,
    method_option,
    one_stdin,
    output_option,
    render,
    warn,
    workspace_option,
    write_output,
)
from exampp.cli.settings import Setting
from exampp.report.records import dumps

if TYPE_CHECKING:
    import pandas as pd

    from exampp.audit.tables import AuditResult


@click.command()
@workspace_option
@depth_option
@method_option
@click.option("--bank", type=FILE,
              help="Question bank: the exam copied texts are checked against and scored on (default: the workspace's).")
@click.option("--tau", type=Setting("tau"),
              help="A question counts as answered at grade >= tau [default: the stored method's].")
@click.option("--responses", type=RESPONSES,
              help="RAG answers (any file `exampp grade --responses` reads) to audit, each whole, instead of the "
                   "runs' pooled passages; the scores are of their segments as graded.")
@format_option
@output_option
@click.option("--flags", "flags_path", type=click.Path(dir_okay=False, allow_dash=True),
              help="Also write the flagged texts (runs, query, text id, class, evidence) to this file: TSV, "
                   "or JSON when it ends in .json.")
def audit(workspace, depth, method, bank, tau, responses, fmt, output, flags_path) -> None:
    """Audit a workspace's pooled texts for judge gaming: instructions to the judge (injection),
    exam questions copied in (leakage), query words stuffed (stuffing), a text repeated (duplicate).

    --responses audits RAG answers instead, each whole (its text id is its run), with the
    thresholds for nuggets when every question of the exam is a nugget.

    Prints per run the flagged texts in its top-k by class, their share of its pooled texts and,
    when the workspace holds grades, its EXAM-Cover@k and rank as graded and with every flagged
    text graded 0. --format json prints the flagged texts too. Flags are a finding, not a
    failure: the exit status is 0.

    \b
    Example:
      exampp audit -w dl19
      exampp audit -w dl19 --format json -o audit.json
      exampp audit -w dl19 --flags flagged.tsv
      exampp audit -w rag24 --responses answers.jsonl --bank nuggets.jsonl
    """
    from exampp.api.audit import audit as job

    one_stdin(bank, responses)
    result = job(workspace, depth=depth, method=method, bank=bank, tau=tau, responses=responses, warn=warn)
    if flags_path is not None:
        flagged = (dumps(_listed(result.flagged), indent=2) if str(flags_path).endswith(".json")
                   else render(result.flagged.assign(runs=result.flagged["runs"].map(",".join)), "tsv"))
        write_output(flagged + "\n", flags_path)
    report = dumps(_report(result), indent=2) if fmt == "json" else render(result.table, fmt)
    write_output(report + "\n", output)
    audited = f"pooled texts (depth {result.depth})" if result.texts == "passages" else "answers"
    click.echo(f"{len(result.flags)} flags on {result.flagged_texts} of {result.pooled} {audited}; "
               f"{result.thresholds} thresholds"
               + ("" if result.method_id else "; no grades in the workspace, so no scores"), err=True)


def _report(result: AuditResult) -> dict:
    """The JSON of an audit: its settings, the per-run table and every flag."""
    from exampp.report.records import records

    return {"texts": result.texts, "thresholds": result.thresholds, "depth": result.depth,
            "method": result.method_id, "tau": result.tau, "pooled": result.pooled,
            "runs": records(result.table), "flagged": _listed(result.flagged)}


def _listed(flagged: pd.DataFrame) -> list[dict]:
    """The flagged texts as JSON records, ``runs`` a list."""
    from exampp.report.records import records

    return [{**row, "runs": list(row["runs"])} for row in records(flagged)]
