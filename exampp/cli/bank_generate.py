"""``exampp bank generate``: a question bank from a topics file, asked of a generating LLM."""
from __future__ import annotations

import click

from exampp.cli.backend_options import backend_options, generation_options
from exampp.cli.output import progress_option


@click.command()
@click.argument("topics")
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False),
              help="The question bank to write (exampp JSONL; .gz: gzipped). One that exists already keeps its "
                   "questions: only what it lacks is asked, and added.")
@click.option("--prompt", type=click.Choice(["auto", "facet", "query", "nuggets"]), default="auto", show_default=True,
              help="auto: the EXAM++ facet prompt for each subtopic of a topic that has them, else the query "
                   "prompt (about ten questions); facet / query: that prompt only; nuggets: short facts a relevant "
                   "answer must contain, each marked vital or okay.")
@backend_options(backend_help="[default: hf]",
                 model_help="; required: a chat model that can write JSON (e.g. an instruction-tuned Llama or Qwen)")
@generation_options(items="queries or subtopics", max_new_tokens=1024, max_attempts=3,
                    unusable="an answer without questions", kept_in="OUTPUT.journal.jsonl")
@click.option("--max-questions", type=click.IntRange(min=1),
              help="Keep at most this many questions per query or subtopic [default: all].")
@progress_option
def generate(topics, output, prompt, temperature, max_new_tokens, max_attempts, max_questions, chunk_size,
             retry_failed, progress, backend, model, **backend_settings) -> None:
    """Ask a generating LLM for the exam questions of every query of TOPICS (a topics file or
    irds:<dataset-id>), or of every subtopic where topics have them, and write them to the bank
    OUTPUT with ids <query_id>/<md5 of the text> and each question's provenance (model, prompt,
    temperature, date).

    Answers are read in whatever shape they come (fenced or bare JSON, a list, numbered lines,
    prose around them); an answer without questions is asked again with a corrective message.
    Near-duplicates within a query are dropped. Each query or subtopic goes to
    OUTPUT.journal.jsonl as soon as it is settled: a stopped run, started again with the same
    command, asks only what is left. One that gave no question is reported, and kept in the
    journal so that the same command again asks nothing: --retry-failed asks it again.

    \b
    Example:
      exampp bank generate topics/topics.jsonl --backend openai --base-url http://localhost:8000/v1 \\
                           --model meta-llama/Llama-3.1-8B-Instruct -o question_banks/generated.jsonl
      exampp bank generate topics.tsv --model ~/models/qwen2.5-7b-instruct --device cuda --prompt nuggets \\
                           -o nuggets.jsonl
    """
    from exampp.api.bank_generate import generate_bank
    from exampp.generation.journal import journal_path
    from exampp.generation.question_requests import Settings
    from exampp.llm.backend import BackendSpec

    spec = BackendSpec(backend or "hf", model, backend_settings)
    settings = Settings(max_new_tokens=max_new_tokens, temperature=temperature, max_attempts=max_attempts,
                        max_questions=max_questions)
    result = generate_bank(topics, output, spec, prompt=prompt, settings=settings, chunk_size=chunk_size,
                           retry_failed=retry_failed, progress=progress, warn=lambda line: click.echo(line, err=True))
    items = result.generated + result.resumed + result.already + len(result.failed)
    click.echo(f"{items} queries or subtopics: {result.generated} generated, {result.resumed} from an interrupted "
               f"run, {result.already} already in the bank, {len(result.failed)} failed"
               + (f" (kept in {journal_path(output)})" if result.failed else ""), err=True)
    if result.written:
        click.echo(f"wrote {len(result.bank)} questions ({result.new_questions} new) for "
                   f"{len(result.bank.query_ids())} queries to {result.output}", err=True)
    else:
        click.echo(f"nothing new: {result.output} is as it was", err=True)
    if result.usage.requests:
        click.echo(f"generator: {result.usage}", err=True)
