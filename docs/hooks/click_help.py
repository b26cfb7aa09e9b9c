"""A mkdocs hook: the commands' help as the terminal shows it, on the command reference, easy to scan.

The commands' help texts keep their example lines apart with click's ``\\b`` marker (a paragraph
that follows it is never rewrapped). mkdocs-click passes the help to Markdown as it is, where those
lines would run together into one paragraph; this hook makes each such paragraph a plain-text
block, after its heading line ("Example:") when it has one, with each command fitted to the page's
width (:func:`fitted_commands`). In the options table, the Default column holds every option's default: a
value, the state of an on/off flag, the help's ``[default: ...]`` (taken out of the description),
or nothing (never "None").
"""
from __future__ import annotations

import re
from collections.abc import Iterator

import click
from mkdocs_click import _docs

_describe = _docs._make_description
_value_type = _docs._format_table_option_type
WIDTH = 88  # characters of a code block that the page shows without a scroll bar
_TOKEN = re.compile(r"""(?:'[^']*'|"[^"]*"|\S)+""")  # a shell word, quotes kept whole
_DEFAULT_IN_HELP = re.compile(r"\s*\[default: ((?:[^\[\]]|\[[^\]]*\])*)\]")


def fitted(line: str, width: int = WIDTH) -> list[str]:
    """``line`` of an example as lines of at most ``width`` characters where its words allow: a trailing
    ``# comment`` goes on a line of its own above it, the command is continued with `` \\`` at a word."""
    if len(line) <= width:
        return [line]
    indent = line[:len(line) - len(line.lstrip())]
    code, _, comment = line.partition("  # ")
    if comment:
        closer = f"{code.rstrip()}  # {comment.strip()}"  # the comment's alignment padding dropped
        return [closer] if len(closer) <= width else [f"{indent}# {comment.strip()}", *fitted(code.rstrip(), width)]
    words = _TOKEN.findall(code)
    lines: list[list[str]] = [[words[0]]]
    for word in words[1:]:
        current = lines[-1]
        lead = indent if len(lines) == 1 else indent + "    "
        if len(lead) + len(" ".join([*current, word])) + 2 <= width:
            current.append(word)
            continue
        # a new line starts at an option, its value kept with it (--format tsv, not --format \ tsv)
        cut = next((i for i in range(len(current) - 1, 0, -1) if current[i].startswith("-")), None)
        if word.startswith("-") or cut is None:
            lines.append([word])
        else:
            lines[-1], tail = current[:cut], current[cut:]
            lines.append([*tail, word])
    return [(indent if i == 0 else indent + "    ") + " ".join(line) + (" \\" if i < len(lines) - 1 else "")
            for i, line in enumerate(lines)]


def fitted_commands(lines: list[str], width: int = WIDTH) -> list[str]:
    """The lines of an example block, each command (continued lines joined first, so that a comment
    is never put inside one) :func:`fitted` to ``width``."""
    fitted_lines: list[str] = []
    command = ""
    for line in lines:
        command = f"{command} {line.strip()}" if command else line
        if command.rstrip().endswith("\\"):
            command = command.rstrip()[:-1].rstrip()
            continue
        fitted_lines += fitted(command, width)
        command = ""
    return fitted_lines + (fitted(command, width) if command else [])


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
                indent = min(len(line) - len(line.lstrip()) for line in block if line.strip())
                yield from ("```text", *fitted_commands([line[indent:] for line in block]), "```", "")
            block = None


def _make_description(ctx, remove_ascii_art: bool = False) -> Iterator[str]:
    yield from unwrapped_paragraphs(list(_describe(ctx, remove_ascii_art)))


def table_default(option: click.Option) -> str:
    """What the Default column shows for ``option``: its value in code, the flag that is on, or ""."""
    default = option.default
    if option.required:
        return "_required_"
    if option.is_flag and option.secondary_opts and default is not None:  # --progress/--no-progress: the one on
        return f"`{option.opts[0] if default else option.secondary_opts[0]}`"
    if option.is_flag or default in (None, "", ()) or str(default) == "Sentinel.UNSET":
        return ""
    if isinstance(default, (tuple, list)):
        return ", ".join(f"`{value}`" for value in default)
    return f"`{default}`"


def option_row(option: click.Option) -> str:
    """A row of the options table: names, type, description, default (from the help when it names it)."""
    names = ", ".join(f"`{name}`" for name in option.opts)
    if option.secondary_opts:
        names += " / " + ", ".join(f"`{name}`" for name in option.secondary_opts)
    description = option.help or ""
    default = table_default(option)
    named = _DEFAULT_IN_HELP.search(description)
    if named and not default:
        default = named.group(1)
        description = (description[:named.start()] + description[named.end():]).strip()
    return f"| {names} | {_value_type(option)} | {description} | {default} |"


_docs._make_description = _make_description
_docs._format_table_option_row = option_row
