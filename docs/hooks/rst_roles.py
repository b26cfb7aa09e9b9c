"""A mkdocs hook: the docstrings' Sphinx roles (``:class:`GradeJob```) shown as the code they name.

exampp's docstrings are written for Sphinx-style readers; mkdocstrings renders the role's name
before the code (":class:GradeJob"). The role names are dropped from the generated pages' HTML.
"""
from __future__ import annotations

import re

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|data|mod|attr|exc|obj|const|ref):(?=<code)")


def on_page_content(html: str, page, config, files) -> str:
    return _ROLE.sub("", html)
