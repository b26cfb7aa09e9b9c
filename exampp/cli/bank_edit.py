"""``exampp bank add / remove / edit / disable / enable / restore / log``: change a question bank
with a history (BANK.history.sqlite beside it) and read that history."""
from __future__ import annotations

from typing import TYPE_CHECKING

import click

from exampp.cli.output import FILE, InputPath, emit, format_option, output_option, warn

if TYPE_CHECKING:
    from exampp.collection.questions import Question, QuestionBank

_BANK = InputPath(dir_okay=False)

bank_argument = click.argument("bank", type=_BANK)
reason_option = click.option("--reason", help="Why: kept with the version in the history.")
to_option = click.option(
    "--to", type=click.Path(dir_okay=False),
    help="A pending change: write the changed bank to this file; the bank and its history stay as they are "
         "(`exampp bank impact` shows what the change would do).")


def select_options(command):
    """``--question`` and ``--query``: the questions a command acts on."""
    command = click.option("--query", "query_ids", multiple=True, metavar="QUERY_ID",
                           help="Every question of this query, repeatable.")(command)
    return click.option("--question", "question_ids", multiple=True, metavar="ID",
                        help="A question id (or a unique start of one, e.g. Q1/ff0e), repeatable.")(command)


def _selected(question_ids, query_ids) -> None:
    if not question_ids and not query_ids:
        raise click.UsageError("name the questions: --question ID and/or --query QUERY_ID")


def _report(result) -> None:
    """The versions recorded first (on stderr), then the one line saying what changed."""
    from exampp.api.bank_history import version_line

    for version in result.earlier:
        warn(version_line(version))
    click.echo(result.line())


@click.command()
@bank_argument
@click.option("--query", "query_id", metavar="QUERY_ID", help="The query the new questions are for.")
@click.option("--text", "texts", multiple=True, help="A question's text, repeatable (one question each).")
@click.option("--answer", "answers", multiple=True, help="An answer of the (one) question, repeatable.")
@click.option("--facet", "facet_id", metavar="FACET_ID", help="The questions' facet (subtopic) id.")
@click.option("--facet-text", help="The facet's text [default: the one the bank's questions of that facet have].")
@click.option("--source", default="manual", show_default=True,
              help="Where the questions come from (also given to questions from --from that name none).")
@click.option("--from", "from_file", type=FILE,
              help="Add the questions of this bank (any format `bank import` reads; ids as the file gives).")
@reason_option
@to_option
def add(bank, query_id, texts, answers, facet_id, facet_text, source, from_file, reason, to) -> None:
    """Add questions to BANK (exampp's JSONL), recorded as a version in its history.

    A question is given by --query and --text (id: <query_id>/<md5 of the text>), or many at
    once with --from FILE. Each new question goes after the last question of its query; one
    already in the bank is an error.

    \b
    Example:
      exampp bank add bank.jsonl --query Q1 --text "What is a marine heatwave?" \\
                      --answer "weeks of unusually warm sea" --facet Q1.1 --reason "nugget the bank missed"
      exampp bank add bank.jsonl --from more-questions.jsonl
    """
    from exampp.api.bank_history import add_questions, new_question

    questions: QuestionBank | list[Question]
    if from_file is not None:
        if query_id or texts or answers or facet_id or facet_text:
            raise click.UsageError("--from takes the questions from the file: leave out --query, --text, "
                                   "--answer, --facet and --facet-text")
        from dataclasses import replace

        from exampp.collection.questions import QuestionBank
        from exampp.formats.question_bank import read_question_bank

        read = read_question_bank(from_file, disabled=True)
        questions = QuestionBank((q if q.source else replace(q, source=source) for q in read),
                                 query_texts=read.query_texts)
    else:
        if not query_id or not texts:
            raise click.UsageError("give --query and --text (or --from FILE)")
        if answers and len(texts) > 1:
            raise click.UsageError("--answer belongs to one question: add questions with answers one at a time")
        try:
            questions = [new_question(query_id, text, answers=answers, facet_id=facet_id, facet_text=facet_text,
                                      source=source) for text in texts]
        except ValueError as exc:
            raise click.UsageError(f"bad question: {exc}") from None
    _report(add_questions(bank, questions, reason=reason, to=to))


@click.command()
@bank_argument
@select_options
@reason_option
@to_option
def remove(bank, question_ids, query_ids, reason, to) -> None:
    """Remove questions from BANK (by id, or all of a query), recorded as a version in its
    history (`exampp bank restore` brings them back).

    \b
    Example:
      exampp bank remove bank.jsonl --query Q3 --reason "topic dropped"
      exampp bank remove bank.jsonl --question Q1/ff0e --to pending.jsonl   # see `exampp bank impact` first
    """
    from exampp.api.bank_history import remove_questions

    _selected(question_ids, query_ids)
    _report(remove_questions(bank, question_ids=question_ids, query_ids=query_ids, reason=reason, to=to))


@click.command()
@bank_argument
@click.option("--question", "question_id", required=True, metavar="ID",
              help="The question (its id, or a unique start of it).")
@click.option("--text", help="The new text; it gives the question a new id (md5 of the text), so its grades start "
                             "afresh.")
@click.option("--answer", "answers", multiple=True, help="The new answer key, one --answer per answer.")
@click.option("--no-answers", is_flag=True, help="Remove the answer key.")
@click.option("--facet", "facet_id", metavar="FACET_ID", help="The new facet (subtopic) id.")
@click.option("--facet-text", help="The new facet text [with --facet: the one the bank's questions of that facet "
                                   "have].")
@click.option("--source", help="The new source.")
@reason_option
@to_option
def edit(bank, question_id, text, answers, no_answers, facet_id, facet_text, source, reason, to) -> None:
    """Change a question of BANK, recorded as a version in its history (old and new record).

    \b
    Example:
      exampp bank edit bank.jsonl --question Q1/ec5f --text "Why do hot seas bleach corals?" --reason clearer
      exampp bank edit bank.jsonl --question Q1/ec5f --answer "heat stress" --answer "expelled algae"
    """
    from exampp.api.bank_history import edit_question

    if answers and no_answers:
        raise click.UsageError("--answer and --no-answers contradict each other")
    if text is None and not answers and not no_answers and facet_id is None and facet_text is None and source is None:
        raise click.UsageError("nothing to edit: give --text, --answer, --no-answers, --facet, --facet-text "
                               "or --source")
    key = () if no_answers else (answers or None)
    _report(edit_question(bank, question_id, text=text, answers=key, facet_id=facet_id, facet_text=facet_text,
                          source=source, reason=reason, to=to))


def _switch(disabled: bool) -> click.Command:
    """``disable`` or ``enable``: the same command but for the flag it sets."""

    @select_options
    @reason_option
    @to_option
    def command(bank, question_ids, query_ids, reason, to) -> None:
        from exampp.api.bank_history import set_disabled

        _selected(question_ids, query_ids)
        _report(set_disabled(bank, disabled, question_ids=question_ids, query_ids=query_ids, reason=reason, to=to))

    verb = "disable" if disabled else "enable"
    command.__doc__ = (
        "Disable questions of BANK: they stay in the file and its history but grading and scoring leave them out."
        if disabled else "Enable disabled questions of BANK again.") + f""" Recorded as a version in its history.

    \b
    Example:
      exampp bank {verb} bank.jsonl --question Q1/ff0e --reason ambiguous
      exampp bank {verb} bank.jsonl --query Q5
    """
    return click.command(verb)(bank_argument(command))


disable = _switch(True)
enable = _switch(False)


@click.command()
@click.argument("bank", type=click.Path(dir_okay=False))
@click.option("--version", "version", type=click.IntRange(min=0), required=True, help="The version to go back to.")
@reason_option
@to_option
def restore(bank, version, reason, to) -> None:
    """Make BANK exactly what it was at a version of its history (`exampp bank log` lists them),
    recorded as a new version, so that nothing is lost and the restore can be undone too. A
    deleted or unreadable bank file can be restored.

    \b
    Example:
      exampp bank restore bank.jsonl --version 0 --reason "start over"
      exampp bank restore bank.jsonl --version 2 --to bank-v2.jsonl        # a copy; nothing recorded
    """
    from exampp.api.bank_history import restore as restore_job

    _report(restore_job(bank, version, reason=reason, to=to))


@click.command()
@click.argument("bank", type=click.Path(dir_okay=False))
@click.option("--question", "question_id", metavar="ID",
              help="Only the versions that changed this question (under any id its text gave it).")
@click.option("--changes", is_flag=True, help="One row per changed question, with its old and new text.")
@click.option("--version", "version", type=click.IntRange(min=0), help="The changed questions of this version.")
@format_option
@output_option
def log(bank, question_id, changes, version, fmt, output) -> None:
    """The history of BANK: one row per version (time, user, operation, reason, questions added,
    removed, edited, disabled, enabled); with --changes or --version, the questions changed, with
    their old and new text (--format json: their full records).

    \b
    Example:
      exampp bank log bank.jsonl
      exampp bank log bank.jsonl --version 3 --format tsv
      exampp bank log bank.jsonl --question Q1/ec5f --changes
    """
    from exampp.api.bank_history import bank_changes, bank_log

    if changes or version is not None:
        table = bank_changes(bank, version=version, question_id=question_id, warn=warn)
        if fmt != "json":
            table = table.drop(columns=["old_record", "new_record"])
    else:
        table = bank_log(bank, question_id=question_id, warn=warn)
    emit(table.astype(object).where(table.notna(), None if fmt == "json" else ""), fmt, output)
