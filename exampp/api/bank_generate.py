"""``exampp bank generate`` as a Python call: a question bank from a topics file and a generating LLM.

:func:`generate_bank` asks a backend (a local HF model or any OpenAI-compatible server) for the
questions of every query, or of every subtopic where topics have them (the EXAM++ prompts,
:mod:`exampp.generation.bank_prompts`), through :mod:`exampp.generation.asking`, and writes the bank
(exampp JSONL) atomically at the end.

Failures, resuming, rerunning. Each item (query or subtopic) goes to the journal beside the output
(``OUTPUT.journal.jsonl``, :mod:`exampp.generation.journal`) as soon as it is settled: its
questions, or, when no answer held one after ``max_attempts`` requests, a failure with its
answers. An item whose every question is a near-duplicate of its query's others adds nothing to
the bank: it fails too. A run that is stopped (Ctrl-C, a kill, a spent request budget, a server
gone) loses nothing settled: the same call again asks only the rest. The journal records the
run's settings (model, prompts, temperature, token and attempt limits) and refuses to be
continued with others. Once the bank is written the journal is removed, unless items failed: it
keeps them, so that the same call again asks nothing (a temperature-0 model answers the same
way); ``retry_failed`` asks them again. An output that exists already counts as done for every
item it holds questions of: the items of topics added since are asked, and their questions
merged in.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from exampp.api import Warn, python_warning
from exampp.collection.questions import QuestionBank
from exampp.collection.topics import Topic
from exampp.errors import ExamppError
from exampp.files.io import PathLike, display_name
from exampp.formats.question_bank import read_question_bank, write_question_bank
from exampp.formats.topic_files import read_topics
from exampp.generation.asking import Outcome, ask_all, generator_identity, interrupted_keeps, record, utc_now
from exampp.generation.bank_prompts import choose_prompts
from exampp.generation.journal import Journal, journal_path
from exampp.generation.question_requests import Settings, assemble, done_keys, items_for, reader
from exampp.llm.backend import Backend, BackendSpec, Usage


class NothingGenerated(ExamppError):
    """No item gave a question and there is no earlier bank: nothing to write."""


@dataclass(frozen=True)
class GenerationResult:
    """What a generation run did. Items are queries or subtopics."""

    bank: QuestionBank  # the output bank, as written (disabled questions included)
    output: Path
    generated: int  # items asked in this run that added questions
    resumed: int  # items an interrupted run had answered (from the journal) that added questions
    already: int  # items the output held questions of before the run
    failed: tuple[Outcome, ...]  # items that added no question, in this run or (not asked again) an earlier one
    new_questions: int  # questions added to the output
    written: bool  # False when no question was new (the output is as it was)
    usage: Usage


def generate_bank(
    topics: PathLike | Mapping[str, Topic],
    output: PathLike,
    backend: BackendSpec | Backend,
    *,
    prompt: str = "auto",
    settings: Settings = Settings(),
    chunk_size: int | None = None,
    retry_failed: bool = False,
    progress: bool = True,
    warn: Warn = python_warning,
    now: Callable[[], str] = utc_now,
) -> GenerationResult:
    """Generate the questions of the topics into a bank (see the module docstring).

    :param topics: A topics file, ``irds:<id>``, or topics already read.
    :param output: The bank to write (exampp JSONL); its journal goes beside it.
    :param backend: A spec, opened here when something is to be asked, and closed; or a backend,
        the caller's.
    :param prompt: ``auto`` (facet prompt per subtopic, query prompt for a topic without), ``facet``,
        ``query`` or ``nuggets`` (see :func:`~exampp.generation.bank_prompts.choose_prompts`).
    :param settings: How items are asked: temperature, token and attempt limits, questions per item.
    :param chunk_size: Items per batch sent to the backend (default: the openai backend's
        concurrency, else 8).
    :param retry_failed: Ask again the items that failed in an earlier run.
    :param progress: Show a progress bar.
    :param warn: Takes each warning line, the failed items at the end (default: a Python warning).
    :param now: Gives the provenance date (UTC ISO).
    :raises NothingGenerated: No item gave a question and there is no earlier bank.
    """

    with interrupted_keeps(journal_path(output)):  # of the name as given (output becomes a Path below)
        choice = choose_prompts(prompt)
        source = "<topics>" if isinstance(topics, Mapping) else display_name(topics)
        topics = topics if isinstance(topics, Mapping) else read_topics(topics)
        items = items_for(topics, choice, source)  # input errors first, before a model loads
        if not items:
            raise ValueError("no topics to generate questions for")
        identity = generator_identity(backend, "bank generate")
        output = Path(output)
        existing = read_question_bank(output, "exampp", disabled=True) if output.exists() else None
        held = done_keys(existing) if existing is not None else set()
        todo = [item for item in items if item.key not in held]
        if not todo:  # all there: nothing to ask (and a journal left by a kill after the bank was written is spent)
            assert existing is not None  # items there are, so a bank held them all
            journal_path(output).unlink(missing_ok=True)
            return GenerationResult(existing, output, 0, 0, len(items), (), 0, False, Usage())
        journal = Journal(output, {**identity, "prompts": choice.prompt_ids(), **settings.settings()})
        run = ask_all(backend, journal, [item.task for item in todo], reader(choice), choice.corrective, settings,
                      retry_failed=retry_failed, chunk_size=chunk_size, progress=progress, now=now)
        settled = dict(run.outcomes)
        assembled = assemble([(item, settled[item.key]) for item in todo if settled[item.key].ok],  # topics' order
                             settings.temperature, existing, settings.max_questions)
        if assembled.empty:  # answered, but nothing new: failed too, so that a rerun does not ask it again
            with journal:
                for item in assembled.empty:
                    settled[item.key] = replace(settled[item.key], value=None, problem="every question was a "
                                                f"near-duplicate of another of query {item.query_id}")
                    record(journal, item.task, settled[item.key])
        failed = tuple(outcome for outcome in settled.values() if not outcome.ok)
        for outcome in settled.values():
            if outcome.ok and outcome.note:  # questions the reader left out of a usable answer
                warn(f"{outcome.key}: {outcome.note}")
        for outcome in failed:
            warn(_failure(outcome))
        if not len(assembled.bank):
            raise NothingGenerated(f"no item gave a question ({len(failed)} failed): nothing written to {output}")
        if assembled.new:
            write_question_bank(assembled.bank, output)
        if not failed:
            journal.remove()
        generated = sum(o.ok and o.asked for o in settled.values())
        return GenerationResult(assembled.bank, output, generated, sum(o.ok for o in settled.values()) - generated,
                                len(items) - len(todo), failed, assembled.new, assembled.new > 0, run.usage)


def _failure(outcome: Outcome) -> str:
    last = outcome.answers[-1] if outcome.answers else ""
    shown = " ".join(last.split())
    shown = repr(shown if len(shown) <= 80 else shown[:80] + "...")
    answers = f"{outcome.attempts} answer{'s' if outcome.attempts > 1 else ''}"
    when = "" if outcome.asked else " in an earlier run"
    return f"{outcome.key}: {outcome.problem} ({answers}{when}, the last: {shown}); --retry-failed asks it again"
