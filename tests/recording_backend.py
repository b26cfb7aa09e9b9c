"""A generation-only backend for tests of what a method sends: it keeps every prompt as sent (a
text, or a conversation of (role, text) turns) and answers each with one fixed text."""
from __future__ import annotations

from exampp.llm.backend import Backend, Capability, Usage


class Recording(Backend):
    """Generation only (a method's slow path): ``sent`` holds every prompt, each answered ``answer``."""

    name, capabilities = "recording", frozenset({Capability.GENERATE})

    def __init__(self, answer: str):
        self.usage = Usage()
        self.sent: list = []
        self.answer = answer

    def generate(self, prompts, *, max_new_tokens=32, temperature=0.0):
        self.sent += list(prompts)
        return [self.answer] * len(prompts)
