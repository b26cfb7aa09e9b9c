"""The package type-checks: mypy, with the configuration in pyproject.toml (``[tool.mypy]``), finds
no error in exampp, and does find the errors planted in a module it is given.

Each check runs ``python -m mypy`` in a child process, as a developer or CI runs it. On the package
it runs from the checkout, so it reads the checkout's pyproject.toml and keeps its incremental
cache in .mypy_cache there (git-ignored): a rerun checks only what changed. A first run takes
minutes. The planted module is checked alone, with the checkout's configuration, in a scratch
folder with a cache of its own.
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

if importlib.util.find_spec("mypy") is None:
    pytest.skip("mypy is not installed (the test extra pins it: pip install -e '.[test]')", allow_module_level=True)


def mypy(*args: str, cwd: Path = REPO) -> tuple[int, str]:
    """Exit status and output of ``python -m mypy`` run with ``args`` in ``cwd``."""
    done = subprocess.run([sys.executable, "-m", "mypy", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=1800)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.slow
def test_the_package_type_checks():
    status, output = mypy()
    assert status == 0, f"mypy finds errors in the package:\n{output}"
    assert output.startswith("Success: no issues found"), output


@pytest.mark.slow
def test_the_check_finds_what_is_planted(tmp_path):
    # one error mypy reports anyway, and one for each of two of the project's settings
    (tmp_path / "planted.py").write_text(
        "def count() -> int:\n"
        '    return "three"\n'
        "\n\n"
        "def same(a: int, b: str) -> bool:\n"
        "    return a == b\n"  # strict_equality
        "\n\n"
        "n: int = 1  # type: ignore[assignment]\n",  # warn_unused_ignores
        encoding="utf-8")
    status, output = mypy("--config-file", str(REPO / "pyproject.toml"), "planted.py", cwd=tmp_path)
    assert status == 1, output
    assert 'planted.py:2: error: Incompatible return value type (got "str", expected "int")  [return-value]' in output
    assert "planted.py:6: error: Non-overlapping equality check" in output and "[comparison-overlap]" in output
    assert 'planted.py:9: error: Unused "type: ignore" comment  [unused-ignore]' in output
    assert "Found 3 errors in 1 file (checked 1 source file)" in output
