"""Shared test fixtures: the reference data beside the project and small file builders."""
from __future__ import annotations

import ipaddress
import json
import os
import socket
import uuid
from pathlib import Path

import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    # pytest -n: the workers share the cores. One thread each for torch's and BLAS' kernels, here and in
    # the commands the tests start (set before torch loads): more would only spin waiting for a core.
    for _variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_variable, "1")

# Fixtures tiny_t5_dir / tiny_causal_dir: tiny random-weight models saved like real ones; browser: headless Chromium.
pytest_plugins = ["tiny_model_dirs", "chromium"]

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"  # the example collection, a workspace
SHARED = Path(os.environ.get("EXAMPP_SHARED", REPO.parent / "shared"))
# Importing autojudge_base downloads NLTK data it does not find; offline it fails. A stand-in it finds, here and in
# the commands the tests start (tests/data/nltk_stub/README.md).
os.environ.setdefault("NLTK_DATA", str(REPO / "tests" / "data" / "nltk_stub"))


# The longest test files, started first: ``pytest -n auto --dist loadfile`` hands whole files to its
# workers in collection order, and the two halves of the documentation's blocks take minutes each (so
# does mypy on the package, without its cache).
FIRST = ("tests/test_docs_shared.py", "tests/test_docs.py", "tests/test_ray_engine.py", "tests/test_typecheck.py",
         "tests/test_batch_api.py")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: a worker more than there are cores. Many tests wait (on a loopback server, a subprocess,
    a time-out, Ray's start), and each worker runs one thread, so a third worker keeps two cores busy
    (on 2 cores the suite took 481 s with 3 workers, 531 s with 2)."""
    return len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    order = {path: rank for rank, path in enumerate(FIRST)}
    items.sort(key=lambda item: order.get(item.nodeid.split("::")[0], len(FIRST)))  # stable: the rest as collected


@pytest.fixture(autouse=True)
def _no_progress_lines(monkeypatch):
    """Where stderr is not a terminal, a step longer than 10 s prints a progress line: a test slowed by a
    loaded machine would find one in the output it compares. Tests of those lines set the interval."""
    from exampp import progress

    monkeypatch.setattr(progress, "LOG_EVERY", float("inf"))


def load_module(path: Path, name: str):
    """The Python file at ``path`` (a script, a docs hook: not in a package) imported as module ``name``."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def load_benchmark(name: str):
    """A script of benchmarks/ (``name`` without .py) imported as a module, for its functions."""
    import sys

    folder = str(REPO / "benchmarks")
    if folder not in sys.path:  # the scripts import each other, as when run from that folder
        sys.path.append(folder)
    return load_module(REPO / "benchmarks" / f"{name}.py", f"benchmark_{name}")


def jsonl(*records) -> str:
    """JSONL text, a line per record (a string is taken as the line as it is)."""
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def shared_path(*parts: str) -> Path:
    """Path under the shared reference data; skips the test (with the reason) when absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"reference data {path} not found (set EXAMPP_SHARED to the shared/ folder)")
    return path


@pytest.fixture(scope="session")
def dl19_workspace(tmp_path_factory) -> Path:
    """The TREC DL 2019 reference data imported into a workspace (``exampp import``), once per session."""
    from click.testing import CliRunner

    from exampp.cli import main

    ws = tmp_path_factory.mktemp("dl19")
    data = shared_path("data", "dl19")
    result = CliRunner().invoke(main, ["import",
                                       str(data / "DL19-graded-t5-rating-genq-exam-qrels-runs-with-text.jsonl.gz"),
                                       "--workspace", str(ws), "--questions", str(data / "dl19-genq.jsonl.gz")])
    assert result.exit_code == 0, result.output
    return ws


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


CLOSED_PORT = "http://127.0.0.1:9"  # discard port: nothing listens, a connect is refused at once


def _loopback(host) -> bool:
    if host in (None, "localhost", b"localhost"):
        return True
    try:
        return ipaddress.ip_address(host.decode() if isinstance(host, bytes) else host).is_loopback
    except ValueError:  # a name other than localhost
        return False


@pytest.fixture
def unreachable_hub(tmp_path: Path, monkeypatch) -> Path:
    """The HuggingFace hub out of reach, as on a machine without network; returns the (empty) HF cache.

    HF_ENDPOINT is a closed loopback port, no proxy or offline variable is set, huggingface_hub's cache
    is a fresh folder, and any connection or name lookup beyond loopback fails in the test.
    """
    constants = pytest.importorskip("huggingface_hub.constants")
    for variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY",
                     "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", CLOSED_PORT)
    cache = tmp_path / "hf-cache"
    cache.mkdir()
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    connect, getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def loopback_connect(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address[0]):
            raise ConnectionRefusedError(f"test guard: no connection to {address[0]}")
        return connect(sock, address)

    def loopback_getaddrinfo(host, *args, **kwargs):
        if not _loopback(host):
            raise socket.gaierror(socket.EAI_NONAME, f"test guard: no lookup of {host}")
        return getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", loopback_connect)
    monkeypatch.setattr(socket, "getaddrinfo", loopback_getaddrinfo)
    return cache


def cache_model(cache: Path, repo_id: str, folder: Path) -> None:
    """Put the files of model ``folder`` into HF cache ``cache`` as hub model ``repo_id`` (linked, as the
    hub's downloads are)."""
    commit = "0" * 40
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / commit
    for path in folder.rglob("*"):
        if path.is_file():
            target = snapshot / path.relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(path)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)


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
