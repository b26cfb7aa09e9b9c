"""Progress bars on stderr: items/s and an ETA, shown only on a terminal (logs and pipes stay clean)."""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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


@contextmanager
def ticking(total: int, enabled: bool, *, unit: str, desc: str) -> Iterator[Callable[..., Any]]:
    """A function to call as each of ``total`` steps ends (``tick()``, or ``tick(n)``): it moves a
    bar as :func:`progress_bar` shows one, and does nothing where none is shown."""
    bar = progress_bar(total, enabled, unit=unit, desc=desc)
    try:
        yield bar.update if bar is not None else (lambda n=1: None)
    finally:
        if bar is not None:
            bar.close()
