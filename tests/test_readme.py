"""README.md runs as written: every ```bash and ```python block of it, in order.

The blocks run in a scratch copy of the repository (its git-tracked files under ``tmp/repo``, with
``tmp/shared`` linking to the reference data when there is any, so that ``../shared`` works) with
this virtualenv's bin first on PATH: bash blocks with ``bash -euo pipefail -c``, python blocks with
this virtualenv's python. A block passes when it exits 0 and prints no Python traceback. A python
block whose first line is ``# exampp/<path>.py`` is a file the README adds to the package (the
"Extending exampp" examples): it is written there in the scratch copy and must import.

What this machine may lack is stood in for:

- The set-up. The first block's ``bash scripts/example.sh`` runs with ``EXAMPP_SKIP_SETUP=1`` and
  this virtualenv linked as ``.venv``; the set-up-and-test command beside it is what CI itself runs,
  so it is only checked to be there.
- FLAN-T5-large. HOME is a scratch folder whose ``models/flan-t5-large`` is a tiny random-weight
  FLAN-T5-shaped model (tests/tiny_models.py), so ``--model ~/models/flan-t5-large`` loads offline;
  HF_HUB_OFFLINE=1 keeps the hub from being tried.
- A GPU. ``--device cuda`` becomes ``--device cpu`` when torch sees none.

Without the reference data, blocks that use it (``../shared``) or the DL19 workspace built from it
(``out/dl19``) are skipped, and commands that load the tiny model (its tokenizer lies in
``../shared``) are left out of their block, with a warning. The Commands section's ``out/dl19``
examples come before the worked example that builds that workspace (the README says so): the
``dl19`` fixture runs the worked example's block once, before the first of them.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import REPO, SHARED

pytestmark = pytest.mark.slow

TIMEOUT = 3600  # a guard against a hang, not a speed check: a loaded machine runs a block 10x slower
DL19_WORKSPACE = "out/dl19"
MODEL = "~/models/flan-t5-large"
TOKENIZER = SHARED / "models" / "t5-tokenizer"


@dataclass(frozen=True)
class Block:
    lang: str  # bash or python
    heading: str  # the section it is in
    code: str

    def uses_shared(self) -> bool:
        return "../shared" in self.code or DL19_WORKSPACE in self.code

    def builds_dl19(self) -> bool:
        return f"--workspace {DL19_WORKSPACE}" in self.code

    def file(self) -> str | None:
        """The package file a python block is, when its first line names one (``# exampp/.../x.py``)."""
        match = re.fullmatch(r"# (exampp/[\w/]+\.py)", self.code.split("\n", 1)[0]) if self.lang == "python" else None
        return match.group(1) if match else None


def readme_blocks(text: str) -> list[Block]:
    """The ```bash and ```python blocks of a Markdown text (indented ones in list items too)."""
    blocks, heading, fence, lines = [], "", None, []
    for line in text.splitlines():
        stripped = line.strip()
        if fence is None:
            if stripped.startswith("```"):
                fence, lines = (stripped[3:], len(line) - len(line.lstrip())), []
            elif stripped.startswith("#"):
                heading = stripped.lstrip("#").strip()
        elif stripped == "```":
            lang, indent = fence
            if lang in ("bash", "python"):
                blocks.append(Block(lang, heading, "\n".join(l[indent:] for l in lines) + "\n"))
            fence = None
        else:
            lines.append(line)
    return blocks


def commands(script: str) -> list[str]:
    """The commands of a bash script: lines joined at trailing backslashes, blank and comment lines
    dropped (a multi-line compound command would come out as one command per line)."""
    found, current = [], ""
    for line in script.splitlines():
        current += line
        if line.endswith("\\"):
            current += "\n"
            continue
        if current.strip() and not current.lstrip().startswith("#"):
            found.append(current)
        current = ""
    return found


BLOCKS = readme_blocks((REPO / "README.md").read_text(encoding="utf-8"))


def test_readme_parsing():
    """The parser sees what the README holds: continuations joined, comments dropped, indented blocks."""
    script = "a=1  # set\n# only a comment\nexampp x \\\n   --y $a   # end\n\nfor t in 1 2; do echo $t; done\n"
    assert commands(script) == ["a=1  # set", "exampp x \\\n   --y $a   # end", "for t in 1 2; do echo $t; done"]
    blocks = readme_blocks("# A\n```bash\nx\n```\n## B\n- item:\n\n  ```python\n  y = 1\n  ```\n```\nz\n```\n")
    assert blocks == [Block("bash", "A", "x\n"), Block("python", "B", "y = 1\n")]
    assert BLOCKS[0].lang == "bash" and any(b.lang == "python" for b in BLOCKS)
    assert sum(b.builds_dl19() for b in BLOCKS) == 1


@dataclass
class Ran:
    script: str
    returncode: int
    output: str

    def check(self) -> None:
        assert self.returncode == 0 and "Traceback (most recent call last)" not in self.output, (
            f"README commands failed (exit {self.returncode}):\n{self.script}\n--- output (end) ---\n"
            f"{self.output[-6000:]}")


class Sandbox:
    """The scratch repository and the environment its commands run in."""

    def __init__(self, root: Path):
        self.repo = root / "repo"
        for name in subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True,
                                   text=True).stdout.split("\0"):
            if name and (REPO / name).is_file():
                (self.repo / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO / name, self.repo / name)
        (self.repo / ".venv").symlink_to(sys.prefix, target_is_directory=True)
        self.has_shared = SHARED.is_dir()
        if self.has_shared:
            (root / "shared").symlink_to(SHARED.resolve(), target_is_directory=True)
        home = root / "home"
        home.mkdir()
        self.has_model = TOKENIZER.is_dir() and _importable("transformers")
        if self.has_model:
            from tiny_models import build_t5

            build_t5(home / "models" / "flan-t5-large", TOKENIZER)
        self.gpu = self.has_model and _cuda()
        self.env = {**os.environ, "HOME": str(home), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                    "MPLBACKEND": "Agg", "EXAMPP_SHARED": str(root / "shared"),
                    "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}

    def adapt(self, script: str) -> str:
        """The script with what this machine lacks stood in for, or left out (with a warning)."""
        kept = []
        for command in commands(script):
            if MODEL in command and not self.has_model:
                warnings.warn(f"left out (no {TOKENIZER} for the tiny model, or no transformers): {command}")
                continue
            kept.append(command if self.gpu else command.replace("--device cuda", "--device cpu"))
        return "\n".join(kept) + "\n"

    def run(self, block: Block, extra_env: dict[str, str] | None = None) -> Ran:
        target = block.file()
        if target is not None:  # a file the README adds to the package: write it, then check it imports
            (self.repo / target).write_text(block.code)
            module = target.removesuffix(".py").replace("/", ".")
            block = Block("python", block.heading, f"import {module}\n")
        script = self.adapt(block.code) if block.lang == "bash" else block.code
        argv = ["bash", "-euo", "pipefail", "-c", script] if block.lang == "bash" else [sys.executable, "-c", script]
        done = subprocess.run(argv, cwd=self.repo, env={**self.env, **(extra_env or {})}, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
        return Ran(script, done.returncode, done.stdout)


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Sandbox:
    if not (Path(sys.executable).parent / "exampp").exists():
        pytest.skip(f"exampp is not installed beside {sys.executable} (run scripts/setup.sh, then .venv/bin/python)")
    return Sandbox(tmp_path_factory.mktemp("readme"))


@pytest.fixture(scope="module")
def example(sandbox) -> Ran:
    """The README's first step, `bash scripts/example.sh`, with the set-up skipped."""
    first = commands(BLOCKS[0].code)[0]
    assert first.split("#")[0].split() == ["bash", "scripts/example.sh"]
    return sandbox.run(Block("bash", BLOCKS[0].heading, first), {"EXAMPP_SKIP_SETUP": "1"})


@pytest.fixture(scope="module")
def dl19(sandbox, example) -> Ran:
    """The worked example's block, which builds the DL19 workspace."""
    if not sandbox.has_shared:
        pytest.skip(f"reference data {SHARED} not found (set EXAMPP_SHARED to the shared/ folder)")
    return sandbox.run(next(b for b in BLOCKS if b.builds_dl19()))


def _block_param(index: int, block: Block):
    name = re.sub(r"[^a-z0-9]+", "-", block.heading.lower()).strip("-")[:40]
    marks = [pytest.mark.shared] if block.uses_shared() else []
    return pytest.param(index, block, id=f"{index:02d}-{block.lang}-{name}", marks=marks)


@pytest.mark.parametrize("index, block", [_block_param(i, b) for i, b in enumerate(BLOCKS)])
def test_readme_block(index, block, sandbox, example, request):
    example.check()
    if index == 0:  # the two commands at the top: set up and run the example; set up and test
        assert "0 new pairs" in example.output  # the same grading command again grades nothing
        second = commands(block.code)[1]
        assert second.startswith("bash scripts/setup.sh") and ".venv/bin/python -m pytest -q" in second
        return
    if block.uses_shared():
        request.getfixturevalue("dl19").check()  # skips without the reference data
        if block.builds_dl19():
            return
    sandbox.run(block).check()
