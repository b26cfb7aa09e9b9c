"""The documentation runs as written: every ```bash and ```python block of README.md and of every page
of the site (mkdocs.yml's nav, in its order), each block once, in order. The machinery, for the two
test modules that run the blocks:

- tests/test_docs.py: the blocks that need no reference data, in order, in one sandbox;
- tests/test_docs_shared.py: the blocks that read the reference data (``../shared``) or the DL19
  workspace built from it (``out/dl19``), in order, in a sandbox of their own, after the same
  set-up (``bash scripts/example.sh``).

The halves are independent by construction: without the reference data the second is skipped and
the first must pass alone. Two modules, so that ``pytest -n`` (pytest-xdist, ``--dist loadfile``)
runs them side by side.

The blocks run in a scratch copy of the repository (its git-tracked files under ``tmp/repo``, with
``tmp/shared`` linking to the reference data when there is any, so that ``../shared`` works) with
this virtualenv's bin first on PATH: bash blocks with ``bash -euo pipefail -c``, python blocks with
this virtualenv's python. A page's blocks are one terminal session: each starts in the folder the
page's earlier blocks left it in, the repository root at first, and a command ``cd DIR`` alone on its
line moves it for the rest of the page (the pages on the example collection begin with ``cd examples``,
its workspace). A block passes when it exits 0, prints no Python traceback and prints what
the page shows it printing: a bare (or ```text) block right after a ```bash block, with nothing but
blank lines between, is that block's output as shown (:func:`shown_mismatch` says how it is compared:
each line shown must be printed, in order; timings, rates and times of day are normalised; a line ``...`` or
``(... words)`` stands for lines left out, ``...`` within a line for text that varies). A python
block whose first line is ``# exampp/<path>.py`` is a file the docs add to the package (the
"Extending exampp" examples): it is written there in the scratch copy and must import. Blocks
shown but not run (they need a server, a GPU or a key) are fenced ```sh or ```text.

``EXAMPP_DOCS_README`` names another file to take README.md's place (a draft of it); it is read
as the first page.

What this machine may lack is stood in for:

- The set-up. A block whose first command is ``bash scripts/example.sh`` (README's and the
  tutorial's) is that command with ``EXAMPP_SKIP_SETUP=1`` and this virtualenv linked as
  ``.venv``, run once; the set-up-and-test command beside it is what CI itself runs (.ci/run), so it
  is only checked to be the same command with the same extras.
- FLAN-T5-large. HOME is a scratch folder whose ``models/flan-t5-large`` is a tiny random-weight
  FLAN-T5-shaped model (exampp/testing/tiny_models.py), so ``--model ~/models/flan-t5-large`` loads offline;
  HF_HUB_OFFLINE=1 keeps the hub from being tried. It answers as FLAN-T5 answers a grading prompt,
  one short token (a grade, yes or no) and end-of-sequence (``make_rater``): a random model would
  decode to the length limit every time.
- A GPU. ``--device cuda`` becomes ``--device cpu`` when torch sees none.

Without the reference data, commands that load the tiny model (its tokenizer lies in
``../shared``) are left out of their block, with a warning. Pages may use ``out/dl19`` before the
tutorial that builds it: the ``dl19`` fixture runs that tutorial's block once, before the first of
them.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from conftest import REPO, SHARED

TIMEOUT = 3600  # a guard against a hang, not a speed check: a loaded machine runs a block 10x slower
DL19_WORKSPACE = "out/dl19"
MODEL = "~/models/flan-t5-large"
TOKENIZER = SHARED / "models" / "t5-tokenizer"
README = os.environ.get("EXAMPP_DOCS_README", "README.md")
# What the stand-in for FLAN-T5-large answers (T5 tokenizer pieces; "0" is a piece of its own), and
# the prompts it is fitted on (any prompt gets one of the answers; these decide which).
RATER_ANSWERS = ("0", "▁1", "▁2", "▁3", "▁4", "▁5", "▁no", "▁yes")
RATER_PROMPTS = [f"Can the question be answered based on the available context? choose one: 0 1 2 3 4 5. "
                 f"Context: {context} Question: {question}"
                 for context in ("Green tea comes from Camellia sinensis.", "The engine has four strokes.",
                                 "Bread rises with yeast.", "Apollo 11 landed on the Moon in 1969.")
                 for question in ("Which plant?", "How many strokes?", "When did it land?")]


@dataclass(frozen=True)
class Block:
    lang: str  # bash or python
    heading: str  # the section it is in
    code: str
    page: str = ""  # the file it comes from, relative to the repository
    shown: str | None = None  # the output the page shows right after the block, when it shows one
    cwd: str = "."  # the folder it starts in, relative to the repository: see :func:`markdown_blocks`

    def uses_shared(self) -> bool:
        return "../shared" in self.code or DL19_WORKSPACE in self.code

    def builds_dl19(self) -> bool:
        return f"--workspace {DL19_WORKSPACE}" in self.code

    def sets_up(self) -> bool:
        """The block of the two commands at the top: set up and run the example; set up and test."""
        found = commands(self.code) if self.lang == "bash" else []
        return bool(found) and found[0].split("#")[0].split() == ["bash", "scripts/example.sh"]

    def file(self) -> str | None:
        """The package file a python block is, when its first line names one (``# exampp/.../x.py``)."""
        match = re.fullmatch(r"# (exampp/[\w/]+\.py)", self.code.split("\n", 1)[0]) if self.lang == "python" else None
        return match.group(1) if match else None


def markdown_blocks(text: str, page: str = "") -> list[Block]:
    """The ```bash and ```python blocks of a Markdown text (indented ones in list items too), each
    bash block with the output shown right after it (a bare or ```text block, blank lines between),
    each block with the folder it starts in: where the commands ``cd DIR`` of the blocks before it
    moved, from the repository root."""
    blocks, heading, fence, lines, cwd = [], "", None, [], "."
    after_bash = False  # nothing but blank lines since a bash block ended
    for line in text.splitlines():
        stripped = line.strip()
        if fence is None:
            if stripped.startswith("```"):
                fence, lines = (stripped[3:], len(line) - len(line.lstrip())), []
            elif stripped:
                after_bash = False
                if stripped.startswith("#"):
                    heading = stripped.lstrip("#").strip()
        elif stripped == "```":
            lang, indent = fence
            code = "\n".join(line[indent:] for line in lines) + "\n"
            if lang in ("bash", "python"):
                blocks.append(Block(lang, heading, code, page, cwd=cwd))
                cwd = moved(cwd, code) if lang == "bash" else cwd
            elif lang in ("", "text") and after_bash:
                blocks[-1] = replace(blocks[-1], shown=code)
            after_bash = lang == "bash"
            fence = None
        else:
            lines.append(line)
    return blocks


# Figures that vary from run to run, the same in what is shown and what is printed: seconds, rates, times of day.
_VARYING = [(re.compile(r"\b\d+(?:\.\d+)? s\b"), "<seconds> s"),
            (re.compile(r"\b\d+(?:\.\d+)? (\w+)/s\b"), r"<rate> \1/s"),
            (re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z"), "<UTC time>")]
_LEFT_OUT = re.compile(r"\.\.\.|\(\.\.\..*\)")  # a shown line standing for printed lines not shown


def _normalised(line: str) -> str:
    for pattern, replacement in _VARYING:
        line = pattern.sub(replacement, line)
    return line.rstrip()


def shown_mismatch(shown: str, printed: str) -> str | None:
    """None when every line of ``shown`` is a line of ``printed``, in the same order (printed lines
    between them, and around, are allowed: warnings, progress); else what was not found. Seconds,
    rates and UTC times (``in 28.1 s``, ``93.0 pairs/s``, ``2026-11-23T16:08:05Z``) are normalised on
    both sides; a shown line ``...`` or ``(... words)`` is skipped, and ``...`` within a line matches
    any text."""
    lines = [_normalised(line) for line in printed.splitlines()]
    at = 0
    for line in shown.splitlines():
        if not line.strip() or _LEFT_OUT.fullmatch(line.strip()):
            continue
        wanted = re.compile(".*".join(map(re.escape, _normalised(line).split("..."))))
        found = next((i for i in range(at, len(lines)) if wanted.fullmatch(lines[i])), None)
        if found is None:
            return f"shown but not printed (after printed line {at}): {line!r}"
        at = found + 1
    return None


def nav_pages(mkdocs_yml: str) -> list[str]:
    """The pages of mkdocs.yml's nav, in order (``- page.md`` or ``- Title: page.md`` under ``nav:``)."""
    pages, in_nav = [], False
    for line in mkdocs_yml.splitlines():
        if not line.startswith((" ", "-")):
            in_nav = line.startswith("nav:")
        elif in_nav and (match := re.fullmatch(r"\s*- (?:[^:]+: )?(\S+\.md)\s*", line)):
            pages.append(match.group(1))
    return pages


def moved(cwd: str, script: str) -> str:
    """The folder a bash script started in ``cwd`` ends in, for its commands ``cd DIR`` (relative
    folders, one command alone on its line)."""
    for command in commands(script):
        if match := re.fullmatch(r"cd (\S+)", command.split("#")[0].strip()):
            cwd = os.path.normpath(os.path.join(cwd, match.group(1)))
    return cwd


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


PAGES = [README] + [f"docs/{page}" for page in nav_pages((REPO / "mkdocs.yml").read_text(encoding="utf-8"))]


def distinct(blocks: list[Block]) -> list[Block]:
    """Each block once: a block that repeats an earlier one (the README's tour, a page's), in the same folder,
    is run where it first comes."""
    seen: set[tuple[str, str, str]] = set()
    return [b for b in blocks if (b.lang, b.code, b.cwd) not in seen and not seen.add((b.lang, b.code, b.cwd))]


ALL_BLOCKS = [block for page in PAGES for block in markdown_blocks((REPO / page).read_text(encoding="utf-8"), page)]
BLOCKS = distinct(ALL_BLOCKS)


def ci_test_command() -> str:
    """The set-up-and-test command .ci/run runs (in stages), less the flags CI adds to pytest."""
    line = next(line for line in (REPO / ".ci" / "run").read_text().splitlines()
                if line.startswith("readme_test_command="))
    return line.partition("=")[2].strip('"').replace(" -p no:cacheprovider", "")


@dataclass
class Ran:
    script: str
    returncode: int
    output: str

    def check(self, shown: str | None = None) -> None:
        assert self.returncode == 0 and "Traceback (most recent call last)" not in self.output, (
            f"the docs' commands failed (exit {self.returncode}):\n{self.script}\n--- output (end) ---\n"
            f"{self.output[-6000:]}")
        problem = shown_mismatch(shown, self.output) if shown is not None else None
        assert problem is None, (f"the page shows another output than the commands print: {problem}\n{self.script}"
                                 f"\n--- printed (end) ---\n{self.output[-6000:]}")


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
            from exampp.testing.tiny_models import build_t5, save_rater

            save_rater(build_t5(root / "tiny-t5", TOKENIZER), home / "models" / "flan-t5-large", RATER_PROMPTS,
                       RATER_ANSWERS)
        self.gpu = self.has_model and _cuda()
        # PYTHONPATH: the `exampp` command runs the scratch copy's package, as `python -c` does, whichever
        # checkout the virtualenv was installed from (a git worktree shares its main checkout's).
        self.env = {**os.environ, "HOME": str(home), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                    "MPLBACKEND": "Agg", "EXAMPP_SHARED": str(root / "shared"), "PYTHONPATH": str(self.repo),
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
        if target is not None:  # a file the docs add to the package: write it, then check it imports
            (self.repo / target).write_text(block.code)
            module = target.removesuffix(".py").replace("/", ".")
            block = replace(block, code=f"import {module}\n")
        script = self.adapt(block.code) if block.lang == "bash" else block.code
        argv = ["bash", "-euo", "pipefail", "-c", script] if block.lang == "bash" else [sys.executable, "-c", script]
        done = subprocess.run(argv, cwd=self.repo / block.cwd, env={**self.env, **(extra_env or {})},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
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
    return Sandbox(tmp_path_factory.mktemp("docs"))


@pytest.fixture(scope="module")
def example(sandbox) -> Ran:
    """The first step, `bash scripts/example.sh`, with the set-up skipped."""
    first = next(b for b in BLOCKS if b.sets_up())
    return sandbox.run(replace(first, code=commands(first.code)[0]), {"EXAMPP_SKIP_SETUP": "1"})


@pytest.fixture(scope="module")
def dl19(sandbox, example) -> Ran:
    """The DL19 tutorial's block, which builds the DL19 workspace."""
    if not sandbox.has_shared:
        pytest.skip(f"reference data {SHARED} not found (set EXAMPP_SHARED to the shared/ folder)")
    return sandbox.run(next(b for b in BLOCKS if b.builds_dl19()))


def _block_param(index: int, block: Block):
    name = re.sub(r"[^a-z0-9]+", "-", f"{Path(block.page).stem} {block.heading}".lower()).strip("-")[:50]
    return pytest.param(index, block, id=f"{index:03d}-{block.lang}-{name}")


def run_block(block: Block, sandbox: Sandbox, example: Ran, request) -> None:
    """The test of one block: the set-up passed, then the block passes (the DL19 workspace built first
    for a block that reads it)."""
    example.check()
    if block.sets_up():  # run once by the example fixture; the test command is test_the_test_command_is_ci_s's
        assert "0 new pairs" in example.output  # the same grading command again grades nothing
        return
    if block.uses_shared():
        request.getfixturevalue("dl19").check()  # skips without the reference data
        if block.builds_dl19():
            return
    sandbox.run(block).check(block.shown)


def block_params(shared: bool) -> list:
    """The parameters of the blocks that read the reference data (``shared``) or of the others, each
    with its index among all blocks."""
    return [_block_param(i, b) for i, b in enumerate(BLOCKS) if b.uses_shared() == shared]
