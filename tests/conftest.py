"""Shared test fixtures: the reference data beside the project and small file builders."""
from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

# Fixtures tiny_t5_dir / tiny_causal_dir: tiny random-weight models saved like real ones.
pytest_plugins = ["tiny_models"]

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


def register_local_dataset(tmp_path, docs: str, queries: str, qrels: str | None = None) -> str:
    """An ir_datasets dataset over local TSV (and TREC qrels) files: the real load path without a download."""
    ir_datasets = pytest.importorskip("ir_datasets")
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries
    from ir_datasets.util import LocalDownload

    (tmp_path / "docs.tsv").write_text(docs, encoding="utf-8")
    (tmp_path / "queries.tsv").write_text(queries, encoding="utf-8")
    parts = [TsvDocs(LocalDownload(tmp_path / "docs.tsv")), TsvQueries(LocalDownload(tmp_path / "queries.tsv"))]
    if qrels is not None:
        (tmp_path / "qrels.txt").write_text(qrels, encoding="utf-8")
        parts.append(TrecQrels(LocalDownload(tmp_path / "qrels.txt"), {0: "not relevant", 1: "relevant"}))
    name = f"exampp-test/{uuid.uuid4().hex}"
    ir_datasets.registry.register(name, Dataset(*parts))
    return name
