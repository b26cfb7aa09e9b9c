"""`exampp report`: one HTML page (with its tables as TSV and its figures as PNG) on a workspace's
evaluation."""
from __future__ import annotations

import click

from exampp.cli.meta_evaluate import draw_options
from exampp.cli.output import FILE, InputPath, depth_option, method_option, progress_option, warn, workspace_option

_INPUT = InputPath(dir_okay=False)  # no standard input: a report reads several files


@click.command()
@workspace_option
@click.option("--output", "-o", "output_dir", required=True, type=click.Path(file_okay=False),
              help="Folder for report.html, the TSV tables and figures/ (made if missing).")
@click.option("--official-qrels", type=FILE,
              help="Official qrels (default: the workspace's qrels/official.qrels).")
@click.option("--official-measure", default="nDCG@10", show_default=True,
              help="Measure of the official leaderboard (ir_measures name).")
@click.option("--official", "official_file", type=_INPUT,
              help="Official leaderboard file (a per-query table, run<TAB>score, JSON) instead of the qrels' "
                   "measure (the qrels then serve only the agreement and the bank review), e.g. "
                   "`exampp nuggets score --per-query`'s table.")
@click.option("--official-column", metavar="NAME", help="Measure column of the --official file (e.g. V_strict).")
@click.option("--responses", type=InputPath(),
              help="RAG responses graded with `exampp grade --responses`: their answers are the runs "
                   "[default: WORKSPACE/runs].")
@click.option("--nuggets", type=_INPUT,
              help="The track's nugget assignment file (JSONL): the RAG section's nugget leaderboard.")
@click.option("--nuggets-assigned", multiple=True, type=_INPUT,
              help="A nugget assignment of exampp's (`exampp nuggets assign`) to compare with --nuggets, "
                   "repeatable.")
@click.option("--support", type=_INPUT,
              help="Citation judgments (the track's JSONL): the RAG section's citation support per run.")
@click.option("--assess-sample", type=_INPUT,
              help="A human sample (exampp assess sample): adds the Human check section, the judge's leaderboard "
                   "corrected by its labels.")
@click.option("--assess-labels", type=_INPUT,
              help="The sample's labels (qrels, Label Studio's export) [default: the workspace's label store].")
@click.option("--assess-measure", "assess_measures", multiple=True, default=("P@10",), show_default=True,
              help="A measure the Human check corrects (P@k, nDCG@k), repeatable.")
@click.option("--assess-rel-level", type=float, default=1, show_default=True,
              help="Human grade from which a passage is relevant in the Human check.")
@method_option
@draw_options
@depth_option
@click.option("--exclude", multiple=True, help="Run name to leave out, repeatable.")
@click.option("--rel-level", type=int, default=1, show_default=True,
              help="Official grade at which a passage counts as relevant (agreement, bank review).")
@progress_option
def report(workspace, output_dir, official_qrels, official_measure, official_file, official_column, responses,
           nuggets, nuggets_assigned, support, assess_sample, assess_labels, assess_measures, assess_rel_level,
           method, bootstrap, irt_bootstrap, seed, depth, exclude, rel_level, progress) -> None:
    """A self-contained HTML report on a workspace: leaderboards with bootstrap intervals, the
    EXAM++ comparison plot, the meta-evaluation table, agreement with the official judgments,
    per-query scatter plots, grade histograms and the bank diagnostics. Every table is also
    written as TSV beside report.html, every figure as PNG under figures/.

    RAG answers: --nuggets adds the nugget leaderboard (V_strict with its bootstrap interval),
    --nuggets-assigned each assignment's agreement with it (kappa, alpha, and tau/rho of the
    V_strict leaderboards), --support the runs' citation support. A track without qrels gives
    its official leaderboard with --official (and --official-column) and its answers with
    --responses. --assess-sample adds a Human check: the leaderboard corrected by people's labels
    of a sample, with intervals, the orderings they confirm and the judge's calibration.

    \b
    Example:
      exampp report -w out/dl19 -o out/dl19/report --official-measure nDCG@10 --bootstrap 1000
      exampp nuggets score assignments.jsonl.gz --per-query --format tsv -o nuggets-pq.tsv
      exampp report -w out/rag24 -o out/rag24/report --responses answers.jsonl \\
          --official nuggets-pq.tsv --official-column V_strict --nuggets assignments.jsonl.gz \\
          --nuggets-assigned ours.jsonl.gz --support citation-judgments.jsonl.gz
    """
    from exampp.api.leaderboards import LeaderboardFile
    from exampp.api.report import ReportJob

    if official_column and not official_file:
        raise click.UsageError("--official-column goes with --official FILE")
    if nuggets_assigned and not nuggets:
        raise click.UsageError("--nuggets-assigned is compared with the official assignment: give --nuggets")
    result = ReportJob(workspace, output_dir, official_qrels=official_qrels, official_measure=official_measure,
                       method=method, bootstrap=bootstrap, irt_bootstrap=irt_bootstrap, seed=seed, depth=depth,
                       exclude=exclude, rel_level=rel_level,
                       official=LeaderboardFile(official_file, official_column) if official_file else None,
                       responses=responses, nuggets=nuggets, nuggets_assigned=nuggets_assigned, support=support,
                       assess_sample=assess_sample, assess_labels=assess_labels, assess_measures=assess_measures,
                       assess_rel_level=assess_rel_level, progress=progress).run(warn=warn)
    click.echo(f"{result.html} ({len(result.tables)} tables as TSV, {len(result.figures)} figures)")
