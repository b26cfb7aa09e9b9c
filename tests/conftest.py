"""Shared test fixtures: the reference data beside the project and small file builders."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("EXAMPP_SHARED", REPO.parent / "shared"))


def shared_path(*parts: str) -> Path:
    """Path under the shared reference data; skips the test (with the reason) when absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"reference data {path} not found (set EXAMPP_SHARED to the shared/ folder)")
    return path


@pytest.fixture
def write(tmp_path: Path):
    """write(name, text) -> Path: a file under tmp_path with the given text."""

    def _write(name: str, text: str | bytes) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    return _write
