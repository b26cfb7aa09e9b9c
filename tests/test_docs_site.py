"""The documentation site builds with ``mkdocs build --strict`` (a broken link or anchor, a page left out of
the nav, a reference that no longer resolves fails it), and its generated reference holds every command
and every configuration key: the reference is made from the program, so it cannot drift."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

README = os.environ.get("EXAMPP_DOCS_README", "README.md")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (scripts/setup.sh ...,docs)")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(REPO / "mkdocs.yml"),
                           "-d", str(out)], cwd=REPO, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    assert done.returncode == 0 and "WARNING" not in done.stdout, done.stdout[-6000:]
    return out


def test_every_command_is_in_the_reference(site):
    from exampp.cli import main

    page = (site / "reference" / "commands" / "index.html").read_text(encoding="utf-8")
    ids = set(re.findall(r'<h\d id="([^"]+)"', page))

    def names(group, prefix):  # every command and subcommand, as mkdocs-click names their headings
        import click

        ctx = click.Context(group)
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            yield f"{prefix}-{name}"
            if isinstance(command, click.Group):
                yield from names(command, f"{prefix}-{name}")

    expected = set(names(main, "exampp"))
    assert {"exampp-grade", "exampp-bank-generate", "exampp-nuggets-assign"} <= expected
    assert expected - ids == set()


def test_every_configuration_key_is_documented():
    from exampp.config import KEYS

    page = (REPO / "docs" / "reference" / "configuration.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \|", page, flags=re.M)
    assert sorted(rows) == sorted(KEYS)


def test_the_api_reference_is_generated(site):
    page = (site / "reference" / "api" / "jobs" / "index.html").read_text(encoding="utf-8")
    assert 'id="exampp.api.grade.GradeJob"' in page  # a class documented from its docstring


def test_readme_is_short():
    lines = (REPO / README).read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"{README} has {len(lines)} lines: the documentation goes in docs/"


def test_the_architecture_picture_is_the_layers_contract():
    """The layers drawn on the architecture page, top to bottom, are those import-linter holds (pyproject.toml)."""
    import tomllib

    contract = next(c for c in tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
                    if c["id"] == "layers")
    layers = [{m.strip() for m in layer.split(":")} for layer in contract["layers"]]
    assert "](layers.svg)" in (REPO / "docs" / "explanation" / "architecture.md").read_text(encoding="utf-8")
    picture = (REPO / "docs" / "explanation" / "layers.svg").read_text(encoding="utf-8")
    drawn = [set(label.split(" · ")) for label in re.findall(r'<text class="layer"[^>]*>([^<]+)</text>', picture)]
    assert drawn == layers
