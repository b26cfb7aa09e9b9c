"""`exampp eval -m all_trec` side by side with NIST trec_eval (the C binary) and pytrec_eval.

Writes a synthetic collection of the size issue 12 names: R runs (default 50) of Q queries
(default 200) x 1,000 documents, and qrels with 100 judgments per query (grades 0-3, most of them
on documents the runs retrieve, as a pool's are). Runs of one query overlap as real runs do: each
ranks the same candidate documents by their quality plus its own noise. Then times, each in a
child process of its own (seconds and peak resident memory):

- one run: ``exampp eval``, ``trec_eval`` and pytrec_eval (all_trec);
- the folder: ``exampp eval`` on the folder (the qrels read once) in one process (``-j 1``) and
  with its default worker processes (one per CPU), ``trec_eval`` once per run (it takes one run),
  pytrec_eval with one evaluator for every run.

exampp's output must equal trec_eval's byte for byte (trec_eval 10.0; an older binary prints
fewer measures and rounds recall levels differently), and pytrec_eval's means must agree with
trec_eval's printed ones to its 4 decimals on every measure trec_eval averages arithmetically but
the recall-level ones (see :func:`not_compared`).

    python benchmarks/eval_speed.py --trec-eval ~/src/trec_eval/trec_eval   # or trec_eval on PATH
    python benchmarks/eval_speed.py --build ~/src/trec_eval          # make trec_eval first
    python benchmarks/eval_speed.py --runs 5 --queries 50            # smaller, quicker

Ratios are exampp's divided by the other tool's: below 1, exampp is faster (smaller). The last
line is JSON with every figure.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from exampp.trec_eval.engine import available_cpus
from scoring import EXAMPP, PYTREC, Table, check_pytrec, measure, measure_each, write_runs
from trec_eval_diff import build

DEPTH = 1000
JUDGED = 100  # judgments per query
# Left out of the comparison with pytrec_eval: measures whose "all" line is not the mean of the
# per-query values pytrec_eval gives, and the two that turn recall levels into document counts as
# (long)(x + 0.9) in the trec_eval 9.0.8 code pytrec_eval wraps, where 10.0 rounds them (lround)
NOT_MEANS = {"runid", "num_q", "relstring", "gm_map", "gm_bpref", "num_ret", "num_rel", "num_rel_ret",
             "num_nonrel_judged_ret", "11pt_avg"}


def not_compared(name: str) -> bool:
    return name in NOT_MEANS or name.startswith("iprec_at_recall")


def write_collection(folder: Path, runs: int, queries: int, seed: int = 0) -> dict:
    """``runs/`` (R runs x Q queries x 1,000 documents) and ``qrels`` (100 judgments per query)."""
    rng = np.random.default_rng(seed)
    qrels = []
    for qid, docids, quality, top in write_runs(folder / "runs", runs, queries, DEPTH, rng):
        # the pool: mostly the runs' top documents, a few from deeper down
        pooled = np.unique(top[:, :5])
        judged = rng.choice(pooled, min(len(pooled), JUDGED * 4 // 5), replace=False)
        rest = np.setdiff1d(np.arange(len(docids)), judged)
        judged = np.concatenate([judged, rng.choice(rest, JUDGED - len(judged), replace=False)])
        grades = np.clip(np.round(quality[judged] + rng.normal(0.0, 0.7, len(judged))), 0, 3).astype(int)
        qrels.extend(f"{qid} 0 {d} {g}\n" for d, g in zip(docids[judged], grades))
    (folder / "qrels").write_text("".join(qrels))
    return {"run_lines": runs * queries * DEPTH, "qrels_lines": len(qrels),
            "runs_mb": round(sum(p.stat().st_size for p in (folder / "runs").iterdir()) / 1e6, 1)}


def check_output(out: str, trec_out: str) -> None:
    if out != trec_out:
        ours, theirs = out.splitlines(), trec_out.splitlines()
        differ = [f"exampp: {a!r}\ntrec_eval: {b!r}" for a, b in zip(ours, theirs) if a != b]
        raise SystemExit(f"exampp eval and trec_eval differ ({len(ours)} vs {len(theirs)} lines):\n"
                         + "\n".join(differ[:5]))
    print(f"  exampp eval output == trec_eval output, byte for byte ({len(out.splitlines()):,} lines)", flush=True)


def compare(table: Table, rows: dict[str, list[str]], trec_eval: str | None, qrels: Path, runs: list[Path],
            target: Path) -> None:
    """One row per ``label: exampp eval options``, each against one timing of trec_eval (a
    process per run) and of pytrec_eval (one process) on ``runs``."""
    trec = pytrec = trec_out = None
    if trec_eval:
        t_seconds, t_rss, trec_out = measure_each([[trec_eval, "-m", "all_trec", str(qrels), str(run)] for run in runs])
        trec = (t_seconds, t_rss)
    p_seconds, p_rss, p_out = measure([sys.executable, "-c", PYTREC, str(qrels), "all_trec", *map(str, runs)])
    pytrec = (p_seconds, p_rss)
    if trec_out is not None:
        names = {str(run): run.stem for run in runs}
        compared = check_pytrec(p_out, trec_out, names, not_compared)
        print(f"  pytrec_eval == trec_eval on {compared:,} means (4 decimals)", flush=True)
    for label, options in rows.items():
        seconds, rss, out = measure(EXAMPP + ["eval", *options, "-m", "all_trec", str(qrels), str(target)])
        if trec_out is not None:
            check_output(out, trec_out)
        table.row(label, (seconds, rss), trec, pytrec)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--trec-eval", metavar="PATH", help="trec_eval 10.0 binary (default: trec_eval on PATH)")
    parser.add_argument("--build", metavar="SRC", help="build trec_eval from this source folder first (make)")
    parser.add_argument("--tmp", metavar="DIR", help="folder for the temporary files (default: the system's)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        folder = Path(tmp)
        counts = write_collection(folder, args.runs, args.queries)
        print(f"collection: {args.runs} runs x {args.queries} queries x {DEPTH} documents "
              f"({counts['run_lines']:,} lines, {counts['runs_mb']:,} MB); qrels {counts['qrels_lines']:,} lines "
              f"({JUDGED} per query)", flush=True)
        trec_eval = build(Path(args.build)) if args.build else args.trec_eval or shutil.which("trec_eval")
        print(f"trec_eval: {trec_eval}" if trec_eval else
              "trec_eval: not found (give --trec-eval PATH or --build SRC); its column is skipped", flush=True)
        print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} "
              "(other work slows every column)\n", flush=True)
        table = Table()
        runs = sorted((folder / "runs").iterdir())
        qrels = folder / "qrels"
        compare(table, {"eval -m all_trec, one run": []}, trec_eval, qrels, runs[:1], runs[0])
        folder_rows = {f"eval -m all_trec, a folder of {len(runs)} runs, -j 1": ["-j", "1"],
                       f"  the same, -j {available_cpus()} (the default here)": []}
        compare(table, folder_rows, trec_eval, qrels, runs, folder / "runs")
        print(json.dumps({"runs": args.runs, "queries": args.queries, "depth": DEPTH, **counts,
                          "figures": table.figures}))


if __name__ == "__main__":
    main()
