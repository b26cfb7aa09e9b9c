"""`exampp grade`: pool runs, grade every (passage, question) pair, write qrels and the cover leaderboard."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from exampp.cli.output import emit, format_option, one_stdin, output_option

_PATH = click.Path(dir_okay=False)


@click.command()
@click.argument("runs", nargs=-1, type=click.Path(exists=True, allow_dash=True))
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False),
              help="Config file [default: WORKSPACE/exampp.toml with -w, else ./exampp.toml; "
                   "none when absent]. Flags override its keys.")
@click.option("--grader", help="Grading method: self-rating, qa, qa-llm, qa-extractive, multiple-choice, "
                               "embedding (offline), direct:<thomas|faggiolib|helm|sun|faggiolib_few|sun_few> "
                               "[default: self-rating].")
@click.option("--model", help="Local model folder (a path: absolute, ./..., ~/... or existing) or HF hub id, "
                              "read from the local HF cache when the hub cannot be reached "
                              "[default: the grader's, google/flan-t5-large for LLM graders].")
@click.option("--device", help="auto (CUDA when torch sees a GPU, else the CPU), cpu, cuda or cuda:N "
                               "[default: auto; the embedding grader: cpu].")
@click.option("--dtype", help="Weights' dtype, e.g. bfloat16, float32 [default: bf16 on GPU, fp32 on CPU].")
@click.option("--batch-size", type=click.IntRange(min=1), help="Pairs per forward pass [default: from free memory].")
@click.option("--depth", "-k", type=click.IntRange(min=1), help="Pool the top-k passages of each run [default: 20].")
@click.option("--bank", type=_PATH, help="Question bank [default: WORKSPACE/question_banks/questions.jsonl].")
@click.option("--topics", help="Topics (query titles, needed by direct graders) [default: WORKSPACE/topics/topics.jsonl].")
@click.option("--corpus", help="Passage texts: JSONL/TSV file, irds:<dataset-id> or pyserini:<index-dir> "
                               "[default: WORKSPACE/corpus/passages.jsonl].")
@click.option("--responses", type=_PATH, help="Generated responses (RAG answers, JSONL or TSV) to segment "
                                              "into passages and grade as extra runs.")
@click.option("--workspace", "-w", type=click.Path(file_okay=False),
              help="Workspace folder for grades.sqlite and qrels/ [default: the config file's folder, else .].")
@click.option("--store", type=_PATH, help="Grade store file [default: WORKSPACE/grades.sqlite].")
@click.option("--tau", type=float, help="EXAM-Cover counts a question answered at grade >= tau "
                                        "[default: 4 for 0-5 ratings, 1 for 0/1 graders].")
@click.option("--min-grade", type=float, help="Write binary qrels: 1 when the label >= this grade "
                                              "[default: graded labels].")
@click.option("--chunk-size", type=click.IntRange(min=1), default=128, show_default=True,
              help="Pairs graded between two commits to the store.")
@click.option("--strict", is_flag=True, help="Pooled passages without text and run queries without exam "
                                             "questions are errors (default: warnings; they are left out).")
@click.option("--export-reference", type=_PATH,
              help="Also write the grades as the reference EXAM++ tool's graded JSONL.gz.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on a terminal.")
@format_option
@output_option
def grade(runs, config_path, grader, model, device, dtype, batch_size, depth, bank, topics, corpus, responses,
          workspace, store, tau, min_grade, chunk_size, strict, export_reference, progress, fmt, output) -> None:
    """Grade the pooled passages of RUNS (files or folders [default: WORKSPACE/runs/]) against
    the question bank, then write WORKSPACE/qrels/exam.qrels (EXAM labels) and print the
    EXAM-Cover@k leaderboard.

    Grades go to the workspace's grade store as each chunk completes: running the same command
    again grades nothing new; adding runs or questions grades only the new pairs; an
    interrupted run resumes where it stopped. Settings come from flags, else from the config
    file (--config, else WORKSPACE/exampp.toml with -w, else ./exampp.toml; keys: topics, bank,
    corpus, responses, model, grader, depth, workspace, store, device, dtype, batch_size, tau,
    min_grade), else the defaults.

    \b
    Example:
      exampp grade runs/                                   # the example collection, offline grader
      exampp grade runs/ --grader self-rating --model ~/models/flan-t5-large --device cuda
      exampp grade runs/ --responses responses/rag-answers.jsonl --min-grade 4 --format tsv -o cover.tsv
      exampp grade runs/ --export-reference out/example/graded.jsonl.gz
    """
    from exampp.config import load_config
    from exampp.workspace import Workspace

    # -w WS takes WS's config, never the current folder's: its relative paths would point elsewhere.
    one_stdin(bank, topics, corpus, responses, *runs)
    cfg = load_config(config_path, workspace if workspace is not None else ".")
    default_root = cfg.path.parent if cfg.path is not None else Path(".")
    ws = Workspace.at(cfg.pick("workspace", workspace, default_root))
    grader_name = cfg.pick("grader", grader, "self-rating")
    _check_grader_name(grader_name)
    device = cfg.pick("device", device, "auto")
    _check_device(device)
    depth = cfg.pick("depth", depth, 20)

    all_runs, corpora, bank_data, topic_data = _inputs(
        ws, runs, cfg.pick("corpus", corpus), cfg.pick("responses", responses),
        _existing(cfg.pick("bank", bank), ws.question_bank), _existing(cfg.pick("topics", topics), ws.topics))
    if not progress:
        _quiet_model_loading()
    the_grader = _load_grader(grader_name, cfg.pick("model", model), device, cfg.pick("dtype", dtype),
                              cfg.pick("batch_size", batch_size))

    from exampp.collection.qrels import write_qrels
    from exampp.grading.registry import default_tau
    from exampp.grading.runner import grade_collection, pool_records
    from exampp.scoring import exam_cover, exam_labels, exam_qrels, summarize
    from exampp.store import GradeStore

    if bank_data is None and not the_grader.direct:
        raise click.UsageError("no question bank: give --bank (or keep one at WORKSPACE/question_banks/questions.jsonl)")
    with GradeStore(cfg.pick("store", store, ws.store)) as grade_store:
        with _model_errors():
            try:
                graded = grade_collection(all_runs, corpora, the_grader, grade_store, bank_data, topic_data,
                                          depth=depth, strict=strict, chunk_size=chunk_size, progress=progress)
            except ValueError as exc:  # nothing to grade
                raise click.ClickException(str(exc)) from None
        exam, pool, summary, grades = graded.exam, graded.pool, graded.summary, graded.grades
        records = pool_records(grade_store, pool, exam, summary.method_id) if export_reference else []
    for warning in graded.warnings:
        click.echo(warning, err=True)
    click.echo(str(summary), err=True)

    labels = exam_labels(grades, exam.question_ids())
    write_qrels(exam_qrels(labels, cfg.pick("min_grade", min_grade)), ws.exam_qrels)
    click.echo(f"wrote {sum(len(d) for d in labels.values())} labels for {len(labels)} queries to {ws.exam_qrels}",
               err=True)
    if export_reference:
        from exampp.collection.reference_grades import reference_queries, write_reference_grades

        write_reference_grades(reference_queries(pool.passages, records, runs=all_runs.values()), export_reference)
        click.echo(f"wrote the grades in the reference tool's format to {export_reference}", err=True)
    tau = cfg.pick("tau", tau, default_tau(grader_name))
    emit(summarize(exam_cover(all_runs, grades, exam.question_ids(), tau=tau, depth=depth)), fmt, output)


def _existing(given: str | None, default: Path) -> str | None:
    """The given path, else the workspace's default file when it exists."""
    if given is not None:
        return given
    return str(default) if default.exists() else None


def _inputs(ws, runs, corpus, responses, bank, topics):
    """Read every input before any model loads, so that input errors come first."""
    from exampp.collection.corpus import open_corpus
    from exampp.collection.question_bank import read_question_bank
    from exampp.collection.runs import read_runs
    from exampp.collection.topics import read_topics
    from exampp.errors import InputError

    all_runs = read_runs(list(runs) or [ws.runs]) if runs or ws.runs.is_dir() else {}
    corpora = []
    if corpus is None and ws.corpus.exists():
        corpus = str(ws.corpus)
    if corpus is not None:
        corpora.append(open_corpus(corpus))
    if responses is not None:
        from exampp.segment import load_responses

        segmented = load_responses(responses)
        for name, run in segmented.runs.items():
            if name in all_runs:
                raise InputError(responses, None, f"run id {name!r} is already the name of a run "
                                                  f"({all_runs[name].path})")
            all_runs[name] = run
        corpora.append(segmented.corpus)
    if not all_runs:
        raise click.UsageError("no runs: give run files or folders (or --responses)")
    if not corpora:
        raise click.UsageError("no passage texts: give --corpus (or --responses)")
    bank_data = read_question_bank(bank) if bank is not None else None
    topic_data = read_topics(topics) if topics is not None else None
    return all_runs, corpora, bank_data, topic_data


@contextmanager
def _model_errors() -> Iterator[None]:
    """A model that cannot be loaded: its message (which says what to do), no traceback."""
    from exampp.grading.registry import is_model_load_error

    try:
        yield
    except Exception as exc:
        if is_model_load_error(exc):
            raise click.ClickException(str(exc)) from None
        raise


def _check_grader_name(name: str) -> None:
    from exampp.grading.registry import grader_names

    if name not in grader_names():
        raise click.BadParameter(f"unknown grader {name!r}; choose one of {', '.join(grader_names())}",
                                 param_hint="'--grader'")


def _check_device(device: str) -> None:
    """A wrong --device is reported before the inputs are read (``auto`` always resolves)."""
    if device == "auto":
        return
    from exampp.llm.device import resolve_device

    try:
        resolve_device(device)
    except ImportError:  # no torch: the grader's loading names the package to install
        pass


def _quiet_model_loading() -> None:
    """--no-progress silences transformers' own progress bars too (e.g. "Loading weights")."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # no LLM extra: nothing of transformers' will print
        return
    hf_logging.disable_progress_bar()


def _load_grader(name, model, device, dtype, batch_size):
    from exampp.grading.registry import GraderOptions, make_grader

    with _model_errors():
        try:
            return make_grader(name, GraderOptions(model, device, dtype, batch_size))
        except ImportError as exc:
            raise click.ClickException(
                f"grader {name!r} needs the package {exc.name or exc}: pip install 'exampp[llm]' "
                "(LLM graders) or 'exampp[embed]' (embedding grader)") from None
