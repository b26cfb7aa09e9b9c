"""``exampp bank generate`` as a Python call: a question bank from a topics file and a generating LLM.

:func:`generate_bank` asks a backend (a local HF model or any OpenAI-compatible server) for the
questions of every query, or of every subtopic where topics have them (the EXAM++ prompts,
:mod:`exampp.generation.prompts`), and writes the bank (exampp JSONL) atomically at the end.

Resuming. Each answered item (query or subtopic) goes to the journal beside the output
(:mod:`exampp.generation.journal`) as soon as its answer is read, so a run that is stopped (Ctrl-C,
a kill, a spent request budget, a server gone) loses nothing answered: the same call again asks
only the rest. The journal records the run's settings (model, prompts, temperature, token and
attempt limits) and refuses to be continued with others. Once the bank is written the journal is
removed. An output that exists already counts as done for every item it holds questions of:
the items of topics added since (or that failed before) are asked, and their questions merged in.

An item whose answers held no question ``max_attempts`` times is a failure: reported (``warn``)
and counted, never recorded as done, so the next run asks it again. (So is an item whose every
question turned out a near-duplicate of its query's other questions: it adds nothing to the bank.)
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from exampp.api import Warn, python_warning
from exampp.collection.io import PathLike, display_name
from exampp.collection.question_bank import QuestionBank, read_question_bank, write_question_bank
from exampp.collection.topics import Topic, read_topics
from exampp.errors import ExamppError
from exampp.generation.journal import Journal, journal_path
from exampp.generation.prompts import PromptChoice, choose_prompts
from exampp.generation.questions import Item, Outcome, Settings, ask, assemble, done_keys, items_for, utc_now
from exampp.llm.backend import Backend, BackendError, BackendSpec, Capability, Usage, backend_class, require
from exampp.progress import progress_bar

CHUNK = 8  # items asked at once (and journaled together) unless the backend's concurrency says more


class NothingGenerated(ExamppError):
    """No item gave a question and there is no earlier bank: nothing to write."""


@dataclass(frozen=True)
class GenerationResult:
    """What a generation run did. Items are queries or subtopics."""

    bank: QuestionBank  # the output bank, as written (disabled questions included)
    output: Path
    generated: int  # items answered in this run
    resumed: int  # items an interrupted run had answered (from the journal)
    already: int  # items the output held questions of before the run
    failed: tuple[Outcome, ...]  # items that gave no question (asked again on the next run)
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
    progress: bool = True,
    warn: Warn = python_warning,
    now: Callable[[], str] = utc_now,
) -> GenerationResult:
    """Generate the questions of ``topics`` (a topics file, ``irds:<id>``, or topics) into the bank
    ``output`` with ``backend`` (a spec: opened here once the inputs are read, and closed; a backend:
    the caller's).

    ``prompt``: ``auto`` (facet prompt per subtopic, query prompt for a topic without), ``facet``,
    ``query`` or ``nuggets`` (see :func:`~exampp.generation.prompts.choose_prompts`). ``chunk_size``:
    items per batch sent to the backend [default: the openai backend's concurrency, else 8].
    Failed items go to ``warn`` as they happen. ``now`` gives the provenance date (UTC ISO).
    """
    choice = choose_prompts(prompt)
    source = "<topics>" if isinstance(topics, Mapping) else display_name(topics)
    topics = topics if isinstance(topics, Mapping) else read_topics(topics)
    items = items_for(topics, choice, source)  # input errors first, before a model loads
    if not items:
        raise ValueError("no topics to generate questions for")
    output = Path(output)
    existing = read_question_bank(output, "exampp", disabled=True) if output.exists() else None
    held = done_keys(existing) if existing is not None else set()
    todo = [item for item in items if item.key not in held]
    if isinstance(backend, BackendSpec):
        if not todo:  # all there: no model to load (and a journal left by a kill after the bank was written is spent)
            journal_path(output).unlink(missing_ok=True)
            return GenerationResult(existing, output, 0, 0, len(items), (), 0, False, Usage())
        if backend.model is None:
            raise BackendError(f"bank generate needs --model: a generating (chat) model; with --backend "
                               f"{backend.name}, {_MODEL_HELP.get(backend.name, 'the model to open')}")
        require(frozenset({Capability.GENERATE}), backend_class(backend.name).capabilities, "bank generate",
                backend.name)
        with backend.open() as opened:
            return generate_bank(topics, output, opened, prompt=prompt, settings=settings,
                                 chunk_size=chunk_size or backend.option("concurrency"), progress=progress, warn=warn,
                                 now=now)
    backend.require(frozenset({Capability.GENERATE}), "bank generate")
    journal_settings = {"model": backend.name, "prompts": choice.prompt_ids(), "temperature": settings.temperature,
                        "max_new_tokens": settings.max_new_tokens, "max_attempts": settings.max_attempts,
                        "max_questions": settings.max_questions}
    with Journal(output, journal_settings) as journal:
        answered = _resumed(journal, todo)
        resumed = len(answered)
        failed = _ask(backend, [item for item in todo if item.key not in answered], choice, settings, journal,
                      answered, chunk_size or CHUNK, progress, warn, now)
        assembled = assemble([answered[item.key] for item in items if item.key in answered],  # topics' order
                             backend.name, settings.temperature, existing)
        for item in assembled.empty:
            warn(f"{item.key}: every question was a near-duplicate of another of query {item.query_id}; nothing "
                 "added (it is asked again on the next run)")
        if not len(assembled.bank):
            journal.remove()
            raise NothingGenerated(f"no item gave a question ({len(failed)} failed): nothing written to {output}")
        if assembled.new:
            write_question_bank(assembled.bank, output)
        journal.remove()
    return GenerationResult(assembled.bank, output, len(answered) - resumed, resumed, len(items) - len(todo),
                            tuple(failed), assembled.new, assembled.new > 0, backend.usage)


_MODEL_HELP = {"hf": "a local model folder or HF hub id", "openai": "the served model's name"}


def _resumed(journal: Journal, todo: list[Item]) -> dict[str, Outcome]:
    """The items of ``todo`` an interrupted run answered."""
    answered = {}
    for item in todo:
        if item.key in journal.done:
            try:
                answered[item.key] = Outcome.from_record(item, journal.done[item.key])
            except ValueError as exc:
                raise ExamppError(f"{journal.path}: item {item.key}: {exc}") from None
    return answered


def _ask(backend: Backend, asking: list[Item], choice: PromptChoice, settings: Settings, journal: Journal,
         answered: dict[str, Outcome], chunk_size: int, progress: bool, warn: Warn, now: Callable[[], str]
         ) -> list[Outcome]:
    """Ask ``asking`` chunk by chunk, journaling (and adding to ``answered``) each answered item at
    once; returns the failed ones."""
    failed = []
    left = Counter(item.query_id for item in asking)  # the progress bar counts queries
    bar = progress_bar(len(left), progress, unit="query", desc="generating")
    try:
        for begin in range(0, len(asking), chunk_size):
            for outcome in ask(backend, asking[begin:begin + chunk_size], choice, settings, now=now):
                if outcome.ok:
                    journal.record(outcome.item.key, outcome.record())
                    answered[outcome.item.key] = outcome
                else:
                    failed.append(outcome)
                    warn(_failure(outcome))
                left[outcome.item.query_id] -= 1
                if bar is not None and not left[outcome.item.query_id]:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return failed


def _failure(outcome: Outcome) -> str:
    last = outcome.answers[-1] if outcome.answers else ""
    shown = " ".join(last.split())
    shown = repr(shown if len(shown) <= 80 else shown[:80] + "...")
    return (f"{outcome.item.key}: no question in {outcome.attempts} answer{'s' if outcome.attempts > 1 else ''} "
            f"(the last: {shown}); it is asked again on the next run")
