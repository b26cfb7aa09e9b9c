"""The embedding backend's cache of embeddings: grading with it against grading without it.

    python benchmarks/embedding_cache.py [--rag ../shared/data/rag24]

Grades the example collection shipped here (2,180 question–passage pairs) and, with ``--rag``, the
TREC 2024 RAG answers against their nuggets (15,518 pairs, as the RAG tutorial grades them), each
twice in a fresh workspace: with the backend's cache (the default) and with ``cache_size=0``, the
way every chunk of pairs was embedded before the cache (each question again in every chunk). Prints
the seconds, the texts the model encoded and the ratio, whether the two give the same grades, and
how many shown cosines (4 decimals) differ: an embedding's last float bits depend on the batch it
was encoded in, which the cache changes. One process, the model loaded before the clock starts.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from exampp.api.grade import GradeJob

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"  # the example collection, a workspace


def grade(settings: dict, cache_size: int | None) -> tuple[float, int, object]:
    """Seconds, texts encoded and the grades of one grading in a fresh workspace."""
    with tempfile.TemporaryDirectory() as folder:
        job = GradeJob.configure(workspace=folder, grader="embedding", progress=False, **settings)
        with job.open() as opened:
            backend = opened.grader.backend
            backend.model  # loaded before the clock starts
            if cache_size is not None:
                backend.cache_size = cache_size
            start = time.perf_counter()
            result = opened.grade(opened.bank)
            return time.perf_counter() - start, backend.usage.requests, result.grades


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rag", type=Path, help="the TREC 2024 RAG data folder (../shared/data/rag24)")
    args = parser.parse_args()
    cases = {"example collection": {"config": EXAMPLES / "exampp.toml", "runs": (str(EXAMPLES / "runs"),),
                                    "corpus": str(EXAMPLES / "corpus" / "passages.jsonl")}}
    if args.rag is not None:
        answers = str(args.rag / "nugget-assignments.dev.jsonl.gz")
        cases["RAG 2024 answers"] = {"responses": answers, "bank": answers}
    print(f"{'collection':<20} {'pairs':>6} {'no cache s':>10} {'texts':>6} {'cache s':>8} {'texts':>6} "
          f"{'speedup':>7}  same grades  cosines shown otherwise")
    for name, settings in cases.items():
        plain_seconds, plain_texts, plain = grade(settings, cache_size=0)
        seconds, texts, grades = grade(settings, cache_size=None)
        same = plain["grade"].equals(grades["grade"])
        shown = int((plain["answer"] != grades["answer"]).sum())
        print(f"{name:<20} {len(grades):>6} {plain_seconds:>10.1f} {plain_texts:>6} {seconds:>8.1f} {texts:>6} "
              f"{plain_seconds / seconds:>6.2f}x  {str(same):<11}  {shown}")


if __name__ == "__main__":
    main()
