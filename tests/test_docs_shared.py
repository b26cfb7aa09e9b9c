"""The documentation's blocks that read the reference data (``../shared``) or the DL19 workspace built
from it run as written, in order, in a sandbox of their own after the example collection's set-up
(tests/docs_blocks.py says how); skipped without the reference data."""
from __future__ import annotations

import pytest

from docs_blocks import block_params, dl19, example, run_block, sandbox  # noqa: F401  (the blocks' fixtures)

pytestmark = [pytest.mark.slow, pytest.mark.shared]


@pytest.mark.parametrize("index, block", block_params(shared=True))
def test_docs_block(index, block, sandbox, example, request):
    run_block(block, sandbox, example, request)
