"""Scoring at scale: `exampp eval`, EXAM-Cover, EXAM-Qrels and leaderboards on many large runs,
side by side with NIST trec_eval (its C binary) and pytrec_eval on the same files, and
exampp's peak memory on a 1 GB run file.

Writes a synthetic collection into a temporary folder: R runs x Q queries x depth D (runs of
one query overlap as real runs do: each ranks the same candidate documents by their quality
plus its own noise), official-style qrels (grades 0-3 on the top-10 pool), and 0-5 grades of
``--questions`` questions per query for every passage in the top-20 pool (the grades EXAM-Cover
and EXAM-Qrels read). Then times each way in a child process of its own and reads its peak
resident set size (``ru_maxrss`` of that child alone):

- eval: ``exampp eval`` on all runs / trec_eval run by run / pytrec_eval on all runs, the same
  measures; exampp's output must equal trec_eval's byte for byte, and pytrec_eval's means agree
  to trec_eval's 4 printed decimals;
- EXAM-Cover@20 of every run and EXAM-Qrels (labels) through the Python API (runs read from
  their files, grades from a Parquet table), then ``exampp leaderboard`` on those EXAM-Qrels
  against trec_eval and pytrec_eval on the same measures;
- a run file of about ``--big-gb`` GB (1,000 documents per query): exampp eval and leaderboard
  read it one query at a time, so their peak memory stays far below the file's size; trec_eval
  and pytrec_eval hold it whole.

    python benchmarks/scoring.py                 # 50 runs x 100 queries x 1000; 1 GB run file
    python benchmarks/scoring.py --quick         # tiny sizes, about a minute
    python benchmarks/scoring.py --runs 500 --queries 100 --depth 1000   # the full size (~2.5 GB of runs)

Ratios are exampp's seconds (or peak MiB) divided by the other tool's: below 1, exampp is
faster (smaller). The last line is JSON with every figure.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

EXAMPP = [sys.executable, "-m", "exampp"]
EVAL_MEASURES = ["map", "ndcg_cut.10", "P.10", "recip_rank"]
BOARD_MEASURES = ["ndcg_cut.20", "P.20", "map"]  # as trec_eval names them; exampp leaderboard takes them too
POOL_DEPTH = 20  # EXAM-Cover@20 (exampp's default depth): the passages graded
JUDGED_DEPTH = 10  # official-style qrels judge the top-10 pool
TAU = 4  # a question counts as answered at grade >= 4 (0-5 self-ratings)
BIG_DOCS = 1000  # documents per query in the big run file
BIG_LINE_BYTES = 52  # about, for the ids and scores of the big run

# pytrec_eval as its users run it: parse_run / parse_qrel, one evaluator, means over queries.
PYTREC = """
import json, sys
import pytrec_eval
qrels_path, measures, runs = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]
with open(qrels_path) as f:
    evaluator = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(f), set(measures))
means = {}
for path in runs:
    with open(path) as f:
        per_query = evaluator.evaluate(pytrec_eval.parse_run(f))
    names = next(iter(per_query.values())).keys() if per_query else ()
    means[path] = {m: sum(v[m] for v in per_query.values()) / len(per_query) for m in names}
print(json.dumps(means))
"""
# EXAM-Cover of every run and EXAM-Qrels, through exampp's Python API.
COVER = """
import sys
import pandas as pd
from exampp.formats.trec_run import read_runs
from exampp.scoring import exam_cover, summarize
runs = read_runs(sys.argv[1], depth=int(sys.argv[3]))
grades = pd.read_parquet(sys.argv[2])
board = summarize(exam_cover(runs, grades, tau=float(sys.argv[4]), depth=int(sys.argv[3])))
print(board.to_csv(sep="\\t", index=False), end="")
"""
QRELS = """
import sys
import pandas as pd
from exampp.formats.trec_qrels import write_qrels
from exampp.labels import exam_labels
from exampp.scoring import exam_qrels
write_qrels(exam_qrels(exam_labels(pd.read_parquet(sys.argv[1]))), sys.argv[2])
"""
# The whole run read into memory first (how exampp evaluated before it streamed runs).
IN_MEMORY = """
import sys
from exampp.formats.trec_qrels import read_qrels
from exampp.formats.trec_run import read_run
from exampp.trec_eval import evaluate, format_trec
print(format_trec(evaluate(read_qrels(sys.argv[1]), read_run(sys.argv[2]), sys.argv[3:])), end="")
"""


# --- the synthetic collection --------------------------------------------------------------------

def write_runs(run_dir: Path, runs: int, queries: int, depth: int, rng: np.random.Generator
               ) -> Iterator[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """Write ``runs`` run files into ``run_dir`` (made here), a query at a time: each ranks the
    query's candidate documents by their quality plus its own noise, so runs overlap as real
    ones do. Yields each query's ``(qid, docids, quality, top)`` once its lines are written
    (``top[r]``: run r's ranking, as indices into ``docids``), for the qrels and grades."""
    run_dir.mkdir()
    names = [f"sys{r:03d}" for r in range(runs)]
    noise = rng.uniform(0.3, 1.2, runs)  # some systems are better than others
    files = [open(run_dir / f"{name}.run", "w") for name in names]
    universe = 2 * depth  # candidates per query: runs share most of their documents
    try:
        for q in range(queries):
            qid = str(1000 + q)
            docids = np.array([f"D{d}" for d in rng.choice(9_000_000, universe, replace=False)])
            quality = rng.normal(0.0, 1.0, universe)
            scores = quality + noise[:, None] * rng.normal(0.0, 1.0, (runs, universe))
            top = np.argsort(-scores, axis=1)[:, :depth]
            for r in range(runs):
                ranked = top[r]
                printed = np.round(scores[r, ranked] + 10.0, 3)  # 3 decimals: a few ties, as real runs have
                files[r].write("".join(f"{qid} Q0 {d} {k} {s:.3f} {names[r]}\n"
                                       for k, (d, s) in enumerate(zip(docids[ranked], printed), 1)))
            yield qid, docids, quality, top
    finally:
        for fh in files:
            fh.close()


def write_collection(folder: Path, runs: int, queries: int, depth: int, questions: int, seed: int = 0) -> dict:
    """Runs, official-style qrels and question grades (Parquet) in ``folder``; returns counts."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    qrels_lines, grade_tables = [], []
    for qid, docids, quality, top in write_runs(folder / "runs", runs, queries, depth, rng):
        judged = np.unique(top[:, :JUDGED_DEPTH])
        rel = np.clip(np.round(quality[judged] + rng.normal(0.0, 0.7, len(judged))), 0, 3).astype(int)
        qrels_lines.extend(f"{qid} 0 {d} {g}\n" for d, g in zip(docids[judged], rel))
        pool = np.unique(top[:, :POOL_DEPTH])
        grade_tables.append(_grades(rng, qid, docids[pool], quality[pool], questions))
    (folder / "official.qrels").write_text("".join(qrels_lines))
    grades = pd.concat(grade_tables, ignore_index=True)
    grades.to_parquet(folder / "grades.parquet")
    return {"run_lines": runs * queries * depth, "qrels_lines": len(qrels_lines), "grades": len(grades),
            "runs_mb": round(sum(p.stat().st_size for p in (folder / "runs").iterdir()) / 1e6, 1)}


def _grades(rng: np.random.Generator, qid: str, passages: np.ndarray, quality: np.ndarray, questions: int):
    """0-5 grades of each passage for each question: a passage answers a question more often the
    better it is and the easier the question."""
    import pandas as pd

    ids = [f"{qid}/{hashlib.md5(f'{qid} question {k}'.encode()).hexdigest()}" for k in range(questions)]
    difficulty = rng.normal(1.5, 1.0, questions)
    chance = 1 / (1 + np.exp(-(quality[:, None] - difficulty[None, :]) * 2))
    grade = np.clip(np.floor(chance * 6 + rng.normal(0, 0.8, chance.shape)), 0, 5)
    return pd.DataFrame({
        "query_id": qid,
        "passage_id": np.repeat(passages, questions),
        "question_id": np.tile(ids, len(passages)),
        "grade": grade.ravel(),
    })


def write_big_run(folder: Path, size_gb: float, seed: int = 0) -> tuple[Path, Path, int]:
    """One run of about ``size_gb`` GB grouped by query (1,000 documents each) and its qrels
    (100 judgments per query, half of them retrieved)."""
    rng = np.random.default_rng(seed)
    queries = max(1, round(size_gb * 1e9 / BIG_LINE_BYTES / BIG_DOCS))
    run, qrels = folder / "big.run", folder / "big.qrels"
    with open(run, "w") as out, open(qrels, "w") as judged:
        for q in range(queries):
            qid = str(1_000_000 + q)
            docs = rng.choice(8_800_000, BIG_DOCS, replace=False)
            out.write("".join(f"{qid} Q0 {d} {r} {30 - r * 0.01:.6f} bm25_baseline_run\n"
                              for r, d in enumerate(docs, 1)))
            others = rng.choice(np.arange(9_000_000, 9_500_000), 50, replace=False)
            judged.write("".join(f"{qid} 0 {d} {g}\n" for d, g in
                                 zip(np.concatenate([docs[:50], others]), rng.choice([0, 0, 1, 2, 3], 100))))
    return run, qrels, queries * BIG_DOCS


# --- measuring -----------------------------------------------------------------------------------

# Starts the command and prints its seconds and ru_maxrss (KiB) on stderr's last line. A child
# forked from this (large) process would report this process's size as its own peak.
LAUNCHER = """
import os, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[1:])
_, status, usage = os.wait4(child.pid, 0)
print(time.perf_counter() - start, usage.ru_maxrss, file=sys.stderr)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def measure(command: list[str]) -> tuple[float, float, str]:
    """Seconds, peak RSS in MiB (of this child alone) and standard output of a command."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        status = subprocess.run([sys.executable, "-c", LAUNCHER, *command], stdout=out, stderr=err).returncode
        err.seek(0)
        lines = err.read().decode().splitlines()
        if status != 0:
            raise SystemExit(f"{' '.join(command)} failed:\n" + "\n".join(lines))
        seconds, kib = lines[-1].split()
        out.seek(0)
        return float(seconds), int(kib) / 1024, out.read().decode()


def measure_each(commands: list[list[str]]) -> tuple[float, float, str]:
    """:func:`measure` of commands run one after the other: total seconds, the largest peak, outputs joined."""
    results = [measure(command) for command in commands]
    return sum(r[0] for r in results), max(r[1] for r in results), "".join(r[2] for r in results)


def find_trec_eval(given: str | None, folder: Path) -> str | None:
    """The trec_eval binary: given, else taken out of the anserini jar that pyserini installs."""
    if given:
        return given
    try:
        import pyserini
    except ImportError:
        return None
    jars = sorted((Path(pyserini.__file__).parent / "resources" / "jars").glob("anserini-*-fatjar.jar"))
    if not jars:
        return None
    target = folder / "trec_eval"
    with zipfile.ZipFile(jars[-1]) as jar:
        target.write_bytes(jar.read("trec_eval/trec_eval-linux-amd64"))
    target.chmod(target.stat().st_mode | stat.S_IXUSR)
    return str(target)


def trec_means(text: str) -> dict[str, dict[str, float]]:
    """trec_eval's 'all' lines per run (runs told apart by their runid lines)."""
    means: dict[str, dict[str, float]] = {}
    run = None
    for line in text.splitlines():
        measure_name, query, value = line.split("\t")
        measure_name = measure_name.strip()
        if measure_name == "runid":
            run = value
            means[run] = {}
        elif query == "all":
            means[run][measure_name] = float(value)
    return means


def check_pytrec(pytrec_out: str, trec_out: str, names: dict[str, str], skip: Callable[[str], bool] = lambda _: False
                 ) -> int:
    """pytrec_eval's means against trec_eval's printed ones (4 decimals), but for the measures
    ``skip`` names; returns the values compared."""
    expected = trec_means(trec_out)
    compared = 0
    for path, values in json.loads(pytrec_out).items():
        run = names[path]
        for measure_name, value in values.items():
            if skip(measure_name):
                continue
            printed = expected[run][measure_name]
            if abs(value - printed) > 0.00005 + 1e-9:
                raise SystemExit(f"pytrec_eval and trec_eval differ: {run} {measure_name} {value} vs {printed}")
            compared += 1
    return compared


class Table:
    """Rows of figures, printed as they come and kept for the JSON line."""

    def __init__(self):
        self.figures: dict[str, dict] = {}
        print(f"{'':<54}{'seconds':>9}{'peak MiB':>10}   {'vs trec_eval (s, MiB)':>22}   "
              f"{'vs pytrec_eval (s, MiB)':>24}", flush=True)

    def row(self, label: str, exampp: tuple[float, float], trec: tuple[float, float] | None = None,
            pytrec: tuple[float, float] | None = None) -> None:
        def ratio(other):
            if other is None:
                return "", None
            r = (exampp[0] / other[0], exampp[1] / other[1])
            return f"x{r[0]:.2f}, x{r[1]:.2f}", [round(r[0], 3), round(r[1], 3)]

        (trec_text, trec_ratio), (py_text, py_ratio) = ratio(trec), ratio(pytrec)
        print(f"{label:<54}{exampp[0]:9.1f}{exampp[1]:10.0f}   {trec_text:>22}   {py_text:>24}", flush=True)
        entry = {"seconds": round(exampp[0], 2), "peak_mib": round(exampp[1], 1)}
        for key, other, r in (("trec_eval", trec, trec_ratio), ("pytrec_eval", pytrec, py_ratio)):
            if other is not None:
                entry[key] = {"seconds": round(other[0], 2), "peak_mib": round(other[1], 1), "ratio": r}
        self.figures[label] = entry


def compare(table: Table, label: str, exampp_cmd: list[str], trec_eval: str | None, qrels: Path,
            runs: list[Path], measures: list[str], names: dict[str, str], pytrec_measures: list[str] | None = None
            ) -> None:
    """exampp against trec_eval (one process per run) and pytrec_eval (one process) on ``runs``;
    pytrec_eval computes ``pytrec_measures`` (default: ``measures``)."""
    seconds, rss, out = measure(exampp_cmd)
    trec = pytrec = None
    trec_out = None
    if trec_eval:
        m_args = [a for m in ["runid", *measures] for a in ("-m", m)]
        t_seconds, t_rss, trec_out = measure_each([[trec_eval, *m_args, str(qrels), str(run)] for run in runs])
        trec = (t_seconds, t_rss)
        if exampp_cmd[len(EXAMPP)] == "eval":
            _check_eval(out, trec_out)
        else:
            _check_board(out, trec_out, measures)
    p_seconds, p_rss, p_out = measure([sys.executable, "-c", PYTREC, str(qrels),
                                       ",".join(m.replace(".", "_") for m in pytrec_measures or measures),
                                       *map(str, runs)])
    pytrec = (p_seconds, p_rss)
    if trec_out is not None:
        print(f"  pytrec_eval == trec_eval on {check_pytrec(p_out, trec_out, names)} means (4 decimals)", flush=True)
    table.row(label, (seconds, rss), trec, pytrec)


# trec_eval 9.0.4 (the binary anserini ships) turns a recall level into a number of relevant
# documents as (long)(level * R + 0.9); current trec_eval, and exampp, round it (lround).
RECALL_LEVEL_MEASURES = ("iprec_at_recall_", "11pt_avg")


def _check_eval(out: str, trec_out: str) -> None:
    """exampp eval's output against trec_eval's: byte for byte, but for the recall-level rounding
    and the measures newer than this trec_eval (which it does not print)."""
    known = {line.split("\t")[0].strip() for line in trec_out.splitlines()}
    lines = out.splitlines()
    ours = [line for line in lines if line.split("\t")[0].strip() in known]
    newer = sorted({line.split("\t")[0].strip() for line in lines} - known)
    theirs = trec_out.splitlines()
    differ = [a for a, b in zip(ours, theirs) if a != b]
    if len(ours) != len(theirs) or any(not a.startswith(RECALL_LEVEL_MEASURES) for a in differ):
        raise SystemExit("exampp eval and trec_eval differ:\n" + "\n".join(differ[:10]))
    print(f"  exampp eval output == trec_eval output, byte for byte, on {len(ours):,} lines"
          + (f" but {len(differ)} iprec_at_recall/11pt_avg lines: this trec_eval (9.0.4) turns recall "
             "levels into document counts as (long)(x + 0.9), current trec_eval and exampp round them (lround)"
             if differ else "")
          + (f"; exampp also printed {', '.join(newer)} (newer than this trec_eval)" if newer else ""), flush=True)


def _check_board(tsv: str, trec_out: str, measures: list[str]) -> None:
    """exampp leaderboard's means against trec_eval's printed ones (4 decimals)."""
    expected = trec_means(trec_out)
    lines = tsv.splitlines()
    header = lines[0].split("\t")
    for line in lines[1:]:
        row = dict(zip(header, line.split("\t")))
        for m in measures:
            printed = expected[row["run"]][m.replace(".", "_")]
            if abs(float(row[m]) - printed) > 0.00005 + 1e-9:
                raise SystemExit(f"leaderboard and trec_eval differ: {row['run']} {m} {row[m]} vs {printed}")
    print(f"  exampp leaderboard == trec_eval on {(len(lines) - 1) * len(measures)} means (4 decimals)", flush=True)


# --- the benchmark -------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--questions", type=int, default=100, help="questions per query")
    parser.add_argument("--big-gb", type=float, default=1.0, help="size of the big run file (0: skip it)")
    parser.add_argument("--ungrouped", action="store_true",
                        help="big run not grouped by query: streaming falls back to holding it")
    parser.add_argument("--in-memory", action="store_true",
                        help="also evaluate the big run read whole into memory (exampp before streaming)")
    parser.add_argument("--all-trec", action="store_true", help="also compare exampp eval -m all_trec")
    parser.add_argument("--trec-eval", metavar="PATH", help="trec_eval binary (default: from pyserini's anserini jar)")
    parser.add_argument("--quick", action="store_true", help="10 runs x 20 queries x 200, a 20 MB big run")
    parser.add_argument("--tmp", metavar="DIR", help="folder for the temporary files (default: the system's)")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.queries, args.depth, args.questions, args.big_gb = 10, 20, 200, 20, 0.02
        args.all_trec = True
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        counts = write_collection(folder, args.runs, args.queries, args.depth, args.questions)
        print(f"collection: {args.runs} runs x {args.queries} queries x depth {args.depth} "
              f"({counts['run_lines']:,} lines, {counts['runs_mb']:,} MB); official qrels {counts['qrels_lines']:,} "
              f"lines; {counts['grades']:,} grades ({args.questions} questions/query, top-{POOL_DEPTH} pool); "
              f"written in {time.perf_counter() - start:.0f} s", flush=True)
        trec_eval = find_trec_eval(args.trec_eval, folder)
        print(f"trec_eval: {trec_eval}" if trec_eval else
              "trec_eval: not found (give --trec-eval PATH, or install the pyserini extra); its column is skipped",
              flush=True)
        print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} "
              "(other work slows every column)\n", flush=True)
        table = Table()
        runs = sorted((folder / "runs").iterdir())
        names = {str(p): p.stem for p in runs}
        official, exam = folder / "official.qrels", folder / "exam.qrels"
        measure_sets = [("eval", EVAL_MEASURES)] + ([("eval -m all_trec", ["all_trec"])] if args.all_trec else [])
        for label, measures in measure_sets:
            m_args = [a for m in ["runid", *measures] for a in ("-m", m)]
            compare(table, f"{label}, {len(runs)} runs",
                    EXAMPP + ["eval", *m_args, str(official), str(folder / "runs")],
                    trec_eval, official, runs, measures, names, EVAL_MEASURES)
        grades = str(folder / "grades.parquet")
        cover = measure([sys.executable, "-c", COVER, str(folder / "runs"), grades, str(POOL_DEPTH), str(TAU)])
        table.row(f"EXAM-Cover@{POOL_DEPTH}, {len(runs)} runs (Python API)", cover[:2])
        qrels = measure([sys.executable, "-c", QRELS, grades, str(exam)])
        table.row("EXAM-Qrels from the grades (Python API)", qrels[:2])
        compare(table, f"leaderboard on EXAM-Qrels, {len(runs)} runs",
                EXAMPP + ["leaderboard", str(folder / "runs"), "--qrels", str(exam), "--format", "tsv",
                          *[a for m in BOARD_MEASURES for a in ("-m", m)]],
                trec_eval, exam, runs, BOARD_MEASURES, names)
        for run in runs:  # room for the big run
            run.unlink()
        big = {}
        if args.big_gb > 0:
            big = _big_run(table, folder, args, trec_eval)
        print(json.dumps({"runs": args.runs, "queries": args.queries, "depth": args.depth,
                          "questions": args.questions, **counts, "big_run": big, "figures": table.figures}))


def _big_run(table: Table, folder: Path, args: argparse.Namespace, trec_eval: str | None) -> dict:
    run, qrels, lines = write_big_run(folder, args.big_gb)
    if args.ungrouped:  # every other query's second half moved to the end of the file
        text = run.read_text().splitlines(keepends=True)
        head, tail = [], []
        for i in range(0, len(text), BIG_DOCS):
            block = text[i:i + BIG_DOCS]
            half = len(block) // 2 if (i // BIG_DOCS) % 2 else len(block)
            head += block[:half]
            tail += block[half:]
        run.write_text("".join(head + tail))
    gb = run.stat().st_size / 1e9
    what = "ungrouped" if args.ungrouped else "grouped by query"
    print(f"\nbig run: {lines:,} lines, {gb:.3f} GB ({what}); exampp streams it one query at a time", flush=True)
    m_args = [a for m in ["runid", *EVAL_MEASURES] for a in ("-m", m)]
    compare(table, f"eval, one {gb:.2f} GB run", EXAMPP + ["eval", *m_args, str(qrels), str(run)], trec_eval,
            qrels, [run], EVAL_MEASURES, {str(run): "bm25_baseline_run"})
    board = measure(EXAMPP + ["leaderboard", str(run), "--qrels", str(qrels), "-m", "nDCG@10", "-m", "AP",
                              "--format", "tsv"])
    table.row(f"leaderboard nDCG@10 AP, one {gb:.2f} GB run", board[:2])
    if args.in_memory:
        whole = measure([sys.executable, "-c", IN_MEMORY, str(qrels), str(run), *EVAL_MEASURES])
        table.row(f"eval, the {gb:.2f} GB run read whole first", whole[:2])
    return {"gb": round(gb, 3), "lines": lines, "ungrouped": args.ungrouped}


if __name__ == "__main__":
    main()
