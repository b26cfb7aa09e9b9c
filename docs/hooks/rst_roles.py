"""A mkdocs hook: the docstrings' Sphinx roles (``:class:`GradeJob```) shown as the code they name.

exampp's docstrings are written for Sphinx-style readers; mkdocstrings renders the role's name
before the code (":class:GradeJob"). The role names are dropped from the generated pages' HTML,
and a target written ``~a.b.Name`` shows as ``Name``, as Sphinx shows it.
"""
from __future__ import annotations

import re

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|data|mod|attr|exc|obj|const|ref):<code>(~?)([^<]*)</code>")


def _shown(match: re.Match[str]) -> str:
    target = match.group(2).rpartition(".")[2] if match.group(1) else match.group(2)
    return f"<code>{target}</code>"


def on_page_content(html: str, page, config, files) -> str:
    return _ROLE.sub(_shown, html)
