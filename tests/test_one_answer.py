"""One workspace gives one answer: grading RAG answers into a workspace's store (``exampp grade
--responses``) changes no figure read from the runs' EXAM labels, in whichever order the commands
run. The answers' labels go to ``qrels/responses.qrels`` and are exported with ``--responses``."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import EXAMPLES
from exampp.cli import main
from exampp.segment import is_segment_id

REPO = Path(__file__).resolve().parent.parent
ANSWERS = "responses/rag-answers.jsonl"


def run(ws: Path, *args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def figures(ws: Path) -> dict[str, str]:
    """What the README's commands print or write from the runs' EXAM labels."""
    out = ws / "out"
    out.mkdir(exist_ok=True)
    run(ws, "qrels", "-w", str(ws), "--method", "embedding", "--label", "count", "-o", str(out / "count.qrels"))
    run(ws, "qrels", "-w", str(ws), "--method", "embedding", "--per-question", "-o", str(out / "questions.qrels"))
    board = run(ws, "leaderboard", str(ws / "runs"), "--qrels", str(out / "count.qrels"), "-m", "nDCG@10",
                "--format", "tsv")
    meta = run(ws, "meta-evaluate", "-w", str(ws), "--method", "embedding", "--family", "qrels", "--label", "max",
               "--bootstrap", "20", "--format", "tsv", "--no-progress")
    review = run(ws, "bank", "review", "-w", str(ws), "--method", "embedding", "--out", str(out / "review"))
    return {"count.qrels": (out / "count.qrels").read_text(), "questions.qrels": (out / "questions.qrels").read_text(),
            "leaderboard": board, "meta-evaluate": meta, "review": review,
            "exam.qrels": (ws / "qrels" / "exam.qrels").read_text()}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    ws = tmp_path_factory.mktemp("one") / "ws"
    for folder in ("runs", "corpus", "topics", "question_banks", "qrels", "responses"):
        shutil.copytree(EXAMPLES / folder, ws / folder,
                        ignore=shutil.ignore_patterns("exam*.qrels", "questions.qrels*"))
    shutil.copy(EXAMPLES / "exampp.toml", ws / "exampp.toml")
    return ws


@pytest.mark.slow
def test_grading_answers_changes_nothing_read_from_the_runs_labels_in_either_order(workspace, monkeypatch):
    monkeypatch.chdir(workspace)
    run(workspace, "grade", "runs/", "--no-progress")
    before = figures(workspace)
    run(workspace, "grade", "runs/", "--responses", ANSWERS, "--no-progress")
    after = figures(workspace)
    assert after == before
    # and graded again without the answers, the runs' qrels are the same bytes
    run(workspace, "grade", "runs/", "--no-progress")
    assert (workspace / "qrels" / "exam.qrels").read_text() == before["exam.qrels"]
    assert len(before["exam.qrels"].splitlines()) == 218  # the README's figure


@pytest.mark.slow
def test_the_answers_labels_are_their_own_file_and_the_export_names_what_it_left_out(workspace, monkeypatch):
    monkeypatch.chdir(workspace)
    graded = CliRunner().invoke(main, ["grade", "runs/", "--responses", ANSWERS, "--no-progress"])
    assert graded.exit_code == 0, graded.output
    assert "wrote 218 labels for 6 queries to qrels/exam.qrels (the runs' passages)" in graded.stderr
    assert "wrote 23 labels for 6 queries to qrels/responses.qrels (the answers' passages)" in graded.stderr
    answers = (workspace / "qrels" / "responses.qrels").read_text().splitlines()
    assert len(answers) == 23 and all(is_segment_id(line.split()[0], line.split()[2]) for line in answers)
    exported = CliRunner().invoke(main, ["qrels", "--method", "embedding", "--responses", ANSWERS, "-o", "-"])
    assert exported.exit_code == 0 and exported.stdout.splitlines() == answers
    assert exported.stderr.splitlines()[0] == (
        f"EXAM labels of the answers of {ANSWERS}: 218 graded passages left out (the runs' passages)")
    runs_only = CliRunner().invoke(main, ["qrels", "--method", "embedding", "-o", "-"])
    assert runs_only.stderr.splitlines()[0] == (
        "EXAM labels of the runs: 23 graded passages left out (passages of answers graded with --responses: give "
        "--responses FILE for theirs)")


@pytest.mark.parametrize("query_id, passage_id, answer", [
    ("Q1", "rag-brief:Q1:1:0a1b2c3d", True),
    ("Q1", "team:x:Q1:12:ffffffff", True),  # a run id may hold colons
    ("Q1", "rag-brief:Q2:1:0a1b2c3d", False),  # another query's answer
    ("Q1", "d-Q1-003", False),
    ("Q1", "Q1:1:0a1b2c3d", False),  # no run id
    ("Q1", "rag:Q1:0:0a1b2c3d", False),  # positions start at 1
    ("Q1", "rag:Q1:1:0A1B2C3D", False),  # md5 in lower case
])
def test_answer_passages_are_told_by_their_ids(query_id, passage_id, answer):
    assert is_segment_id(query_id, passage_id) is answer
