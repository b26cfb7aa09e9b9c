"""The prompts that generate a question bank (phase 1 of EXAM++), each a versioned :class:`Prompt`.

- :data:`QUESTIONS_FACET`: a query with a subtopic (TREC CAR style), verbatim from the EXAM++ paper
  (DESIGN.md §2);
- :data:`QUESTIONS_QUERY`: a query alone (TREC DL style): the same idea, about ten questions;
- :data:`NUGGETS_FACET` / :data:`NUGGETS_QUERY`: nuggets instead of questions, as AutoNuggetizer
  makes them: short atomic facts a relevant answer must contain, each marked ``vital`` (an answer
  without it fails the query) or ``okay`` (good to have);
- :data:`CORRECTIVE`: the user turn sent after an answer that held nothing readable, with the
  conversation so far.

:func:`choose_prompts` picks them for ``--prompt`` (``auto``: the facet prompt for each subtopic of a
topic that has subtopics, else the query prompt). The prompt id (name@version) of every generated
question is in its provenance: change a prompt's wording and give it a new version.
"""
from __future__ import annotations

from dataclasses import dataclass

from exampp.llm.prompt import Prompt

MODES = ("auto", "facet", "query", "nuggets")

# The answer formats the prompts ask for, as str.format templates (braces doubled).
_QUESTIONS_FORMAT = (
    "Give the question set in the following JSON format:\n"
    "```json\n"
    '{{"questions":[question_text_1, question_text_2,...]}}\n'
    "```"
)
_NUGGETS_FORMAT = (
    "Give the nugget set in the following JSON format:\n"
    "```json\n"
    '{{"nuggets":[{{"text": nugget_text_1, "importance": "vital"}}, '
    '{{"text": nugget_text_2, "importance": "okay"}},...]}}\n'
    "```"
)

QUESTIONS_FACET = Prompt("genq-facet", "v1", (
    "Explore the connection between '{query_title}' with a specific focus on the subtopic '{query_subtopic}'. "
    "Generate insightful questions that delve into advanced aspects of '{query_subtopic}', showcasing a deep "
    "understanding of the subject matter. Avoid basic or introductory-level inquiries. " + _QUESTIONS_FORMAT
))

QUESTIONS_QUERY = Prompt("genq-query", "v1", (
    "Explore the query '{query_title}'. Generate about ten insightful questions that a passage relevant to "
    "'{query_title}' should answer, showcasing a deep understanding of the subject matter. Avoid basic or "
    "introductory-level inquiries. Keep the questions short. " + _QUESTIONS_FORMAT
))

_NUGGET_TASK = (
    "List about ten nuggets: short atomic facts (at most a dozen words each) that a relevant answer must "
    "contain. Mark each nugget's importance: \"vital\" when an answer without it fails the query, \"okay\" "
    "when it is good to have but not essential. "
)

NUGGETS_FACET = Prompt("nuggets-facet", "v1", (
    "Explore the connection between '{query_title}' with a specific focus on the subtopic '{query_subtopic}'. "
    + _NUGGET_TASK + _NUGGETS_FORMAT
))

NUGGETS_QUERY = Prompt("nuggets-query", "v1", "Explore the query '{query_title}'. " + _NUGGET_TASK + _NUGGETS_FORMAT)

# {items}: "questions" or "nuggets"; {format}: the format the first prompt asked for, as it was sent.
CORRECTIVE = Prompt("genq-retry", "v1", "I could not find any {items} in that answer. {format}")


@dataclass(frozen=True)
class PromptChoice:
    """The prompts of a run: ``facet`` for each subtopic (None: subtopics are not asked one by one),
    ``query`` for a query asked as a whole; ``nuggets`` when they ask for nuggets."""

    facet: Prompt | None
    query: Prompt | None
    nuggets: bool = False

    @property
    def items(self) -> str:
        return "nuggets" if self.nuggets else "questions"

    @property
    def answer_format(self) -> str:
        """The answer format the prompts ask for, as sent (for the corrective turn)."""
        return (_NUGGETS_FORMAT if self.nuggets else _QUESTIONS_FORMAT).format()

    def prompt_ids(self) -> dict[str, str]:
        """What the journal's settings record: each prompt's id, the corrective turn's included."""
        ids = {"facet": self.facet, "query": self.query, "corrective": CORRECTIVE}
        return {role: prompt.prompt_id for role, prompt in ids.items() if prompt is not None}

    def corrective(self, problem: str = "") -> str:
        """The corrective turn after an unusable answer: the same whatever its ``problem`` (none, or
        nothing readable)."""
        return CORRECTIVE.render(items=self.items, format=self.answer_format)


def choose_prompts(mode: str) -> PromptChoice:
    """The prompts of ``--prompt MODE``: ``auto`` (subtopics: the facet prompt each; else the query
    prompt), ``facet`` (every topic needs subtopics), ``query`` (each query as a whole, subtopics
    ignored), ``nuggets`` (nuggets, per subtopic where a topic has them, else per query)."""
    if mode == "auto":
        return PromptChoice(QUESTIONS_FACET, QUESTIONS_QUERY)
    if mode == "facet":
        return PromptChoice(QUESTIONS_FACET, None)
    if mode == "query":
        return PromptChoice(None, QUESTIONS_QUERY)
    if mode == "nuggets":
        return PromptChoice(NUGGETS_FACET, NUGGETS_QUERY, nuggets=True)
    raise ValueError(f"unknown prompt {mode!r}; choose one of {', '.join(MODES)}")
