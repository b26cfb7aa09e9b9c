"""`exampp exam generate`: a multiple-choice exam from a document corpus (:mod:`exampp.api.exam_generate`)."""
from __future__ import annotations

import click

from exampp.cli.backend_options import backend_options, generation_options
from exampp.cli.output import emit, format_option_of, progress_option
from exampp.cli.settings import FiniteRange
from exampp.report.records import dumps

_PATH = click.Path(dir_okay=False)
_THRESHOLD = FiniteRange(min=-1, max=1)


@click.command()
@click.argument("corpus")
@click.option("--output", "-o", type=_PATH, required=True,
              help="The exam: an exampp question bank (JSONL) with choices and keys, one query per document.")
@click.option("--task-domain", required=True,
              help="What the corpus documents, as the prompt names it: 'Here is some documentation from "
                   "TASK_DOMAIN: ...', e.g. 'the Larkspur Home Hub manual'.")
@click.option("--query-prefix", default="", help="Put before each document id to make its question's query id.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the shuffle of the choices.")
@generation_options(items="documents", max_new_tokens=512, max_attempts=2,
                    unusable="an answer that cannot be read", kept_in="OUTPUT.answers.jsonl")
@click.option("--drop-fraction", type=FiniteRange(0, 1, max_open=True), default=0.05, show_default=True,
              help="What each distractor filter drops when its threshold is not given.")
@click.option("--jaccard-margin", type=_THRESHOLD,
              help="Drop a question when a distractor's n-gram Jaccard with the document exceeds the key's by "
                   "more than this [default: chosen to drop --drop-fraction, at least 0].")
@click.option("--cosine-margin", type=_THRESHOLD,
              help="The same with embedding cosine [default: chosen to drop --drop-fraction, at least 0].")
@click.option("--jaccard-threshold", type=_THRESHOLD,
              help="Drop a question when a distractor's n-gram Jaccard with the key exceeds this "
                   "[default: chosen to drop --drop-fraction].")
@click.option("--cosine-threshold", type=_THRESHOLD,
              help="The same with embedding cosine [default: chosen to drop --drop-fraction].")
@click.option("--embedding-model", metavar="MODEL",
              help="Sentence-transformers model of the cosine filters [default: the packaged all-MiniLM-L6-v2].")
@click.option("--cosine/--no-cosine", default=True, show_default=True,
              help="Also filter with embedding cosine (--no-cosine: n-gram Jaccard only).")
@click.option("--report", type=_PATH, help="Write the filters, baselines, key positions, dropped questions and "
                                           "failures to this JSON file.")
@progress_option
@backend_options(backend_help="[default: hf]",
                 model_help="; required: a chat model (for openai, the served model's name)")
@format_option_of("text", "json", help="Output format (no tsv: the report is several tables; --report writes JSON).")
def generate(corpus, output, task_domain, query_prefix, seed, temperature, max_new_tokens, max_attempts, chunk_size,
             retry_failed, drop_fraction, jaccard_margin, cosine_margin, jaccard_threshold, cosine_threshold,
             embedding_model, cosine, report, progress, fmt, backend, model, **backend_settings) -> None:
    """Generate a multiple-choice exam from CORPUS (JSONL/TSV documents, irds:<dataset-id> or
    pyserini:<index-dir>), one question per document, as Guinet et al. (2024) do.

    Each document is asked for a question with four candidates and the correct answer; an answer
    that cannot be read is asked again (--max-attempts), then counted as a failure. Questions that are not
    self-contained ("according to the documentation...") are dropped, then those with a
    distractor closer to the document than the key, then those with a distractor too close to
    the key (n-gram Jaccard and embedding cosine); each distractor filter drops about 5% unless
    its threshold is given. The choices are shuffled so that every letter is the key equally
    often, and the blind baselines (always the same letter, always the longest choice) are shown.

    Every document's answers are kept in OUTPUT.answers.jsonl as soon as they are read, and the
    exam is computed from that file: a killed run started again asks only the documents it had not
    finished; a run started again after a complete one asks nothing, and applies the thresholds and
    the seed given then to the answers kept. A document that failed is asked again only with
    --retry-failed.

    \b
    Example:
      exampp exam generate exam_corpus/documents.jsonl -o out/exam.jsonl \\
          --task-domain "the Larkspur Home Hub manual" \\
          --backend openai --base-url http://localhost:8000/v1 --model Qwen/Qwen2.5-7B-Instruct
    """
    from exampp.api.exam_generate import EMPTY_DOCUMENT, ExamGenerateJob, answers_path
    from exampp.generation.exam import Thresholds
    from exampp.llm.backend import BackendSpec

    if not task_domain.strip():
        raise click.BadParameter("must name what the corpus documents", param_hint="--task-domain")
    if embedding_model and not cosine:
        raise click.UsageError("--embedding-model is for the cosine filters: leave out --no-cosine")
    result = ExamGenerateJob(
        corpus, output, backend=BackendSpec(backend or "hf", model, backend_settings),
        task_domain=task_domain, seed=seed, temperature=temperature, max_new_tokens=max_new_tokens,
        max_attempts=max_attempts, chunk_size=chunk_size, retry_failed=retry_failed, query_prefix=query_prefix,
        embedding=BackendSpec("embedding", embedding_model) if cosine else None, drop_fraction=drop_fraction,
        report=report, progress=progress,
        thresholds=Thresholds(jaccard_margin, cosine_margin, jaccard_threshold, cosine_threshold)).run()
    click.echo(f"{result.documents} documents: {result.asked} asked"
               + (f", {result.reused} answered before (kept in {answers_path(output)})" if result.reused else "")
               + f"; {result.asked_again} needed more than one request; generator: {result.usage}", err=True)
    retryable = int((result.failures["problem"] != EMPTY_DOCUMENT).sum())
    if retryable:
        click.echo(f"{retryable} document{'s' if retryable > 1 else ''} without a readable question, not asked again "
                   "by the same command: --retry-failed asks them again", err=True)
    if fmt == "json":
        click.echo(dumps(result.as_dict(), indent=2, ensure_ascii=False))
    else:
        _print_text(result)
    if not len(result.bank):
        raise click.ClickException(f"no question was kept: nothing written to {output}")
    click.echo(f"wrote {len(result.bank)} questions to {output}"
               + (f" and the report to {report}" if report else ""), err=True)


def _print_text(result) -> None:
    click.echo("Filters (each applied to the questions the ones above kept):")
    filters = result.filters.copy()
    filters["threshold"] = [f"{v:.4f}" if v == v and v is not None else "" for v in filters["threshold"]]
    emit(filters.fillna(""), "text")
    if len(result.failures):
        click.echo("\nDocuments without a readable question:")
        emit(result.failures[["document_id", "problem"]], "text")
    if len(result.dropped):
        click.echo("\nQuestions dropped:")
        dropped = result.dropped[["document_id", "filter", "measure", "evidence", "question"]]
        dropped = dropped.assign(evidence=[f"{v:.4f}" if isinstance(v, float) else v for v in dropped["evidence"]])
        emit(dropped.fillna(""), "text")
    click.echo(f"\nBaselines on the {len(result.bank)} questions kept (blind strategies):")
    emit(result.baselines, "text")
    click.echo("\nKey positions:")
    emit(result.keys, "text")
