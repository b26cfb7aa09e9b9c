"""Asking a generating LLM for the questions (or nuggets) of each query or subtopic: the engine of
``exampp bank generate``.

An :class:`Item` is one request's worth: a query, or a query with one of its subtopics, with the
prompt it is asked with (:func:`items_for`). :func:`ask` sends a batch of items to a backend at
once (the ``openai`` backend runs them concurrently; ``hf`` batches them on the model), reads each
answer (:func:`~exampp.generation.parsing.parse_nuggets`: fenced or bare JSON, a JSON list,
numbered lines, prose around them), and asks again those whose answer held nothing usable, with
the conversation so far (prompt, answer) and a corrective turn, up to ``max_attempts`` requests
per item. Each item's :class:`Outcome` holds its questions without near-duplicates, at most
``max_questions`` of them, or none when every attempt failed.

:func:`assemble` turns outcomes into bank questions: ids ``<query_id>/<md5(text)>``, the facet,
``source`` ``generated:<model>`` and the provenance in ``info`` (model, prompt id@version,
temperature, date, attempts; a nugget's importance). Near-duplicates of questions the query has
already (an earlier subtopic's, or the bank's own) are dropped there, in item order, so the bank
does not depend on the order in which items were answered or on a run being interrupted.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from exampp.collection.question_bank import Question, QuestionBank, question_id_for
from exampp.collection.topics import Topic
from exampp.errors import InputError
from exampp.generation.parsing import Entry, parse_nuggets, remove_near_duplicates
from exampp.generation.prompts import PromptChoice
from exampp.llm.backend import Backend
from exampp.llm.prompt import Conversation, Prompt


@dataclass(frozen=True)
class Item:
    """One query, or a query with one subtopic, and the prompt it is asked with."""

    query_id: str
    query_text: str
    prompt: Prompt
    facet_id: str | None = None
    facet_text: str | None = None

    @property
    def key(self) -> str:
        return item_key(self.query_id, self.facet_id)

    def text(self) -> str:
        if self.facet_id is None:
            return self.prompt.render(query_title=self.query_text)
        return self.prompt.render(query_title=self.query_text, query_subtopic=self.facet_text or "")


def item_key(query_id: str, facet_id: str | None) -> str:
    """An item's name in the journal and in messages: ``Q1``, or ``Q1 Q1.2`` for a subtopic (ids hold no spaces)."""
    return query_id if facet_id is None else f"{query_id} {facet_id}"


def items_for(topics: Mapping[str, Topic], choice: PromptChoice, source: str = "<topics>") -> list[Item]:
    """The items of ``topics`` in order: a topic's subtopics one by one where ``choice`` has a facet
    prompt, else the query as a whole. InputError (naming ``source``) when a topic without
    subtopics meets a choice without a query prompt (``--prompt facet``)."""
    items: list[Item] = []
    for topic in topics.values():
        if topic.subtopics and choice.facet is not None:
            items.extend(Item(topic.query_id, topic.text, choice.facet, s.facet_id, s.text) for s in topic.subtopics)
        elif choice.query is not None:
            items.append(Item(topic.query_id, topic.text, choice.query))
        else:
            raise InputError(source, None, f"query {topic.query_id} has no subtopics, which --prompt facet needs "
                                           "(--prompt auto asks such a query as a whole)")
    return items


@dataclass(frozen=True)
class Settings:
    """How items are asked: what goes into the journal's settings (with the model and prompts)."""

    max_new_tokens: int = 1024
    temperature: float = 0.0
    max_attempts: int = 3
    max_questions: int | None = None  # per item, after near-duplicates are gone

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.max_questions is not None and self.max_questions < 1:
            raise ValueError("max_questions must be at least 1")


@dataclass(frozen=True)
class Outcome:
    """What asking one item gave: its questions (text, importance), or none after ``attempts`` failed
    requests; ``date``: when the answer came (UTC); ``answers``: a failed item's answers, for the report."""

    item: Item
    entries: tuple[Entry, ...]
    attempts: int
    date: str
    answers: tuple[str, ...] = field(default=(), repr=False)

    @property
    def ok(self) -> bool:
        return bool(self.entries)

    def record(self) -> dict[str, Any]:
        """The journal's value for a finished item."""
        return {"questions": [{"text": t, **({"importance": i} if i else {})} for t, i in self.entries],
                "attempts": self.attempts, "date": self.date}

    @classmethod
    def from_record(cls, item: Item, value: Any) -> "Outcome":
        """An item's outcome from its journal value (a value of another shape: ValueError)."""
        try:
            entries = tuple((str(q["text"]), q.get("importance")) for q in value["questions"])
            return cls(item, entries, int(value["attempts"]), str(value["date"]))
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"not a generated item: {exc}") from None


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def usable(answer: str, settings: Settings, nuggets: bool) -> tuple[Entry, ...]:
    """The questions of one answer: parsed, near-duplicates dropped, at most ``max_questions``;
    importance kept for nuggets only."""
    entries = parse_nuggets(answer)
    if not nuggets:
        entries = [(text, None) for text, _ in entries]
    first = {}
    for text, importance in entries:
        first.setdefault(text, importance)
    kept = remove_near_duplicates([text for text, _ in entries])[:settings.max_questions]
    return tuple((text, first[text]) for text in kept)


def ask(backend: Backend, items: Sequence[Item], choice: PromptChoice, settings: Settings, *,
        now: Callable[[], str] = utc_now) -> Iterator[Outcome]:
    """Ask ``items`` as one batch per attempt; yield each item's outcome as soon as it is settled
    (usable answers after every round, failures after the last). A retry sends the conversation so
    far: the prompt, each unusable answer, each followed by the corrective turn."""
    corrective = choice.corrective()
    first = [item.text() for item in items]
    turns: list[tuple[tuple[str, str], ...]] = [() for _ in items]  # the turns after the first prompt
    pending = list(range(len(items)))
    for attempt in range(1, settings.max_attempts + 1):
        prompts: list[str | Conversation] = [(("user", first[i]), *turns[i]) if turns[i] else first[i]
                                             for i in pending]
        replies = backend.generate(prompts, max_new_tokens=settings.max_new_tokens, temperature=settings.temperature)
        still = []
        for i, reply in zip(pending, replies, strict=True):
            entries = usable(reply, settings, choice.nuggets)
            if entries:
                yield Outcome(items[i], entries, attempt, now())
            else:
                turns[i] += (("assistant", reply), ("user", corrective))
                still.append(i)
        pending = still
        if not pending:
            return
    for i in pending:
        yield Outcome(items[i], (), settings.max_attempts, now(), tuple(content for role, content in turns[i]
                                                                        if role == "assistant"))


def provenance(model: str, prompt: Prompt, temperature: float, outcome: Outcome) -> dict[str, Any]:
    return {"model": model, "prompt": prompt.prompt_id, "temperature": temperature, "date": outcome.date,
            "attempts": outcome.attempts}


@dataclass(frozen=True)
class Assembled:
    bank: QuestionBank
    new: int  # questions added
    empty: tuple[Item, ...]  # items whose every question was a near-duplicate of their query's others


def assemble(outcomes: Iterable[Outcome], model: str, temperature: float,
             existing: QuestionBank | None = None) -> Assembled:
    """The bank: ``existing``'s questions (kept as they are, disabled ones too) with each query's new
    questions after its own, queries new to it after them, in the order of ``outcomes``. A new
    question that is a near-duplicate of one its query has already (in ``existing``, or from an
    earlier item) is left out."""
    by_query: dict[str, list[Question]] = {}
    query_texts = dict(existing.query_texts) if existing is not None else {}
    for question in existing or ():
        by_query.setdefault(question.query_id, []).append(question)
    new, empty = 0, []
    for outcome in outcomes:
        item = outcome.item
        kept = by_query.setdefault(item.query_id, [])
        query_texts.setdefault(item.query_id, item.query_text)
        info = provenance(model, item.prompt, temperature, outcome)
        importance = dict(outcome.entries)
        texts = remove_near_duplicates([text for text, _ in outcome.entries], kept_before=(q.text for q in kept))
        if not texts:
            empty.append(item)
        for text in texts:
            extra = {"importance": importance[text]} if importance[text] else {}
            kept.append(Question(item.query_id, question_id_for(item.query_id, text), text, facet_id=item.facet_id,
                                 facet_text=item.facet_text, source=f"generated:{model}", info={**info, **extra}))
            new += 1
    bank = QuestionBank((q for questions in by_query.values() for q in questions), query_texts=query_texts)
    return Assembled(bank, new, tuple(empty))


def done_keys(bank: QuestionBank) -> set[str]:
    """The items a bank holds questions of (disabled ones count): asked already."""
    return {item_key(q.query_id, q.facet_id) for q in bank}
