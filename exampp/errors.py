"""Errors that are the user's to act on: each says, in one line, what is wrong and where.

The command line prints any :class:`ExamppError` as ``Error: <message>``, without a traceback.
"""
from __future__ import annotations

from os import PathLike


class ExamppError(Exception):
    """Base of the errors whose message is meant for the user."""


class ModelLoadError(ExamppError, RuntimeError):
    """A model could not be loaded; the message says why and what to do instead
    (``--model PATH`` to a local copy, or the offline ``--grader embedding``)."""


# A message may quote what was read, which can be as long as a line (megabytes): past this many
# characters its middle is left out, so that an error stays short whatever the input.
MAX_MESSAGE_CHARS = 1000


class _Located(ExamppError):
    """Rendered as ``path:line: message`` (line omitted when unknown; a path with characters that are
    not printable, a line break say, as a quoted Python string; a message longer than
    :data:`MAX_MESSAGE_CHARS` without its middle)."""

    def __init__(self, path: str | PathLike[str] | None, line: int | None, message: str):
        self.path = str(path) if path is not None else None
        self.line = line
        if len(message) > MAX_MESSAGE_CHARS:  # its start says what is wrong, its end often why
            keep = MAX_MESSAGE_CHARS // 3
            message = f"{message[:2 * keep]}...[{len(message) - 3 * keep:,} characters]...{message[-keep:]}"
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path or "<input>"
        if not where.isprintable():  # a name with a line break or control character, quoted to stay one line
            where = repr(where)
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.message}"

    def __reduce__(self):  # pickled by its fields, not its args (a grading worker raises it to the driver)
        return _rebuilt, (type(self), self.path, self.line, self.message)


def _rebuilt(cls: type[_Located], path: str | None, line: int | None, message: str) -> _Located:
    error = Exception.__new__(cls)
    _Located.__init__(error, path, line, message)
    return error


class InputError(_Located, ValueError):
    """Bad user input: rendered as ``path:line: message`` (line omitted when unknown).

    :param path: The file the input came from (None: ``<input>``).
    :param line: The line of the file, where known.
    :param message: What is wrong; a message longer than :data:`MAX_MESSAGE_CHARS` loses its middle.
    """



class OutputError(_Located):
    """An output that cannot be written (no space left, no permission, an impossible name)."""

    def __init__(self, path: str | PathLike[str] | None, message: str):
        super().__init__(path, None, message)


class Interrupted(KeyboardInterrupt):
    """A Ctrl-C that stopped a job which keeps its work as it goes: ``kept`` says what was kept and
    how to go on (the command line prints it instead of a bare "Aborted!")."""

    def __init__(self, kept: str) -> None:
        super().__init__(kept)
        self.kept = kept
