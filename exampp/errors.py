"""Errors that point the user at the offending input."""
from __future__ import annotations

from os import PathLike


class ModelLoadError(RuntimeError):
    """A model could not be loaded; the message says why and what to do instead
    (``--model PATH`` to a local copy, or the offline ``--grader embedding``)."""


class InputError(ValueError):
    """Bad user input: rendered as ``path:line: message`` (line omitted when unknown)."""

    def __init__(self, path: str | PathLike[str] | None, line: int | None, message: str):
        self.path = str(path) if path is not None else None
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.message}"
