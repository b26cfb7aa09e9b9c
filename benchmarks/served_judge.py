"""Served judges: what bounded concurrency buys against a server with network latency, and how much of a
continuous-batching server's capacity the client uses.

The same self-rating pairs of the example collection are graded (a) by the local ``hf`` backend
and (b) by the ``openai`` backend against a real OpenAI-compatible HTTP server on loopback
(exampp/testing/openai_server.py) serving the same random-weight tiny FLAN-T5-shaped model, which answers
each request after ``--latency`` seconds (a stand-in for the network and the server's queue; its
model runs one request at a time). For (b) the requests go ``--concurrency`` at a time, for each
value given. It prints pairs/s, the ratio to one request at a time, and whether the grades and
grade probabilities equal the local backend's.

With ``--quick`` it grades self-rating prompts instead against the simulated continuous-batching
server (exampp/testing/batching_server.py, in a process of its own as a real server is: max batch 256, a step of
0.04 s + 1 ms a request in it, 16 prompt words prefilled a step, a prefix cache), ``--prompts`` of them
for each size given, through exampp's runner (:func:`exampp.grading.runner.grade_pairs` into a
temporary store: its chunks of :data:`~exampp.defaults.CHUNK` pairs, each committed as it is graded,
count), at the ``openai`` backend's default settings and, up to ``--baseline-max`` prompts, with the
client before adaptive concurrency (8 requests in flight, one chunk at a time), each on a fresh server;
then both the default client and a fixed 256 in flight against a server that answers 429 beyond 64
in flight. The prompts are the example collection's (passage, question) pairs, beyond its 1,200 with
the questions numbered to make them distinct. It prints prompts/s against the server's capacity for
the prompts as served (cache hits included; a step no larger than the server takes in flight), the
429s, and ends with one JSON line: ``utilisation`` (default settings, the lowest over the sizes) and
``baseline_utilisation`` (the client before, the highest), each the share of capacity reached end to
end (prompts/s over capacity, from the runner's start to its return).

With ``--prefix`` it grades the same prompts at default settings with the paper's self-rating prompt
(question first) and with ``self-rating(prompt=passage-first)``, sent all at once and leader-first.

Usage (from the repository root; about a minute on 2 CPU cores):
    python benchmarks/served_judge.py [--pairs 48] [--latency 0.1] [--concurrency 1,4,16]
    python benchmarks/served_judge.py --quick [--prompts 1000,5000,20000,50000] [--baseline-max 10000]
    python benchmarks/served_judge.py --prefix [--prompts 1000,5000]
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path

from exampp.defaults import CHUNK
from exampp.formats.corpus_sources import read_passages
from exampp.formats.question_bank import read_question_bank
from exampp.formats.trec_run import read_run
from exampp.grading.base import Pair
from exampp.grading.engine import LocalEngine
from exampp.grading.registry import make_grader
from exampp.grading.runner import grade_pairs
from exampp.llm.backend import open_backend
from exampp.stores.grade_store import GradeStore
from exampp.testing.batching_server import BatchingServer
from exampp.testing.openai_server import OpenAIServer
from exampp.testing.server_process import ServerProcess, answer_until_stopped
from exampp.testing.tiny_models import build_t5
from shared_data import tokenizer

REPO = Path(__file__).resolve().parents[1]
# the tiny model is given the real T5 tokenizer, from the reference data beside the project
EXAMPLES = REPO / "examples"  # the example collection, a workspace
BASELINE = 8  # today's client: 8 requests in flight, one chunk of the runner's at a time
# The simulated server of --quick: steps twice the server's defaults, so that its capacity (about 140
# self-rating prompts/s) stays well inside what client and server, one Python process on loopback,
# can push (about 3 ms of CPU a request together): what is measured is the client's filling of it.
SERVER = {"base": 0.04, "per_seq": 0.001}


def example_pairs(n: int, depth: int = 10) -> list[Pair]:
    """``n`` pairs spread evenly over all (top-``depth`` bm25 passage, question of its query) pairs."""
    passages = read_passages(EXAMPLES / "corpus" / "passages.jsonl")
    questions = read_question_bank(EXAMPLES / "question_banks" / "questions.jsonl").by_query()
    run = read_run(EXAMPLES / "runs" / "bm25.run")
    every = [Pair(qid, doc.docid, passages[doc.docid], question)
             for qid, ranking in run.rankings.items() for doc in ranking[:depth] if doc.docid in passages
             for question in questions.get(qid, [])]
    step = max(1, len(every) // n)
    return every[::step][:n]


def distinct_pairs(n: int) -> list[Pair]:
    """``n`` pairs with distinct texts: the example collection's, then the same with the questions numbered."""
    every = example_pairs(1 << 30, depth=1 << 30)
    pairs = []
    for i in range(n):
        pair, copy = every[i % len(every)], i // len(every)
        if copy:
            pair = replace(pair, question=replace(pair.question, question_id=f"{pair.question.question_id}~{copy}",
                                                  text=f"{pair.question.text} ({copy})"))
        pairs.append(pair)
    return pairs


def _serve(pipe: Connection, options: dict) -> None:
    """The simulated server, in a process of its own (:class:`ServerProcess`), asked for its stats."""
    with BatchingServer(**SERVER, **options) as server:
        answer_until_stopped(pipe, server.url, server.stats)


# The clients compared: backend options, and chunks graded at once (None: the backend's parallel_calls).
CLIENTS: dict[str, tuple[dict, int | None]] = {
    "default": ({}, None),
    "before": ({"concurrency": BASELINE, "adaptive_concurrency": False}, 1),  # 8 in flight, one chunk at a time
    "fixed 256": ({"adaptive_concurrency": False}, None),  # 256 in flight always, whatever the server says
}
LIMIT = 64  # the limited server of --quick: 429 beyond this many requests in flight


def batched_run(pairs: list[Pair], client: str = "default", *, method: str = "self-rating",
                leader_first: bool = True, limit: int | None = None) -> dict:
    """Grade ``pairs`` with ``method`` through the runner against a fresh simulated server (``limit``: it
    answers 429 beyond that many in flight) with one of :data:`CLIENTS`: the figures of the run.
    ``leader_first`` off: a passage's prompts are sent together (exampp.llm.prefix), for --prefix."""
    options, in_flight = CLIENTS[client]
    with tempfile.TemporaryDirectory() as tmp, ServerProcess(_serve, {"max_in_flight": limit}) as server:
        backend = open_backend("openai", "judge", base_url=server.url, **options)
        backend.leader_first = leader_first
        try:
            grader = make_grader(method, backend)
            with GradeStore(Path(tmp) / "grades.sqlite") as store:
                cpu, start = time.process_time(), time.perf_counter()
                engine = None if in_flight is None else LocalEngine(grader, in_flight=in_flight)
                summary = grade_pairs(pairs, grader, store, progress=False, engine=engine)
                seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        finally:
            backend.close()
        stats = server.ask()
    if not summary.graded == stats.completed == len(pairs):
        raise RuntimeError(f"{len(pairs)} prompts, but {summary.graded} graded and {stats.completed} answered")
    return {"client": client, "server": f"429 beyond {limit}" if limit else "no limit", "prompts": len(pairs),
            "seconds": round(seconds, 2), "prompts_per_s": round(len(pairs) / seconds, 1),
            "capacity": round(stats.capacity, 1), "utilisation": round(stats.ideal_seconds / seconds, 3),
            "server_utilisation": round(stats.utilisation, 3),  # first request in to last answer out
            "full_batch_share": round(stats.full_share, 3), "cache_hit_rate": round(stats.hit_rate, 3),
            "prefill_tokens_saved": stats.cached_tokens, "prompt_tokens": stats.prompt_tokens,
            "refused": stats.refused, "retries": backend.usage.retries,
            "server_busy_share": round(stats.busy_share, 3), "cpu_ms_per_prompt": round(1000 * cpu / len(pairs), 2)}


def quick(sizes: list[int], baseline_max: int) -> None:
    """Default settings against the client before (up to ``baseline_max`` prompts) on the simulated server,
    for each size; then both adaptive and fixed against a server that takes :data:`LIMIT` in flight. A
    table, then JSON."""
    rows = []
    print(f"self-rating through the runner (chunks of {CHUNK} pairs) against the simulated server: max batch 256, "
          f"a step {SERVER['base']:g} s + {SERVER['per_seq']:g} s a request, 16 prompt words prefilled a step")
    print(f"{'client':<10} {'server':<14} {'prompts':>7} {'seconds':>8} {'prompts/s':>9} {'capacity':>8} "
          f"{'utilisation':>11} {'full steps':>10} {'busy':>6} {'cache hits':>10} {'429s':>6}")
    runs = [(n, client, None) for n in sizes for client in ("default", "before") if client == "default" or
            n <= baseline_max] + [(sizes[0], client, LIMIT) for client in ("default", "fixed 256")]
    for n, client, limit in runs:
        row = batched_run(distinct_pairs(n), client, limit=limit)
        rows.append(row)
        print(f"{client:<10} {row['server']:<14} {n:>7} {row['seconds']:>8.1f} {row['prompts_per_s']:>9.1f} "
              f"{row['capacity']:>8.1f} {row['utilisation']:>11.1%} {row['full_batch_share']:>10.1%} "
              f"{row['server_busy_share']:>6.1%} {row['cache_hit_rate']:>10.1%} {row['refused']:>6}", flush=True)
    unlimited = [row for row in rows if row["server"] == "no limit"]
    print(json.dumps({"utilisation": min(row["utilisation"] for row in unlimited if row["client"] == "default"),
                      "baseline_utilisation": max(row["utilisation"] for row in unlimited if row["client"] == "before"),
                      "path": "exampp.grading.runner.grade_pairs", "runs": rows}))


def prefix(sizes: list[int]) -> None:
    """The prefix cache's share of the prompt tokens at default settings: the papers' self-rating prompt
    (question first), then the passage-first one sent all at once and leader-first, for each size."""
    variants = (("question-first", "self-rating", True),
                ("passage-first, all at once", "self-rating(prompt=passage-first)", False),
                ("passage-first, leader-first", "self-rating(prompt=passage-first)", True))
    rows = []
    print("self-rating through the runner at default settings against the simulated server (as --quick), its "
          "prefix cache in blocks of 16 words")
    print(f"{'prompt, dispatch':<28} {'prompts':>7} {'prompts/s':>9} {'capacity':>8} {'utilisation':>11} "
          f"{'cache hits':>10} {'prefill saved':>13} {'prompt tokens':>13}")
    for n in sizes:
        pairs = distinct_pairs(n)
        for label, method, leader_first in variants:
            row = {**batched_run(pairs, method=method, leader_first=leader_first), "client": label}
            rows.append(row)
            print(f"{label:<28} {n:>7} {row['prompts_per_s']:>9.1f} {row['capacity']:>8.1f} "
                  f"{row['utilisation']:>11.1%} {row['cache_hit_rate']:>10.1%} {row['prefill_tokens_saved']:>13} "
                  f"{row['prompt_tokens']:>13}", flush=True)
    print(json.dumps({"prefix": rows}))


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
    parser.add_argument("--quick", action="store_true",
                        help="default settings against the client before on the simulated continuous-batching server")
    parser.add_argument("--prefix", action="store_true",
                        help="the prefix cache's hits: question-first, passage-first all at once and leader-first")
    parser.add_argument("--prompts", default="1000",
                        help="with --quick or --prefix: comma-separated numbers of prompts")
    parser.add_argument("--baseline-max", type=int, default=10_000,
                        help="with --quick: the client before runs up to this many prompts (it takes 7 times as long)")
    args = parser.parse_args()
    if args.quick:
        quick([int(n) for n in args.prompts.split(",")], args.baseline_max)
        return
    if args.prefix:
        prefix([int(n) for n in args.prompts.split(",")])
        return
    tokenizer_dir = tokenizer()
    pairs = example_pairs(args.pairs, depth=5)
    with tempfile.TemporaryDirectory() as tmp:
        model = str(build_t5(Path(tmp) / "tiny", tokenizer_dir))
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
