"""`exampp cover`, `exampp qrels`, `exampp leaderboard`: scores from grades and from qrels."""
from __future__ import annotations

import click

from exampp.cli.measures import check_measures
from exampp.cli.output import (
    EVAL_RESULT_FORMATS,
    RESPONSES,
    InputPath,
    bootstrap_options,
    check_bootstrap_output,
    depth_option,
    emit,
    emit_eval_results,
    leaderboard_format_option,
    method_option,
    one_stdin,
    output_option,
    strict_option,
    warn,
    workspace_option,
)
from exampp.cli.settings import Setting
from exampp.defaults import LABELS, LEADERBOARD_MEASURES


@click.command()
@click.argument("runs", nargs=-1, type=InputPath(allow_dash=True))
@workspace_option
@method_option
@click.option("--bank", type=InputPath(dir_okay=False, allow_dash=True),
              help="Question bank defining each query's exam (default: the workspace's, else the graded questions).")
@click.option("--tau", "--min-grade", "tau", type=Setting("tau"),
              help="A question counts as answered at grade >= tau [default: the stored method's: 4 for "
                   "0-5 self-ratings, 1 for 0/1 grades].")
@depth_option
@click.option("--normalized", is_flag=True, help="n-EXAM: only questions some pooled passage answers count.")
@click.option("--expected", is_flag=True,
              help="Expected EXAM-Cover from grade probabilities: a question counts by the probability that a "
                   "top-k passage answers it (grades taken as independent).")
@click.option("--per-query", is_flag=True, help="Print per-query values instead of the leaderboard.")
@bootstrap_options
@strict_option
@leaderboard_format_option
@output_option
def cover(runs, workspace, method, bank, tau, depth, normalized, expected, per_query, bootstrap, seed, confidence,
          strict, fmt, output) -> None:
    """EXAM-Cover@k leaderboard: per run, the mean over queries of the fraction of the query's
    exam questions that its top-k passages answer (grade >= tau), with standard errors.

    RUNS are run files or folders (default: the workspace's runs/).

    --format tot (or ir_measures, jsonl) writes the measure 'cover' of every run on every
    query and each run's mean (topic 'all'), as TREC AutoJudge's autojudge-evaluate and
    'exampp correlate --a-format' read them.

    \b
    Example:
      exampp cover --workspace dl19 --tau 4 --depth 20
      exampp cover runs/ --tau 3 --per-query --format tsv
      exampp cover --workspace dl19 --format tot -o cover.tot
      exampp cover --workspace dl19 --expected        # grades with probabilities (self-rating)
    """
    from exampp.api.scores import CoverJob

    one_stdin(bank, *runs)
    if expected and normalized:
        raise click.UsageError("--expected has no --normalized (n-EXAM) variant: give one of them")
    check_bootstrap_output(bootstrap, per_query, fmt)
    job = CoverJob(workspace, runs or None, method=method, bank=bank, tau=tau, depth=depth, normalized=normalized,
                   expected=expected, bootstrap=bootstrap, seed=seed, confidence=confidence, strict=strict)
    result = job.run(warn=warn)
    if fmt in EVAL_RESULT_FORMATS:
        emit_eval_results(result.per_query[["run", "query_id", "cover"]], fmt, output)
    else:
        emit(result.per_query if per_query else result.leaderboard, fmt, output)


@click.command()
@workspace_option
@method_option
@click.option("--label", type=click.Choice(LABELS), default="max", show_default=True,
              help="Label of a passage from its grades on the query's questions: max (best grade), count "
                   "(questions answered at grade >= --tau), sum (of grades), expected (best expected grade, in "
                   "hundredths, from grade probabilities).")
@click.option("--tau", type=Setting("tau"),
              help="Grade at which a question counts as answered, for --label count and --per-question "
                   "[default: the stored method's: 4 for 0-5 self-ratings, 1 for 0/1 grades].")
@click.option("--min-grade", type=Setting("min_grade"),
              help="Write binary labels: 1 when label >= this (for --label expected: "
                   "when the expected grade >= this).")
@click.option("--per-question", is_flag=True,
              help="Intent-aware qrels 'qid subtopic docid label' (for alpha_nDCG@k, ERR_IA@k): each exam question "
                   "is a subtopic, label 1 when the passage's grade on it >= --tau; the key is written to "
                   "OUTPUT.questions.tsv.")
@click.option("--facets", is_flag=True, help="One qrels query per question facet (<query_id>/<facet_id>).")
@click.option("--bank", type=InputPath(dir_okay=False, allow_dash=True),
              help="Question bank (default: the workspace's).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, allow_dash=True),
              help="Qrels file to write (- for stdout) [default: WORKSPACE/qrels/exam.qrels, with --per-question "
                   "WORKSPACE/qrels/questions.qrels, with --responses WORKSPACE/qrels/responses.qrels].")
@click.option("--responses", type=RESPONSES,
              help="Label the passages of these RAG answers (graded with `exampp grade --responses`) instead of "
                   "those of the workspace's runs.")
def qrels(workspace, method, label, tau, min_grade, per_question, facets, bank, output, responses) -> None:
    """Export EXAM-Qrels: each graded passage of the workspace's runs (or of --responses) labelled
    with its best grade over the query's questions (or another --label; 0/1 at --min-grade), as a
    TREC qrels file for trec_eval; or, with --per-question, intent-aware qrels for alpha-nDCG and
    ERR-IA. Graded passages no run ranks (answers graded with --responses) are left out, and counted.

    \b
    Example:
      exampp qrels --workspace dl19 --min-grade 4 -o dl19/qrels/exam-4.qrels
      trec_eval -m P.20 -m ndcg_cut.20 dl19/qrels/exam-4.qrels dl19/runs/p_bert.run
      exampp qrels --workspace dl19 --label count --tau 4 -o dl19/qrels/count-4.qrels
      exampp qrels --workspace dl19 --per-question --tau 4 -o dl19/qrels/questions.qrels
      exampp leaderboard dl19/runs --qrels dl19/qrels/questions.qrels -m alpha_nDCG@10 -m ERR_IA@10
    """
    from exampp.api.scores import export_qrels, export_question_qrels, question_key_path
    from exampp.stores.layout import Workspace

    if per_question:
        given = [flag for flag, value in (("--label", label != "max"), ("--min-grade", min_grade is not None),
                                          ("--facets", facets)) if value]
        if given:
            raise click.UsageError(f"--per-question writes 0/1 labels per question: drop {' and '.join(given)}")
        target = output or Workspace.at(workspace).qrels_dir / f"{'responses-' if responses else ''}questions.qrels"
        intent = export_question_qrels(workspace, method=method, tau=tau, bank=bank, output=target,
                                       responses=responses, warn=warn)
        n = sum(len(docs) for subtopics in intent.values() for docs in subtopics.values())
        subtopics = sum(len(s) for s in intent.values())
        where = "standard output" if target == "-" else f"{target} (key: {question_key_path(target)})"
        click.echo(f"wrote {n} labels for {subtopics} questions of {len(intent)} queries to {where}", err=True)
        return
    ws = Workspace.at(workspace)
    target = output or (ws.responses_qrels if responses else ws.exam_qrels)
    written = export_qrels(workspace, method=method, label=label, tau=tau, min_grade=min_grade, facets=facets,
                           bank=bank, output=target, responses=responses, warn=warn)
    n = sum(len(docs) for docs in written.values())
    click.echo(f"wrote {n} labels for {len(written)} queries to {'standard output' if target == '-' else target}",
               err=True)


@click.command()
@click.argument("runs", nargs=-1, required=True, type=InputPath(allow_dash=True))
@click.option("--qrels", "qrels_path", required=True, metavar="QRELS",
              help="Qrels file to evaluate against (official or EXAM-Qrels), or irds:<dataset-id>; with an "
                   "intent-aware measure (alpha_nDCG@k, ERR_IA@k) intent qrels 'qid subtopic docid label' "
                   "(exampp qrels --per-question), the other measures taking a document's best label.")
@click.option("--measure", "-m", "measures", multiple=True, default=LEADERBOARD_MEASURES, show_default=True,
              callback=check_measures,
              help="Measure, repeatable: ir_measures name (nDCG@10, P(rel=2)@20, AP, R@100, RR...) or "
                   "trec_eval name (ndcg_cut.10, P.5,10, map).")
@click.option("--depth", "-k", type=Setting("depth"), help="Truncate runs to their top-k first.")
@click.option("--exclude", multiple=True, help="Run name to leave out, repeatable.")
@click.option("--per-query", is_flag=True, help="Print per-query values instead of means.")
@bootstrap_options
@strict_option
@leaderboard_format_option
@output_option
def leaderboard(runs, qrels_path, measures, depth, exclude, per_query, bootstrap, seed, confidence, strict, fmt,
                output) -> None:
    """Leaderboard of many runs under ir_measures measures: the mean over the qrels' queries
    (a query a run lacks scores 0), best first by the first measure.

    --format tot (or ir_measures, jsonl) writes every measure of every run on every query and
    each run's means (topic 'all'), as TREC AutoJudge's autojudge-evaluate reads them.

    \b
    Example:
      exampp leaderboard runs/ --qrels qrels/official.qrels -m nDCG@10 -m 'P(rel=2)@10' -m AP
      exampp leaderboard runs/ --qrels qrels/questions.qrels -m alpha_nDCG@10 -m ERR_IA@10 -m nDCG@10
      exampp leaderboard runs/ --qrels qrels/official.qrels -m nDCG@10 --bootstrap 1000 --seed 1
      exampp leaderboard runs/ --qrels qrels/official.qrels -m nDCG@10 -m AP --format tot -o truth.tot
    """
    from exampp.api.scores import LeaderboardJob, NoRunLeft

    one_stdin(qrels_path, *runs)
    check_bootstrap_output(bootstrap, per_query, fmt)
    as_results = fmt in EVAL_RESULT_FORMATS
    try:
        table = LeaderboardJob(runs, qrels_path, measures, depth=depth, exclude=exclude,
                               per_query=per_query or as_results,
                               bootstrap=bootstrap, seed=seed, confidence=confidence, strict=strict).run(warn=warn)
    except NoRunLeft as exc:
        raise click.UsageError(f"--exclude leaves no run: it names every run read ({', '.join(exc.runs)})") from None
    if as_results:
        emit_eval_results(table, fmt, output)
    else:
        emit(table, fmt, output)
