"""`exampp bank import` and `exampp bank export`: question banks from and to other formats."""
from __future__ import annotations

import click

from exampp.cli.output import FILE, one_stdin, warn
from exampp.formats.question_bank import READ_FORMATS, WRITE_FORMATS

_OUTPUT = click.Path(dir_okay=False, allow_dash=True)


def _where(output: str) -> str:
    return "standard output" if output == "-" else output


@click.command("import")
@click.argument("sources", nargs=-1, required=True, type=FILE)
@click.option("--format", "fmt", type=click.Choice(READ_FORMATS), default="auto", show_default=True,
              help="Format of the SOURCES (auto: recognised from each file's first line).")
@click.option("--topics", type=FILE,
              help="Topics file: each question's query, and its facet where the topics list the query's "
                   "subtopics, must be in it; queries and facets without a text get the topics'.")
@click.option("--source", help="Source recorded for the questions that name none (e.g. manual, tqa).")
@click.option("--query-prefix", default="",
              help="Put before every query id (and before question ids <query_id>/...): TQA's lesson L_0002 "
                   "is TREC CAR Y3's query tqa2:L_0002, so --query-prefix tqa2:.")
@click.option("--output", "-o", required=True, type=_OUTPUT, help="Bank file to write (- for stdout; .gz gzips).")
@click.option("--output-format", type=click.Choice(WRITE_FORMATS), default="exampp", show_default=True,
              help="Format of the bank written.")
def import_bank(sources, fmt, topics, source, query_prefix, output, output_format) -> None:
    """Import the question banks SOURCES into one bank: exampp JSONL, TSV
    (query_id<TAB>question[<TAB>answer...]), multiple choice with answer keys (JSONL
    {"query_id", "question", "choices", "correct_key"}), TQA's JSON, the reference tool's
    banks (reference, reference-nuggets, car), nugget banks (nuggetizer) or TREC AutoJudge's
    NuggetBanks JSONL (autojudge: questions and claims, answers, importance).

    A question with choices needs an answer key among 2 or more of them; with --topics, its
    query must be a topic. Each problem is an error naming the file and line. A question id
    in two files is kept once when both say the same, an error otherwise.

    \b
    Example:
      exampp bank export question_banks/questions.jsonl --format tsv -o manual.tsv
      exampp bank import manual.tsv --topics topics/topics.jsonl --source manual -o bank.jsonl
      exampp bank import tqa_v1_val.json --query-prefix tqa2: --source tqa -o tqa.jsonl.gz
      exampp bank import nuggets.jsonl.gz --format autojudge -o bank.jsonl
    """
    from exampp.api.bank_io import import_banks

    one_stdin(topics, *sources)
    result = import_banks([(path, fmt) for path in sources], topics, source=source, query_prefix=query_prefix,
                          output=output, output_format=output_format, warn=warn)
    for file in result.files:
        dropped = f", {file.dropped} dropped" if file.dropped else ""
        click.echo(f"read {file.path} ({file.format}): {file.questions} questions{dropped}", err=True)
    bank = result.bank
    choices = sum(bool(q.choices) for q in bank)
    answers = sum(bool(q.answers) for q in bank)
    click.echo(f"imported {len(bank)} questions for {len(bank.query_ids())} queries ({choices} with choices, "
               f"{answers} with answers; {result.dropped} dropped) into {_where(output)} ({output_format})",
               err=True)


@click.command("export")
@click.argument("bank", type=FILE)
@click.option("--format", "fmt", type=click.Choice(WRITE_FORMATS), required=True, help="Format to write.")
@click.option("--output", "-o", type=_OUTPUT, default="-", show_default=True,
              help="File to write (- for stdout; .gz gzips).")
def export_bank(bank, fmt, output) -> None:
    """Write the question bank BANK (any format `bank import` reads; disabled questions
    included) in another format.

    What the format has no place for (facets and sources in TSV, say) is left out with a
    warning; a question it cannot hold (choices in TSV, an open question in TQA) is an error,
    and nothing is written.

    \b
    Example:
      exampp bank export question_banks/answer_key.jsonl --format choices -o answer_key.choices.jsonl
      exampp bank export question_banks/questions.jsonl --format tsv | less
      exampp bank export question_banks/questions.jsonl --format autojudge -o nuggets.jsonl
    """
    from exampp.api.bank_io import export_bank as job

    written = job(bank, fmt, output, warn=warn)
    click.echo(f"wrote {written.questions} questions for {written.queries} queries to {_where(output)} ({fmt})",
               err=True)
