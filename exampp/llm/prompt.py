"""A prompt template with a version: what a backend renders, fits to its input length and sends.

Prompts are part of a grading method: change one and its grades are no longer comparable, so
every template has a version that goes into the method id. Templates use ``str.format`` fields;
when a prompt must fit a model's input length, only its ``{context}`` field is cut.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Prompt:
    name: str
    version: str
    template: str

    @property
    def prompt_id(self) -> str:
        return f"{self.name}@{self.version}"

    def render(self, **fields: str) -> str:
        return self.template.format(**fields)


# A prompt is either one text (one user turn) or a conversation: (role, content) turns, "user" and
# "assistant", ending with a user turn. Generation asks again after an unusable answer by sending
# the conversation so far plus a corrective user turn.
Turn = tuple[str, str]
Conversation = tuple[Turn, ...]


def as_messages(prompt: str | Conversation) -> list[dict[str, str]]:
    """Chat messages: a text is one user turn.

    :param prompt: a text, or a conversation of (role, content) turns."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [{"role": role, "content": content} for role, content in prompt]


def as_text(prompt: str | Conversation) -> str:
    """One text for a model without a chat format: the turns one after another, a blank line apart.

    :param prompt: a text, or a conversation of (role, content) turns."""
    if isinstance(prompt, str):
        return prompt
    return "\n\n".join(content for _, content in prompt)
