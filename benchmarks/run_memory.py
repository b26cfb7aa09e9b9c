"""Peak memory and time of evaluating a large run file: streamed (what `exampp eval` and
`exampp leaderboard` do) against the whole run held in memory (the way before streaming).

Writes a synthetic run of about ``--size-gb`` GB (grouped by query, 1,000 documents per
query, as runs are written) and a qrels file with 100 judgments per query into a temporary
folder, then runs each way in a child process and reads its peak resident set size
(``ru_maxrss`` of that child alone):

    python benchmarks/run_memory.py                # about 1 GB: several minutes and ~4 GB for the baseline
    python benchmarks/run_memory.py --quick        # about 50 MB: a few seconds
    python benchmarks/run_memory.py --ungrouped    # a shuffled run: streaming must fall back to holding it

The last line is JSON with every figure.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DOCS_PER_QUERY = 1000
JUDGED_PER_QUERY = 100
LINE_BYTES = 52  # about, for the ids and scores below
EXAMPP = [sys.executable, "-m", "exampp"]
# The baseline: the whole run read into memory (read_run), then evaluated.
BASELINE = """
import sys
from exampp.collection.qrels import read_qrels
from exampp.collection.runs import read_run
from exampp.trec_eval import evaluate, format_trec
print(format_trec(evaluate(read_qrels(sys.argv[1]), read_run(sys.argv[2]), sys.argv[3:])), end="")
"""
MEASURES = ["map", "ndcg_cut.10", "P.10", "recip_rank"]


def write_collection(folder: Path, size_gb: float, ungrouped: bool, seed: int = 0) -> tuple[Path, Path, int]:
    """A run of about ``size_gb`` GB and its qrels; returns the paths and the number of lines."""
    rng = random.Random(seed)
    queries = max(1, round(size_gb * 1e9 / LINE_BYTES / DOCS_PER_QUERY))
    run, qrels = folder / "big.run", folder / "big.qrels"
    lines = 0
    tail: list[str] = []  # ungrouped: odd queries' second halves go to the end of the file
    with open(run, "w") as out, open(qrels, "w") as judged:
        for q in range(queries):
            qid = str(1_000_000 + q)
            docs = rng.sample(range(8_800_000), DOCS_PER_QUERY)
            block = [f"{qid} Q0 {d} {r} {30 - r * 0.01:.6f} bm25_baseline_run\n" for r, d in enumerate(docs, 1)]
            if ungrouped and q % 2:
                out.writelines(block[: DOCS_PER_QUERY // 2])
                tail.extend(block[DOCS_PER_QUERY // 2:])
            else:
                out.writelines(block)
            lines += len(block)
            judged.writelines(f"{qid} 0 {d} {rng.choice((0, 0, 1, 2, 3))}\n"
                              for d in docs[:JUDGED_PER_QUERY // 2] + rng.sample(range(9_000_000, 9_500_000), JUDGED_PER_QUERY // 2))
        out.writelines(tail)
    return run, qrels, lines


def measure(command: list[str]) -> tuple[float, float, str]:
    """Seconds, peak RSS in MiB (of this child alone) and stdout of a command."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        err = child.stderr.read().decode()
        child.stderr.close()
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(command)} failed:\n{err}")
        out.seek(0)
        return seconds, usage.ru_maxrss / 1024, out.read().decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-gb", type=float, default=1.0)
    parser.add_argument("--quick", action="store_true", help="about 50 MB")
    parser.add_argument("--ungrouped", action="store_true", help="a run not grouped by query")
    parser.add_argument("--no-baseline", action="store_true", help="skip the whole-run-in-memory baseline")
    args = parser.parse_args()
    size = 0.05 if args.quick else args.size_gb
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        run, qrels, lines = write_collection(folder, size, args.ungrouped)
        gb = run.stat().st_size / 1e9
        print(f"run: {lines:,} lines, {gb:.3f} GB ({'ungrouped' if args.ungrouped else 'grouped by query'}); "
              f"qrels: {qrels.stat().st_size / 1e6:.1f} MB", flush=True)
        m_args = [a for m in MEASURES for a in ("-m", m)]
        figures: dict[str, dict[str, float]] = {}
        outputs = {}
        ways = {
            "eval (streamed)": EXAMPP + ["eval", *m_args, str(qrels), str(run)],
            "leaderboard (streamed)": EXAMPP + ["leaderboard", str(run), "--qrels", str(qrels),
                                                "-m", "nDCG@10", "-m", "AP", "--format", "tsv"],
        }
        if not args.no_baseline:
            ways["eval, whole run in memory (baseline)"] = [sys.executable, "-c", BASELINE, str(qrels), str(run),
                                                            *MEASURES]
        for label, command in ways.items():
            seconds, rss, out = measure(command)
            figures[label] = {"seconds": round(seconds, 1), "peak_rss_mib": round(rss, 1)}
            outputs[label] = out
            print(f"{label:<40} {seconds:8.1f} s   peak RSS {rss:9.1f} MiB", flush=True)
        baseline = figures.get("eval, whole run in memory (baseline)")
        if baseline:
            same = outputs["eval (streamed)"] == outputs["eval, whole run in memory (baseline)"]
            ratio = figures["eval (streamed)"]["peak_rss_mib"] / baseline["peak_rss_mib"]
            print(f"streamed eval / baseline: peak RSS x{ratio:.3f}; identical output: {same}")
            if not same:
                raise SystemExit("streamed and in-memory evaluation differ")
        print(json.dumps({"run_gb": round(gb, 3), "lines": lines, "ungrouped": args.ungrouped, **figures}))


if __name__ == "__main__":
    main()
