"""exampp's code passes ruff's lint: ``ruff check`` with the rules of pyproject.toml's [tool.ruff]
(pycodestyle's errors and warnings, pyflakes, import order; lines of at most 120 characters) is clean
on the package, the tests, the benchmarks and the scripts, and fails on a planted violation.

Each check runs ruff through its Python package (``python -m ruff``, the version the test extra pins,
without its cache) in a child process in the checkout. A planted file is given on standard input,
named as a file of tests/ (``--stdin-filename``), and checked with the project's configuration.
"""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import REPO

pytest.importorskip("ruff", reason="ruff is not installed: pip install -e '.[test]' brings the pinned version")

PATHS = ("exampp", "tests", "benchmarks", "scripts", "docs/hooks")
PLANTED = "tests/test_planted.py"


def ruff(*args: str, stdin: str | None = None) -> tuple[int, str]:
    """Exit status and output (both streams) of ``ruff check ARGS`` run in the checkout."""
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", *args],
                          cwd=REPO, input=stdin, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr


def planted(code: str, *args: str) -> tuple[int, str]:
    """``ruff check`` on ``code`` as if it were the file :data:`PLANTED`, with the project's configuration."""
    return ruff("--config", str(REPO / "pyproject.toml"), *args, "--stdin-filename", PLANTED, "-", stdin=code)


def test_the_code_passes_the_lint():
    status, output = ruff(*PATHS)
    assert status == 0, output
    assert "All checks passed!" in output


def test_unsorted_and_unused_imports_fail_the_lint():
    status, output = planted("import sys\nimport os\n\n\ndef sep():\n    return os.sep\n")
    assert status == 1
    assert f"{PLANTED}:1:1: I001" in output  # import order
    assert f"{PLANTED}:1:8: F401 [*] `sys` imported but unused" in output
    assert "Found 2 errors." in output


def test_fix_sorts_the_imports():
    status, output = planted("import sys\nimport os\n\n\ndef sep():\n    return os.sep, sys.path\n", "--fix")
    assert status == 0, output
    assert output.startswith("import os\nimport sys\n")  # the fixed code, on standard output


def test_lines_may_hold_120_characters():
    assert planted(f"NAME = {'x' * 111!r}\n") == (0, "All checks passed!\n")  # 120 characters
    status, output = planted(f"NAME = {'x' * 112!r}\n")
    assert status == 1
    assert f"{PLANTED}:1:121: E501 Line too long (121 > 120)" in output


def test_the_pre_commit_hooks_check_what_the_suite_checks():
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    hooks = {hook["id"]: hook for repo in config["repos"] for hook in repo["hooks"]}
    assert sorted(hooks) == ["import-linter", "mypy", "ruff"]
    assert hooks["ruff"]["entry"].split()[1:4] == ["-m", "ruff", "check"]
    assert hooks["mypy"]["entry"].split()[1:] == ["-m", "mypy"]  # its files from pyproject, as test_typecheck's
    assert hooks["import-linter"]["entry"].split()[0].endswith("lint-imports")
    linted = re.compile(hooks["ruff"]["files"])
    assert all(linted.match(f"{path}/module.py") for path in PATHS)
    assert not linted.match("docs/index.md")
