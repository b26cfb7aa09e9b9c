"""A wrong --corpus does not empty the qrels: when pooled passages the store holds grades for have no text
in the corpus given, ``exampp grade`` refuses (one line, nothing written) unless --allow-partial asks for
qrels over the passages that have one. Pooled passages never graded keep the warning they had."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FAKE = TESTS / "fake_grader.py"


def grade(workspace: Path, *args: str) -> subprocess.CompletedProcess:
    # PYTHONPATH: the script's folder comes first on its path, and this checkout's exampp must come next
    return subprocess.run([sys.executable, str(FAKE), "grade", str(EXAMPLES / "runs"),
                           "--config", str(EXAMPLES / "exampp.toml"), "--grader", "fake", "-w", str(workspace),
                           "--no-progress", "-o", str(workspace / "board.txt"),
                           *args], capture_output=True, text=True, check=False,
                           env={**os.environ, "PYTHONPATH": str(REPO)})


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    workspace = tmp_path_factory.mktemp("ws")
    done = grade(workspace)
    assert done.returncode == 0, done.stderr
    assert len((workspace / "qrels" / "exam.qrels").read_text().splitlines()) == 218
    return workspace


def one_passage_corpus(folder: Path) -> Path:
    with open(EXAMPLES / "corpus" / "passages.jsonl") as fh:
        first = json.loads(fh.readline())
    assert first["docid"] == "d-Q1-001"
    corpus = folder / "one.jsonl"
    corpus.write_text(json.dumps(first) + "\n")
    return corpus


@pytest.mark.slow
def test_a_corpus_lacking_graded_passages_is_refused_and_the_qrels_stay(graded: Path, tmp_path: Path):
    exam_qrels = graded / "qrels" / "exam.qrels"
    good = exam_qrels.read_text()
    (graded / "board.txt").unlink(missing_ok=True)
    done = grade(graded, "--corpus", str(one_passage_corpus(tmp_path)))
    assert (done.returncode, done.stderr) == (1, (
        "Error: 217 of the 218 pooled passages have no text in the corpus, and the store holds grades of 217 of "
        "them (first: Q1:d-Q1-002): the qrels would lose their labels; give the corpus they were graded with, or "
        "--allow-partial to write qrels over the 1 passage with a text; no output written\n"))
    assert exam_qrels.read_text() == good
    assert not (graded / "board.txt").exists()


@pytest.mark.slow
def test_allow_partial_writes_the_qrels_of_the_passages_with_a_text(graded: Path, tmp_path: Path):
    copy = tmp_path / "ws"
    shutil.copytree(graded, copy)
    done = grade(copy, "--corpus", str(one_passage_corpus(tmp_path)), "--allow-partial")
    assert done.returncode == 0, done.stderr
    assert "warning: 217 pooled passages have no text in the corpus and are skipped" in done.stderr
    assert [line.split()[:3] for line in (copy / "qrels" / "exam.qrels").read_text().splitlines()] == \
        [["Q1", "0", "d-Q1-001"]]


@pytest.mark.slow
def test_a_fresh_store_with_an_incomplete_corpus_only_warns(tmp_path: Path):
    done = grade(tmp_path / "ws", "--corpus", str(one_passage_corpus(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert "warning: 217 pooled passages have no text in the corpus and are skipped" in done.stderr
