"""A small collection written as files: runs, a JSONL corpus and a question bank, for tests that
grade through the command line."""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path


def write_collection(ws: Path, runs: Mapping[str, Mapping[str, list[str]]], passages: Mapping[str, str],
                     questions: Iterable[Mapping]) -> Path:
    """``ws/runs/NAME.run`` per run (scores 10 - rank), ``ws/passages.jsonl`` and
    ``ws/questions.jsonl`` (one JSON object per question, as given); returns ``ws``."""
    (ws / "runs").mkdir()
    for run, ranking in runs.items():
        lines = [f"{qid} Q0 {pid} {rank} {10 - rank} {run}" for qid, pids in ranking.items()
                 for rank, pid in enumerate(pids, start=1)]
        (ws / "runs" / f"{run}.run").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (ws / "passages.jsonl").write_text(
        "".join(json.dumps({"docid": pid, "text": text}) + "\n" for pid, text in passages.items()), encoding="utf-8")
    (ws / "questions.jsonl").write_text("".join(json.dumps(dict(q)) + "\n" for q in questions), encoding="utf-8")
    return ws
