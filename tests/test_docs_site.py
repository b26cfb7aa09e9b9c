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

from conftest import REPO, load_module

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


@pytest.mark.slow
def test_every_command_is_in_the_reference(site):
    page = (site / "reference" / "commands" / "index.html").read_text(encoding="utf-8")
    ids = set(re.findall(r'<h\d id="([^"]+)"', page))
    # every command and subcommand, as mkdocs-click names their headings
    expected = {name.replace(" ", "-") for name, _ in _commands()[1:]}
    assert {"exampp-grade", "exampp-bank-generate", "exampp-nuggets-assign"} <= expected
    assert expected - ids == set()


def test_every_configuration_key_is_documented():
    from exampp.formats.exampp_toml import KEYS

    page = (REPO / "docs" / "reference" / "configuration.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \|", page, flags=re.M)
    assert sorted(rows) == sorted(KEYS)


@pytest.mark.slow
def test_the_api_reference_is_generated(site):
    page = (site / "reference" / "api" / "jobs" / "index.html").read_text(encoding="utf-8")
    assert 'id="exampp.api.grade.GradeJob"' in page  # a class documented from its docstring


def test_readme_is_short():
    lines = (REPO / README).read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"{README} has {len(lines)} lines: the documentation goes in docs/"


def test_the_architecture_picture_is_the_layers_contract():
    """The layers drawn on the architecture page, top to bottom, are those import-linter holds
    (pyproject.toml): the committed picture is what scripts/draw_layers.py draws from the contract."""
    import tomllib

    draw_layers = load_module(REPO / "scripts" / "draw_layers.py", "draw_layers")
    contract = next(c for c in tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
                    if c["id"] == "layers")
    layers = [{m.strip() for m in layer.split(":")} for layer in contract["layers"]]
    assert "](layers.svg)" in (REPO / "docs" / "explanation" / "architecture.md").read_text(encoding="utf-8")
    picture = (REPO / "docs" / "explanation" / "layers.svg").read_text(encoding="utf-8")
    drawn = [set(label.split(" · ")) for label in re.findall(r'<text class="layer"[^>]*>([^<]+)</text>', picture)]
    assert drawn == layers
    assert picture == draw_layers.draw(draw_layers.layers()), "run: python scripts/draw_layers.py"


def _hook():
    """docs/hooks/click_help.py, the commands reference's renderer, as a module."""
    pytest.importorskip("mkdocs_click", reason="the docs extra is not installed (scripts/setup.sh ...,docs)")
    return load_module(REPO / "docs" / "hooks" / "click_help.py", "click_help")


def _commands():
    """``exampp`` and every command and subcommand under it, with its full name (``exampp bank generate``)."""
    import click

    from exampp.cli import main

    def walk(group, prefix):
        ctx = click.Context(group)
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            yield f"{prefix} {name}", command
            if isinstance(command, click.Group):
                yield from walk(command, f"{prefix} {name}")

    return [("exampp", main), *walk(main, "exampp")]


def test_the_reference_examples_fit_the_page():
    hook = _hook()
    for name, command in _commands():
        text = "\n".join(hook.unwrapped_paragraphs((command.help or "").splitlines()))
        for block in re.findall(r"```text\n(.*?)```", text, flags=re.DOTALL):
            long = [line for line in block.splitlines() if len(line) > hook.WIDTH and " " in line.strip()]
            assert not long, f"{name}: example lines wider than the page: {long}"
    long = "exampp grade runs/ --grader self-rating --cascade embedding:0.95 --canaries 4 --depth 10"
    assert hook.fitted(f"{long}  # fewer calls") == ["# fewer calls", long]
    # a continued command is joined first: its comment goes above it, never inside; an option keeps its value
    assert hook.fitted_commands(["exampp grade runs/ --backend openai \\", "      --format tsv  # served"],
                                width=40) == ["# served", "exampp grade runs/ --backend openai \\", "    --format tsv"]


def test_the_reference_default_column_holds_every_default_and_never_none():
    hook = _hook()
    import click

    rows = {(name, option.name): hook.option_row(option) for name, command in _commands()
            for option in command.params if isinstance(option, click.Option) and not option.hidden}
    defaults = {key: row.rsplit("|", 2)[1].strip() for key, row in rows.items()}
    assert "None" not in {d.strip("`") for d in defaults.values()}
    assert defaults["exampp grade", "progress"] == "`--progress`"  # the state of an on/off flag
    assert defaults["exampp grade", "strict"] == ""  # a plain flag is off
    assert defaults["exampp grade", "grader"] == "self-rating"  # the help's [default: ...], moved
    assert "[default:" not in rows["exampp grade", "grader"]
    assert defaults["exampp eval", "rel_level"] == "`1`"  # a value


def test_the_own_track_checklist_is_in_the_nav_and_its_commands_parse():
    """The one-page checklist is linked from the index and the nav, and each command it shows (fenced
    ``sh``: shown, not run) names options its command has."""
    import shlex

    import click

    from docs_blocks import commands, nav_pages
    from exampp.cli import main

    page = "how-to/own-track-checklist.md"
    assert page in nav_pages((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    assert f"]({page})" in (REPO / "docs" / "index.md").read_text(encoding="utf-8")
    text = (REPO / "docs" / page).read_text(encoding="utf-8")
    lines = [c for block in re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL) for c in commands(block)]
    assert len(lines) >= 10
    for line in lines:
        words = shlex.split(line.replace("\\\n", " "), comments=True)
        words = words[:words.index("|")] if "|" in words else words
        assert words[0] == "exampp", line
        command, args = main, words[1:]
        while isinstance(command, click.Group):
            command = command.get_command(click.Context(command), args[0])
            assert command is not None, line
            args = args[1:]
        known = {name for param in command.params for name in (*param.opts, *param.secondary_opts)}
        unknown = [w for w in args if w.startswith("-") and w.split("=")[0] not in known | {"-h", "--help"}]
        assert not unknown, f"{line}: no such option {unknown}"


@pytest.mark.slow
def test_the_reference_shows_sphinx_roles_as_code_without_their_names(site):
    """``:class:`~exampp.errors.InputError``` reads as ``InputError``, ``:func:`read_run``` as ``read_run``
    (docs/hooks/rst_roles.py), as Sphinx shows them."""
    pages = "".join(path.read_text(encoding="utf-8") for path in (site / "reference" / "api").rglob("*.html"))
    assert "<code>InputError</code>" in pages
    assert not re.findall(r"<code>~[\w.]+</code>", pages)
    assert not re.findall(r":(?:py:)?(?:func|class|meth|data|mod|attr|exc|obj|const|ref):<code>", pages)


def test_the_architecture_page_names_every_part():
    """The architecture page tells the whole truth: it names every engine, every built-in backend, both
    plugin entry-point groups, and every module of the lower layers' folders (collection, formats, stores,
    files), as the code has them."""
    import pkgutil

    import exampp.collection
    import exampp.files
    import exampp.formats
    import exampp.llm.backends
    import exampp.stores
    from exampp.grading import registry
    from exampp.llm import backend

    page = (REPO / "docs" / "explanation" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([^`]+)`", page))
    engines = {"LocalEngine", "RayEngine", "BatchEngine"}
    assert engines <= named, engines - named
    for path in (REPO / "exampp" / "grading").glob("*engine.py"):  # a new engine is named on the page too
        assert re.findall(r"^class (\w+Engine)\b", path.read_text(encoding="utf-8"), re.M)[0] in named, path
    backends = {m.name for m in pkgutil.iter_modules(exampp.llm.backends.__path__) if not m.name.startswith("_")}
    assert backends == {"hf", "openai", "vllm", "embedding", "extractive"}
    assert backends <= named
    assert {registry.ENTRY_POINTS, backend.ENTRY_POINTS} <= named
    for package in (exampp.collection, exampp.formats, exampp.stores, exampp.files):
        modules = {module.name for module in pkgutil.iter_modules(package.__path__)}
        assert modules <= named, (package.__name__, modules - named)
