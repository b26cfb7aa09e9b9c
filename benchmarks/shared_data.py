"""Where the benchmarks find the reference data: ``$EXAMPP_SHARED``, else ``shared/`` beside the repository
(as the tests do), and the real T5 tokenizer the tiny models are given."""
from __future__ import annotations

import os
import sys
from pathlib import Path

SHARED = Path(os.environ.get("EXAMPP_SHARED", Path(__file__).resolve().parents[1].parent / "shared"))
TOKENIZER = SHARED / "models" / "t5-tokenizer"


def tokenizer() -> Path:
    """The T5 tokenizer's folder; the script exits saying where it looked when it is not there."""
    if not TOKENIZER.exists():
        sys.exit(f"error: the T5 tokenizer {TOKENIZER} is not found (set EXAMPP_SHARED to the shared/ folder)")
    return TOKENIZER
