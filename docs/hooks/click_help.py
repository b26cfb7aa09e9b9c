"""A mkdocs hook: the commands' help as the terminal shows it, on the command reference.

The commands' help texts keep their example lines apart with click's ``\\b`` marker (a paragraph
that follows it is never rewrapped). mkdocs-click passes the help to Markdown as it is, where those
lines would run together into one paragraph; this hook makes each such paragraph a plain-text
block, after its heading line ("Example:") when it has one.
"""
from __future__ import annotations

from collections.abc import Iterator

from mkdocs_click import _docs

_describe = _docs._make_description
_option_row = _docs._format_table_option_row


def unwrapped_paragraphs(lines: list[str]) -> Iterator[str]:
    """Markdown lines of a help text: each ``\\b`` paragraph fenced as text, the rest as it is."""
    block: list[str] | None = None
    for line in [*lines, ""]:
        if block is None:
            if line.strip() == "\b":
                block = []
            else:
                yield line
        elif line.strip():
            block.append(line)
        else:
            if block and block[0].rstrip().endswith(":") and not block[0].startswith(" "):
                yield from (block.pop(0), "")
            if block:
                indent = min(len(l) - len(l.lstrip()) for l in block if l.strip())
                yield from ("```text", *(l[indent:] for l in block), "```", "")
            block = None


def _make_description(ctx, remove_ascii_art: bool = False) -> Iterator[str]:
    yield from unwrapped_paragraphs(list(_describe(ctx, remove_ascii_art)))


_docs._make_description = _make_description


def _format_table_option_row(option) -> str:
    row = _option_row(option)
    return row.replace(f"`{option.default}`", "_required" if option.required else "") if str(option.default) == "Sentinel.UNSET" else row


_docs._format_table_option_row = _format_table_option_row
