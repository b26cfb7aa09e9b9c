"""The layers of exampp's architecture hold: import-linter's contracts in pyproject.toml pass on the
package, and break when a lower layer imports a higher one, a top-level module is given no layer, or
sibling modules import each other in a circle.

Each check runs ``lint-imports`` (through import-linter's own entry point, without its cache) in a
child process whose working folder holds the package it checks: the checkout itself, or a scratch
copy of it with one import planted. import-linter puts that folder first on the path, so the copy
is what it reads, not the installed package.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import REPO

pytest.importorskip("importlinter")

LINT = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True, no_logo=True))"


def lint(root: Path) -> tuple[int, str]:
    """Exit status and output of ``lint-imports`` run on the package under ``root``."""
    done = subprocess.run([sys.executable, "-c", LINT], cwd=root, capture_output=True, text=True, timeout=300)
    return done.returncode, " ".join((done.stdout + done.stderr).split())  # rich wraps long lines


def copy_of_package(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(REPO / "exampp", root / "exampp", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def plant(path: Path, code: str) -> int:
    """Append ``code`` to the module at ``path``; the line number of its last line."""
    text = path.read_text(encoding="utf-8").rstrip("\n") + "\n\n\n" + code
    path.write_text(text, encoding="utf-8")
    return len(text.splitlines())


@pytest.mark.slow
def test_the_contracts_hold_on_the_package():
    status, output = lint(REPO)
    assert status == 0, output
    assert "Contracts: 2 kept, 0 broken." in output


def test_the_contracts_have_no_exception_lists():
    """What is checked is the whole package: no import left out, no package's insides skipped."""
    settings = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = settings["tool"]["importlinter"]["contracts"]
    assert {c["id"] for c in contracts} == {"layers", "acyclic"}
    for contract in contracts:
        exceptions = {"ignore_imports", "skip_descendants", "unmatched_ignore_imports_alerting"}
        assert not exceptions & set(contract), contract["id"]


@pytest.mark.slow
def test_a_lazy_import_of_a_higher_layer_breaks_the_layers(tmp_path):
    # collection (inputs) reaching up to the report job from inside a function: lazy imports count
    root = copy_of_package(tmp_path)
    line = plant(root / "exampp" / "collection" / "runs.py",
                 "def _report(path):\n    from exampp.api.report import build_report\n")
    status, output = lint(root)
    assert status == 1
    assert "exampp's layers" in output and "BROKEN" in output
    assert "exampp.collection is not allowed to import exampp.api:" in output
    assert f"- exampp.collection.runs -> exampp.api.report (l.{line})" in output
    # api imports collection: the planted import closes a circle between the siblings of exampp too
    assert "No cycles are allowed in exampp." in output and "- .collection -> .api (1 import)" in output
    assert "Contracts: 0 kept, 2 broken." in output


@pytest.mark.slow
def test_the_report_page_importing_its_job_breaks_the_layers(tmp_path):
    # the break mended here: the page took its constants from the report job above it
    root = copy_of_package(tmp_path)
    line = plant(root / "exampp" / "report" / "html.py", "from exampp.api.report import CHOSEN  # noqa: E402\n")
    status, output = lint(root)
    assert status == 1
    assert f"- exampp.report.html -> exampp.api.report (l.{line})" in output
    # and api imports report.content: a circle between the siblings of exampp too
    assert "No cycles are allowed in exampp." in output
    assert "Contracts: 0 kept, 2 broken." in output


@pytest.mark.slow
def test_a_module_without_a_layer_breaks_the_layers(tmp_path):
    root = copy_of_package(tmp_path)
    (root / "exampp" / "helpers.py").write_text('"""Anything."""\n', encoding="utf-8")
    status, output = lint(root)
    assert status == 1
    assert "exampp.helpers" in output
    assert "Contracts: 1 kept, 1 broken." in output


# Circles the acyclic contract finds, each where one was mended: (module planted in, import planted, the
# package whose siblings it joins in a circle, the lines of the report that name the circle: one of them).
CIRCLES = {
    # question_bank imports the formats, which would import it back
    "bank formats": ("formats/tsv_bank.py", "from exampp.formats.question_bank import WRITE_FORMATS",
                     "exampp.formats", (".question_bank -> .tsv_bank", ".tsv_bank -> .question_bank")),
    # the wire format is below the backend: the backend imports it, never the other way round
    "openai package": ("llm/openai/wire.py", "from exampp.llm.openai.backend import OpenAIBackend",
                       "exampp.llm.openai", (".backend -> .wire", ".wire -> .backend")),
    # the registry finds the built-in backends where they lie, by name: an import of their package closes one
    "backends registry": ("llm/backend.py", "from exampp.llm import backends",
                          "exampp.llm", ("- .backend -> .backends (1 import)",)),
}


@pytest.mark.parametrize("circle", CIRCLES)
def test_a_circle_breaks_the_acyclic_contract(tmp_path, circle):
    module, imported, package, named = CIRCLES[circle]
    root = copy_of_package(tmp_path)
    plant(root / "exampp" / module, f"def _planted():\n    {imported}\n")
    status, output = lint(root)
    assert status == 1
    assert f"No cycles are allowed in {package}." in output
    assert any(line in output for line in named), output
    assert "Contracts: 1 kept, 1 broken." in output
