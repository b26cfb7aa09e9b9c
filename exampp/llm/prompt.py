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
