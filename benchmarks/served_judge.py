"""Served judges: what bounded concurrency buys against a server with network latency.

The same self-rating pairs of the example collection are graded (a) by the local ``hf`` backend
and (b) by the ``openai`` backend against a real OpenAI-compatible HTTP server on loopback
(tests/openai_server.py) serving the same random-weight tiny FLAN-T5-shaped model, which answers
each request after ``--latency`` seconds (a stand-in for the network and the server's queue; its
model runs one request at a time). For (b) the requests go ``--concurrency`` at a time, for each
value given. It prints pairs/s, the ratio to one request at a time, and whether the grades and
grade probabilities equal the local backend's.

Usage (from the repository root; about a minute on 2 CPU cores):
    python benchmarks/served_judge.py [--pairs 48] [--latency 0.1] [--concurrency 1,4,16]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the tiny model and the test server live with the tests

from openai_server import OpenAIServer  # noqa: E402
from tiny_models import build_t5, t5_tokenizer_dir  # noqa: E402

from exampp.collection.corpus import read_passages  # noqa: E402
from exampp.collection.question_bank import read_question_bank  # noqa: E402
from exampp.collection.runs import read_run  # noqa: E402
from exampp.grading.base import Pair  # noqa: E402
from exampp.grading.registry import make_grader  # noqa: E402
from exampp.llm.backend import open_backend  # noqa: E402


def example_pairs(n: int, depth: int = 10) -> list[Pair]:
    """``n`` pairs spread evenly over all (top-``depth`` bm25 passage, question of its query) pairs."""
    passages = read_passages(REPO / "corpus" / "passages.jsonl")
    questions = read_question_bank(REPO / "question_banks" / "questions.jsonl").by_query()
    run = read_run(REPO / "runs" / "bm25.run")
    every = [Pair(qid, doc.docid, passages[doc.docid], question)
             for qid, ranking in run.rankings.items() for doc in ranking[:depth] if doc.docid in passages
             for question in questions.get(qid, [])]
    step = max(1, len(every) // n)
    return every[::step][:n]


def timed_grades(backend, pairs: list[Pair]) -> tuple[list, float]:
    grader = make_grader("self-rating", backend)
    start = time.perf_counter()
    judgments = grader.grade(pairs)
    return judgments, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=48)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds the server waits before each answer")
    parser.add_argument("--concurrency", default="1,4,16", help="comma-separated request concurrencies")
    args = parser.parse_args()
    pairs = example_pairs(args.pairs, depth=5)
    with tempfile.TemporaryDirectory() as tmp:
        model = str(build_t5(Path(tmp) / "tiny", t5_tokenizer_dir()))
        local, t_local = timed_grades(open_backend("hf", model, device="cpu", batch_size=1), pairs)
        print(f"{len(pairs)} self-rating pairs, tiny FLAN-T5-shaped model, server latency {args.latency:g} s")
        print(f"{'backend':<28} {'pairs/s':>8} {'x conc. 1':>9}  same grades and probabilities")
        print(f"{'hf (local, batch 1)':<28} {len(pairs) / t_local:8.1f} {'':>9}  -")
        with OpenAIServer(model) as server:
            server.delay = args.latency
            first = None
            for concurrency in map(int, args.concurrency.split(",")):
                backend = open_backend("openai", "tiny", base_url=server.url, concurrency=concurrency)
                try:
                    served, seconds = timed_grades(backend, pairs)
                finally:
                    backend.close()
                first = first or seconds
                same = [(j.grade, j.probabilities) for j in served] == [(j.grade, j.probabilities) for j in local]
                print(f"{f'openai, concurrency {concurrency}':<28} {len(pairs) / seconds:8.1f} "
                      f"{first / seconds:9.1f}  {same}")


if __name__ == "__main__":
    main()
