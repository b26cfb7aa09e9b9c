"""The questions (or nuggets) of each query or subtopic, as ``exampp bank generate`` asks for them
(with :mod:`exampp.generation.asking`) and puts them in a bank.

An :class:`Item` is one request's worth: a query, or a query with one of its subtopics, with the
prompt it is asked with (:func:`items_for`). :func:`reader` reads an answer
(:func:`~exampp.generation.answer_parsing.parse_nuggets`: fenced or bare JSON, a JSON list, numbered
lines, prose around them) into its questions without near-duplicates; an answer without any is
unusable, and asked again with the prompts' corrective turn. A question longer than
:data:`MAX_CHARS` is no question (a paragraph, a model running on) and is left out; an answer
gives at most :data:`MAX_ITEMS` questions. What is left out is noted, for the user.

:func:`assemble` turns the items' usable outcomes into bank questions, at most ``max_questions``
of an item's: ids ``<query_id>/<md5(text)>``, the facet, ``source`` ``generated:<model>`` and the
provenance in ``info`` (model, prompt id@version, temperature, date, attempts; a nugget's
importance). Near-duplicates of questions the query has already (an earlier subtopic's, or the
bank's own) are dropped there, in item order, so the bank does not depend on the order in which
items were answered or on a run being interrupted.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from exampp.collection.questions import Question, QuestionBank, question_id_for
from exampp.collection.topics import Topic
from exampp.errors import InputError
from exampp.generation.answer_parsing import parse_nuggets, remove_near_duplicates
from exampp.generation.asking import Asking, Noted, Outcome, Task, Unusable
from exampp.generation.bank_prompts import PromptChoice
from exampp.llm.prompt import Prompt

# The prompts ask for about ten short questions: far more, or far longer ones, are a model gone astray
# (and would make the near-duplicate search and the bank needlessly big).
MAX_ITEMS = 1000  # questions (or nuggets) taken from one answer, the first ones
MAX_CHARS = 1000  # a question's length in characters, at most


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

    @property
    def task(self) -> Task:
        """What is asked: the prompt, rendered (an answer journaled for another prompt is stale)."""
        if self.facet_id is None:
            return Task(self.key, self.prompt.render(query_title=self.query_text))
        return Task(self.key, self.prompt.render(query_title=self.query_text, query_subtopic=self.facet_text or ""))


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
class Settings(Asking):
    """How items are asked (what goes into the journal's settings, with the model and prompts) and
    ``max_questions``: at most this many questions per item, after near-duplicates are gone (applied
    when the bank is assembled: it changes no answer)."""

    max_questions: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_questions is not None and self.max_questions < 1:
            raise ValueError("max_questions must be at least 1")


def reader(choice: PromptChoice) -> Callable[[str], list[dict[str, str]] | Noted[list[dict[str, str]]]]:
    """What :func:`~exampp.generation.asking.ask` reads an answer with: its questions (or nuggets),
    at most :data:`MAX_CHARS` long and :data:`MAX_ITEMS` of them, near-duplicates within it
    dropped, as JSON (``{"text": ..., "importance": ...}``, importance for nuggets only, where
    given), :class:`Noted` when some were left out; :class:`Unusable` when it holds none."""

    def read(answer: str) -> list[dict[str, str]] | Noted[list[dict[str, str]]]:
        found = parse_nuggets(answer)
        entries = [(text, importance if choice.nuggets else None) for text, importance in found
                   if len(text) <= MAX_CHARS]
        notes = []
        if len(entries) < len(found):
            notes.append(f"{len(found) - len(entries):,} of its {choice.items} left out: longer than {MAX_CHARS:,} "
                         "characters")
        if len(entries) > MAX_ITEMS:
            notes.append(f"the answer held {len(entries):,} {choice.items}: the first {MAX_ITEMS:,} taken")
            entries = entries[:MAX_ITEMS]
        first: dict[str, str | None] = {}
        for text, importance in entries:
            first.setdefault(text, importance)
        kept = remove_near_duplicates([text for text, _ in entries])
        if not kept:
            raise Unusable(f"no {choice.items}" + (f" ({notes[0]})" if notes else ""))
        value = [{"text": text, **({"importance": importance} if (importance := first[text]) else {})} for text in kept]
        return Noted(value, "; ".join(notes)) if notes else value

    return read


@dataclass(frozen=True)
class Assembled:
    bank: QuestionBank
    new: int  # questions added
    empty: tuple[Item, ...]  # items whose every question was a near-duplicate of their query's others


def assemble(answered: Iterable[tuple[Item, Outcome]], temperature: float, existing: QuestionBank | None = None,
             max_questions: int | None = None) -> Assembled:
    """The bank: ``existing``'s questions (kept as they are, disabled ones too) with each query's new
    questions after its own, queries new to it after them, in the order of ``answered`` (items
    with their usable outcomes). An item gives its first ``max_questions`` questions [default:
    all]; one that is a near-duplicate of a question its query has already (in ``existing``, or
    from an earlier item) is left out."""
    by_query: dict[str, list[Question]] = {}
    query_texts = dict(existing.query_texts) if existing is not None else {}
    for question in existing or ():
        by_query.setdefault(question.query_id, []).append(question)
    new, empty = 0, []
    for item, outcome in answered:
        kept = by_query.setdefault(item.query_id, [])
        query_texts.setdefault(item.query_id, item.query_text)
        info = outcome.provenance(item.prompt, temperature)
        entries = outcome.value[:max_questions]
        importance = {entry["text"]: entry.get("importance") for entry in entries}
        texts = remove_near_duplicates([entry["text"] for entry in entries], kept_before=(q.text for q in kept))
        if not texts:
            empty.append(item)
        for text in texts:
            extra = {"importance": importance[text]} if importance[text] else {}
            kept.append(Question(item.query_id, question_id_for(item.query_id, text), text, facet_id=item.facet_id,
                                 facet_text=item.facet_text, source=f"generated:{outcome.model}",
                                 info={**info, **extra}))
            new += 1
    bank = QuestionBank((q for questions in by_query.values() for q in questions), query_texts=query_texts)
    return Assembled(bank, new, tuple(empty))


def done_keys(bank: QuestionBank) -> set[str]:
    """The items a bank holds questions of (disabled ones count): asked already."""
    return {item_key(q.query_id, q.facet_id) for q in bank}
