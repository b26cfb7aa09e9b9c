"""Progress bars on stderr: items/s and an ETA, shown only on a terminal (logs and pipes stay clean)."""
from __future__ import annotations

import sys
from typing import Any


def progress_bar(total: int, enabled: bool, *, unit: str, desc: str) -> Any:
    """A tqdm bar on stderr when wanted and possible (a terminal, tqdm installed), else None."""
    if not enabled or total == 0 or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit=unit, desc=desc, file=sys.stderr, dynamic_ncols=True)
