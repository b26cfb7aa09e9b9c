"""`exampp grade`: pool runs, grade every (passage, question) pair, write qrels and the cover leaderboard."""
from __future__ import annotations

import click

from exampp.cli.backend_options import backend_options
from exampp.cli.output import (
    RESPONSES,
    InputPath,
    check_method,
    emit,
    format_option,
    one_stdin,
    output_option,
    progress_option,
)
from exampp.cli.settings import Setting
from exampp.defaults import CHUNK, LABELS

_PATH = click.Path(dir_okay=False)


def _list_graders(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from exampp.grading.registry import describe_methods

    click.echo(describe_methods())
    ctx.exit()


@click.command()
@click.argument("runs", nargs=-1, type=InputPath(allow_dash=True))
@click.option("--config", "config_path", type=InputPath(dir_okay=False),
              help="Config file [default: WORKSPACE/exampp.toml with -w, else ./exampp.toml; "
                   "none when absent]. Flags override its keys.")
@click.option("--grader", "--method", "grader", callback=check_method,
              help="Grading method with its parameters, e.g. self-rating, qa(verify=llm), direct:thomas, embedding "
                   "(offline) [default: self-rating]. --list-graders shows them all.")
@click.option("--list-graders", is_flag=True, expose_value=False, is_eager=True, callback=_list_graders,
              help="List the grading methods with their parameters, grade scales and default tau, and exit.")
@backend_options(
    backend_help="[default: the method's; hf for LLM methods]",
    model_help="[default: the method's, google/flan-t5-large for LLM methods]",
    chat_note=" Chat-formatted grades are filed under JUDGE+chat.")
@click.option("--depth", "-k", type=Setting("depth"), help="Pool the top-k passages of each run [default: 20].")
@click.option("--bank", type=_PATH, help="Question bank [default: WORKSPACE/question_banks/questions.jsonl].")
@click.option("--topics", help="Topics (query titles, needed by direct graders) "
                               "[default: WORKSPACE/topics/topics.jsonl].")
@click.option("--corpus", help="Passage texts: JSONL/TSV file, irds:<dataset-id> or pyserini:<index-dir> "
                               "[default: WORKSPACE/corpus/passages.jsonl].")
@click.option("--responses", type=RESPONSES, help="Generated responses (RAG answers, JSONL or TSV; AutoJudge "
                                              "reports; a file or a folder of them) to segment into passages and "
                                              "grade as extra runs.")
@click.option("--workspace", "-w", type=click.Path(file_okay=False),
              help="Workspace folder for grades.sqlite and qrels/ [default: the config file's folder, else .].")
@click.option("--store", type=_PATH, help="Grade store file [default: WORKSPACE/grades.sqlite].")
@click.option("--tau", type=Setting("tau"), help="EXAM-Cover counts a question answered at grade >= tau "
                                        "[default: the method's: 4 for 0-5 ratings, 1 for 0/1 grades].")
@click.option("--min-grade", type=Setting("min_grade"), help="Write binary qrels: 1 when the label >= this grade "
                                              "[default: graded labels].")
@click.option("--label", type=click.Choice(LABELS),
              help="EXAM label of the qrels written: max (best grade), count (questions answered at grade >= tau), "
                   "sum (of grades), expected (best expected grade in hundredths; methods storing grade "
                   "probabilities) [default: max].")
@click.option("--chunk-size", type=Setting("chunk_size"), default=CHUNK, show_default=True,
              help="Pairs graded between two commits to the store.")
@click.option("--cascade", metavar="embedding:RECALL",
              help="Send the LLM only the pairs a cheap first stage (sentence embeddings, offline) cannot rule out; "
                   "the rest get grade 0, marked in the store so that a run without --cascade grades them. RECALL: "
                   "the share of the pairs the LLM grades >= tau to keep (0.8, 0.9, 0.95, 0.98 or 0.99; thresholds "
                   "calibrated on DL19 for tau 3, 4, 5).")
@click.option("--cascade-threshold", type=Setting("cascade_threshold"),
              help="The cascade's threshold on its first stage's score (log-odds of grade >= tau), "
                   "instead of a target recall; implies --cascade embedding.")
@click.option("--engine", type=click.Choice(["local", "ray"]),
              help="Where the grader runs: local (this process) or ray (Ray workers, one model replica each; "
                   "the extra 'ray') [default: local].")
@click.option("--workers", type=Setting("workers"),
              help="With --engine ray: workers (model replicas) [default: one per GPU, else 1].")
@click.option("--ray-address", metavar="ADDR",
              help="With --engine ray: a running Ray cluster, e.g. ray://head:10001 or auto "
                   "[default: start Ray on this machine].")
@click.option("--batch-api/--no-batch-api", default=None,
              help="With --backend openai: send the requests through the OpenAI Batch API (half the price, answers "
                   "within 24 h); the batches and their answers are kept in the grade store, so a stopped job "
                   "resumes them [default: no].")
@click.option("--batch-price", metavar="IN,OUT",
              help="With --batch-api: dollars per million prompt and completion tokens, to estimate the cost before "
                   "submitting [default: tokens only].")
@click.option("--batch-poll", type=Setting("batch_poll"), metavar="SECONDS",
              help="With --batch-api: seconds between looks at a batch's status [default: 30].")
@click.option("--canaries", type=Setting("canaries"), metavar="N",
              help="Also grade each pooled passage against N questions of other queries (chosen by a stable hash), "
                   "filed apart under METHOD_ID+canaries: `exampp audit` flags a text the judge finds to answer "
                   "several unrelated questions; no measure, qrels or leaderboard reads them [default: 0].")
@click.option("--strict", is_flag=True, help="Pooled passages without text and run queries without exam "
                                             "questions are errors (default: warnings; they are left out).")
@click.option("--allow-partial", is_flag=True,
              help="Write qrels over the pooled passages with a text in the corpus even when the store has grades "
                   "of pooled passages the corpus lacks (default: refused, as a wrong --corpus would drop their "
                   "labels).")
@click.option("--export-reference", type=_PATH,
              help="Also write the grades as the reference EXAM++ tool's graded JSONL.gz.")
@click.option("--validate", "validate_first", is_flag=True,
              help="Check the runs and responses first (`exampp validate`, against --topics when given) and stop "
                   "on errors.")
@progress_option
@format_option
@output_option
def grade(runs, config_path, grader, workspace, progress, fmt, output, validate_first, **settings) -> None:
    """Grade the pooled passages of RUNS (files or folders [default: WORKSPACE/runs/]) against
    the question bank, then write WORKSPACE/qrels/exam.qrels (EXAM labels) and print the
    EXAM-Cover@k leaderboard.

    Grades go to the workspace's grade store as each chunk completes: running the same command
    again grades nothing new; adding runs or questions grades only the new pairs; an
    interrupted run resumes where it stopped. Settings come from flags, else from the config
    file (--config, else WORKSPACE/exampp.toml with -w, else ./exampp.toml; its keys are the
    long names of the options, with _ for -: grader, base_url, batch_size...), else the defaults.

    \b
    Example:
      exampp grade runs/                                   # the example collection, offline grader
      exampp grade runs/ --grader self-rating --model ~/models/flan-t5-large --device cuda
      exampp grade runs/ --grader 'qa(verify=llm)' --backend openai --base-url http://localhost:8000/v1 \\
                         --model google/flan-t5-large
      exampp grade runs/ --responses responses/rag-answers.jsonl --min-grade 4 --format tsv -o cover.tsv
      exampp grade runs/ --export-reference out/example/graded.jsonl.gz
      exampp grade runs/ --grader self-rating --cascade embedding:0.95   # LLM calls only where needed
      exampp grade runs/ --grader self-rating --engine ray --workers 2    # two model replicas on Ray
      exampp grade runs/ --grader self-rating --backend openai --model gpt-4o-mini --batch-api \\
                         --batch-price 0.075,0.3                          # the Batch API, half the price
      exampp grade runs/ --grader 'self-rating(prompt=fenced)' --canaries 4  # defences against judge gaming
      exampp grade runs/ --grader injection-check --backend openai --model M  # for exampp audit, no qrels
    """
    from exampp.api.grade import GradeJob
    from exampp.stores.layout import Workspace

    one_stdin(settings["bank"], settings["topics"], settings["corpus"], settings["responses"], *runs)
    job = GradeJob.configure(config_path, workspace, runs=tuple(runs) or None, grader=grader, progress=progress,
                             **settings)
    if validate_first:
        from exampp.api.validate import validate_grade_inputs

        if "-" in (*runs, settings["responses"], settings["topics"]):  # read once by the checks, gone for grading
            raise click.UsageError("--validate reads the inputs before grading them: give files, not - (stdin)")

        refused = [run for run in validate_grade_inputs(job).runs if run.errors]
        for run in refused:
            for finding in (f for f in run.findings if f.severity == "error"):
                click.echo(f"{finding.where or run.run_id}: {finding.check}: {finding.message}", err=True)
        if refused:
            raise click.ClickException(f"validate refused {len(refused)} runs; nothing graded "
                                       f"(`exampp validate` shows every finding)")
    result = job.run()
    for warning in result.warnings:
        click.echo(warning, err=True)
    click.echo(str(result.summary), err=True)
    if result.canaries is not None:
        click.echo(f"canaries: {result.canaries}", err=True)
    if result.usage is not None and result.usage.requests:
        click.echo(f"judge: {result.usage}", err=True)
    if result.check is not None:  # a check (injection-check) judges no relevance: no labels, no leaderboard
        click.echo(f"{result.check}; `exampp audit` flags them", err=True)
        return
    ws = Workspace.at(job.workspace)
    for path in result.written:  # the runs' qrels, the answers' (--responses): never one file for both
        if path not in (ws.exam_qrels, ws.responses_qrels):
            continue
        qrels = result.qrels if path == ws.exam_qrels else result.answer_qrels
        what = f" (the {'runs' if path == ws.exam_qrels else 'answers'}' passages)" if result.answer_qrels else ""
        click.echo(f"wrote {sum(len(d) for d in qrels.values())} labels for {len(qrels)} queries to {path}{what}",
                   err=True)
    if job.export_reference:
        click.echo(f"wrote the grades in the reference tool's format to {job.export_reference}", err=True)
    click.echo(f"EXAM-Cover@{job.depth}, tau {result.tau:g}: per run, the mean over queries of the share of the "
               f"query's questions a top-{job.depth} passage answers at grade >= {result.tau:g}", err=True)
    emit(result.leaderboard, fmt, output)
