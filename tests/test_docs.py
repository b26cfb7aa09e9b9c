"""The documentation's blocks that need no reference data run as written, in order, in one sandbox
(tests/docs_blocks.py says how); the parsers and the test command are checked here too. The blocks
that read the reference data are tests/test_docs_shared.py's."""
from __future__ import annotations

import pytest

from docs_blocks import (  # noqa: F401  (the blocks' fixtures)
    ALL_BLOCKS,
    BLOCKS,
    PAGES,
    README,
    Block,
    block_params,
    ci_test_command,
    commands,
    distinct,
    example,
    markdown_blocks,
    nav_pages,
    run_block,
    sandbox,
    shown_mismatch,
)

pytestmark = pytest.mark.slow


def test_parsing():
    """The parsers see what the pages hold: continuations joined, comments dropped, indented blocks, the nav."""
    script = "a=1  # set\n# only a comment\nexampp x \\\n   --y $a   # end\n\nfor t in 1 2; do echo $t; done\n"
    assert commands(script) == ["a=1  # set", "exampp x \\\n   --y $a   # end", "for t in 1 2; do echo $t; done"]
    blocks = markdown_blocks("# A\n```bash\nx\n```\n## B\n- item:\n\n  ```python\n  y = 1\n  ```\n```\nz\n```\n", "p")
    assert blocks == [Block("bash", "A", "x\n", "p"), Block("python", "B", "y = 1\n", "p")]
    nav = ("site_name: x\nnav:\n  - Home: index.md\n  - Tutorials:\n      - tutorials/a.md\n      - B c: b.md\n"
           "plugins:\n  - x.md\n")
    assert nav_pages(nav) == ["index.md", "tutorials/a.md", "b.md"]
    assert PAGES[0] == README and "docs/index.md" in PAGES and len(PAGES) == len(set(PAGES))
    assert BLOCKS[0].page == README and BLOCKS[0].sets_up() and any(b.lang == "python" for b in BLOCKS)
    assert sum(b.builds_dl19() for b in BLOCKS) == 1
    twice = Block("bash", "A", "x\n", "p")
    assert distinct([twice, Block("bash", "B", "x\n", "q"), Block("python", "B", "x\n", "q")]) == [
        twice, Block("python", "B", "x\n", "q")]


def test_a_page_is_one_terminal_session():
    """A block starts in the folder the page's earlier ``cd DIR`` commands left it in, from the repository
    root; the same block in another folder is another block."""
    page = ("```bash\nbash scripts/example.sh\ncd examples   # the workspace\n```\n```python\nx = 1\n```\n"
            "```bash\nexampp x\ncd ..\n```\n```bash\nexampp x\ncd out/dl19 && ls\n```\n")
    blocks = markdown_blocks(page)
    assert [b.cwd for b in blocks] == [".", "examples", "examples", "."]  # `cd out/dl19 && ls` moves only itself
    assert distinct(blocks) == blocks
    assert {b.cwd for b in BLOCKS} == {".", "examples"}  # the repository root, and the example collection's workspace


def test_a_bash_block_takes_the_output_shown_right_after_it():
    page = "```bash\nexampp x\n```\n\n```\nout 1\n```\n```bash\ny\n```\nIt prints:\n```text\nnot taken\n```\n"
    assert markdown_blocks(page) == [Block("bash", "", "exampp x\n", shown="out 1\n"), Block("bash", "", "y\n")]


def test_shown_output_is_compared_line_by_line_with_timings_normalised():
    printed = ("warning: left out\n2616 pairs: 2616 new pairs graded in 3.4 s (770.1 pairs/s), 0 reused\n"
               "judge: 290 texts encoded\nrun\tmean\nbm25\t0.763888888889\nweak\t0.458333333333\n")
    shown = "2616 pairs: 2616 new pairs graded in 28.1 s (93.0 pairs/s), 0 reused\njudge: 290 texts encoded\n"
    assert shown_mismatch(shown + "run\tmean\n(... the other runs)\nweak\t0.458333333333\n", printed) is None
    assert shown_mismatch("judge: ... texts encoded\n", printed) is None  # ... within a line: text that varies
    assert shown_mismatch('{"date": "2026-11-23T16:08:05Z"}', '{"date": "2027-01-02T03:04:05Z"}\n') is None
    # the drift the own-track tutorial had: another count than the command prints, and 16 digits for 12
    assert "judge: 1412 requests" in shown_mismatch("judge: 1412 requests\n", printed)
    assert shown_mismatch("bm25\t0.7638888888888889\n", printed) is not None
    assert shown_mismatch("weak\t0.458333333333\nbm25\t0.763888888889\n", printed) is not None  # order counts


def test_the_docs_keep_the_progress_of_long_steps_in_view():
    """A long step (grading, generating, the meta-evaluation) shows its progress, in a log a line every 10 s:
    the pages pass --no-progress only where the output is cut to a few lines by a pipe."""
    hidden = [command for block in ALL_BLOCKS if block.lang == "bash" for command in commands(block.code)
              if "--no-progress" in command and "|" not in command]
    assert hidden == []


def test_the_test_command_is_ci_s():
    """Every page's set-up-and-test command is the one .ci/run runs: the same extras (docs included)."""
    ci = ci_test_command()
    assert "docs" in ci.split()[2].split(",")
    checked = [b for b in ALL_BLOCKS if b.sets_up()]
    assert {b.page for b in checked} >= {README, "docs/index.md", "docs/tutorials/example-collection.md"}
    for block in checked:
        assert commands(block.code)[1].split("#")[0].strip() == ci, block.page


@pytest.mark.parametrize("index, block", block_params(shared=False))
def test_docs_block(index, block, sandbox, example, request):
    run_block(block, sandbox, example, request)
