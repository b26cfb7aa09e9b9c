"""`exampp cover`, `exampp qrels`, `exampp leaderboard`: scores from grades and from qrels."""
from __future__ import annotations

from pathlib import Path

import click

from exampp.cli.measures import check_measures
from exampp.cli.output import check_judged, emit, format_option, one_stdin, output_option, strict_option
from exampp.workspace import Workspace

depth_option = click.option(
    "--depth", "-k", type=click.IntRange(min=1), default=20, show_default=True, help="Top-k passages of each run."
)
workspace_option = click.option(
    "--workspace", "-w", type=click.Path(file_okay=False), default=".", show_default=True,
    help="Workspace folder (grades.sqlite, question_banks/, runs/).",
)
method_option = click.option(
    "--method", help="Grading method id in the store (default: the only one there).",
)


@click.command()
@click.argument("runs", nargs=-1, type=click.Path(exists=True, allow_dash=True))
@workspace_option
@method_option
@click.option("--bank", type=click.Path(dir_okay=False, exists=True, allow_dash=True),
              help="Question bank defining each query's exam (default: the workspace's, else the graded questions).")
@click.option("--tau", "--min-grade", "tau", type=float,
              help="A question counts as answered at grade >= tau [default: the stored method's: 4 for "
                   "0-5 self-ratings, 1 for 0/1 grades].")
@depth_option
@click.option("--normalized", is_flag=True, help="n-EXAM: only questions some pooled passage answers count.")
@click.option("--per-query", is_flag=True, help="Print per-query values instead of the leaderboard.")
@strict_option
@format_option
@output_option
def cover(runs, workspace, method, bank, tau, depth, normalized, per_query, strict, fmt, output) -> None:
    """EXAM-Cover@k leaderboard: per run, the mean over queries of the fraction of the query's
    exam questions that its top-k passages answer (grade >= tau), with standard errors.

    RUNS are run files or folders (default: the workspace's runs/).

    \b
    Example:
      exampp cover --workspace dl19 --tau 4 --depth 20
      exampp cover runs/ --tau 3 --per-query --format tsv
    """
    from exampp.collection.runs import read_runs
    from exampp.scoring import exam_cover, questions_by_query, summarize

    from exampp.api.workspace import stored_grades, workspace_exam

    one_stdin(bank, *runs)
    ws = Workspace.at(workspace)
    stored = stored_grades(ws, method)
    grades = stored.grades
    tau = stored.default_tau if tau is None else tau
    exam = workspace_exam(ws, bank) or questions_by_query(grades)
    all_runs = read_runs(runs or [ws.runs])
    check_judged(all_runs, exam, "the exam (question bank)", strict)
    table = exam_cover(all_runs, grades, exam, tau=tau, depth=depth, normalized=normalized)
    emit(table if per_query else summarize(table), fmt, output)


@click.command()
@workspace_option
@method_option
@click.option("--min-grade", "tau", type=float, help="Write binary labels: 1 when label >= this grade.")
@click.option("--facets", is_flag=True, help="One qrels query per question facet (<query_id>/<facet_id>).")
@click.option("--bank", type=click.Path(dir_okay=False, exists=True, allow_dash=True), help="Question bank (default: the workspace's).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, allow_dash=True),
              help="Qrels file to write (- for stdout) [default: WORKSPACE/qrels/exam.qrels].")
def qrels(workspace, method, tau, facets, bank, output) -> None:
    """Export EXAM-Qrels: each graded passage labelled with its best grade over the query's
    questions (or 0/1 at --min-grade), as a TREC qrels file for trec_eval.

    \b
    Example:
      exampp qrels --workspace dl19 --min-grade 4 -o dl19/qrels/exam-4.qrels
      trec_eval -m P.20 -m ndcg_cut.20 dl19/qrels/exam-4.qrels dl19/runs/p_bert.run
    """
    from exampp.collection.qrels import write_qrels
    from exampp.scoring import exam_labels, exam_qrels, facet_labels

    from exampp.api.workspace import question_facets, stored_grades, workspace_exam

    ws = Workspace.at(workspace)
    grades = stored_grades(ws, method).grades
    exam = workspace_exam(ws, bank)
    if facets:
        labels = facet_labels(grades, question_facets(ws, bank))
    else:
        labels = exam_labels(grades, exam)
    target = output or ws.exam_qrels
    write_qrels(exam_qrels(labels, tau), target)
    n = sum(len(docs) for docs in labels.values())
    click.echo(f"wrote {n} labels for {len(labels)} queries to {'standard output' if target == '-' else target}",
               err=True)


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, allow_dash=True))
@click.option("--qrels", "qrels_path", required=True, metavar="QRELS",
              help="Qrels file to evaluate against (official or EXAM-Qrels), or irds:<dataset-id>.")
@click.option("--measure", "-m", "measures", multiple=True, default=("nDCG@20", "P@20"), show_default=True,
              callback=check_measures,
              help="Measure, repeatable: ir_measures name (nDCG@10, P(rel=2)@20, AP, R@100, RR...) or "
                   "trec_eval name (ndcg_cut.10, P.5,10, map).")
@click.option("--depth", "-k", type=click.IntRange(min=1), help="Truncate runs to their top-k first.")
@click.option("--exclude", multiple=True, help="Run name to leave out, repeatable.")
@click.option("--per-query", is_flag=True, help="Print per-query values instead of means.")
@strict_option
@format_option
@output_option
def leaderboard(runs, qrels_path, measures, depth, exclude, per_query, strict, fmt, output) -> None:
    """Leaderboard of many runs under ir_measures measures: the mean over the qrels' queries
    (a query a run lacks scores 0), best first by the first measure.

    \b
    Example:
      exampp leaderboard runs/ --qrels qrels/official.qrels -m nDCG@10 -m 'P(rel=2)@10' -m AP
    """
    from exampp.collection.qrels import read_qrels
    from exampp.collection.runs import RunFile, run_paths
    from exampp.scoring import leaderboard as compute, per_query_measures

    one_stdin(qrels_path, *runs)
    qrels = read_qrels(qrels_path)
    files = [RunFile(path) for path in run_paths(runs)]  # each read one query at a time
    if per_query:
        table = per_query_measures(files, qrels, measures, depth, exclude=exclude)
    else:
        table = compute(files, qrels, measures, depth, exclude=exclude).reset_index()
    kept = [f for f in files if f.name not in exclude]
    if not kept:
        raise click.UsageError(f"--exclude leaves no run: it names every run read "
                               f"({', '.join(sorted(str(f.name) for f in files))})")
    check_judged(kept, qrels, qrels_path, strict)
    emit(table, fmt, output)
