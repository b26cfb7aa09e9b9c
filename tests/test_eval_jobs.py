"""`exampp eval` on several runs in worker processes (``jobs``): the same output, the same first
error in run order, and a run on standard input still read, as one process gives.

Each check runs in a fresh interpreter: this one may run other tests' threads, and then (rightly)
evaluates every run itself, which would leave the workers untested."""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from exampp.formats.trec_qrels import read_qrels
from exampp.formats.trec_run import RunFile
from exampp.trec_eval import evaluate_runs, format_trec


def _collection(folder: Path, runs: int = 5) -> tuple[Path, list[Path]]:
    rng = random.Random(3)
    qrels = folder / "qrels"
    qrels.write_text("".join(f"q{q} 0 d{d} {rng.choice([0, 1, 2])}\n"
                             for q in range(8) for d in rng.sample(range(50), 15)))
    paths = []
    for r in range(runs):
        path = folder / f"r{r}.run"
        path.write_text("".join(f"q{q} Q0 d{d} {k} {rng.choice([1.0, 0.5, rng.random()])} sys{r}\n"
                                for q in range(8) for k, d in enumerate(rng.sample(range(50), 30), 1)))
        paths.append(path)
    return qrels, paths


def _text(results) -> str:
    return "".join(format_trec(scores) for scores in results.values())


# How many runs this process evaluated itself, and what came back (or the error's message).
_IN_WORKERS = """
import json, sys
from exampp.formats.trec_qrels import read_qrels
from exampp.formats.trec_run import RunFile
from exampp.errors import InputError
from exampp.trec_eval import engine, evaluate_runs, format_trec
here = []
evaluate = engine.evaluate
engine.evaluate = lambda *a, **k: here.append(1) or evaluate(*a, **k)
qrels, jobs, options, paths = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4:]
try:
    results = evaluate_runs(read_qrels(qrels), [RunFile(p) for p in paths], ["all_trec"], jobs=jobs, **options)
except InputError as error:
    print(json.dumps({"here": len(here), "error": str(error)}))
else:
    print(json.dumps({"here": len(here), "names": list(results),
                      "text": "".join(format_trec(scores) for scores in results.values())}))
"""


def _in_workers(qrels: Path, paths: list[Path], jobs: int, options: dict | None = None) -> dict:
    done = subprocess.run([sys.executable, "-c", _IN_WORKERS, str(qrels), str(jobs), json.dumps(options or {}),
                           *map(str, paths)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("options", [{}, {"per_query": True, "complete": True, "max_retrieved": 10}])
def test_workers_give_what_one_process_gives(tmp_path: Path, options):
    qrels_path, paths = _collection(tmp_path)
    one, several = _in_workers(qrels_path, paths, 1, options), _in_workers(qrels_path, paths, 3, options)
    assert one["here"] == 5 and several["here"] == 0  # the 5 runs were evaluated in the workers
    assert several["names"] == one["names"] == [f"sys{r}" for r in range(5)]
    assert several["text"] == one["text"]
    qrels = read_qrels(qrels_path)  # and in this process, whichever way it goes, the same
    assert _text(evaluate_runs(qrels, [RunFile(p) for p in paths], ["all_trec"], jobs=3, **options)) == one["text"]


@pytest.mark.slow
def test_the_first_error_in_run_order_is_raised(tmp_path: Path):
    qrels_path, paths = _collection(tmp_path)
    paths[1].write_text(paths[1].read_text() + "q1 Q0 d1 9 x sys1\n")  # a bad score at its last line
    paths[3].write_text("q1 Q0 d1 1 1 sys3\nq1 Q0 d1 2 0.5 sys3\n")  # a docid twice, in a later run
    for jobs in (1, 4):
        assert _in_workers(qrels_path, paths, jobs)["error"].endswith("r1.run:241: score 'x' is not a number")
    paths[1].write_text(paths[0].read_text())  # now run 1 is named as run 0 is: that error comes first
    for jobs in (1, 4):
        error = _in_workers(qrels_path, paths, jobs)["error"]
        assert error.startswith(str(paths[1])) and f"run name 'sys0' already used by {paths[0]}" in error


@pytest.mark.slow
def test_the_cli_prints_the_same_with_any_jobs_and_reads_standard_input(tmp_path: Path):
    qrels_path, paths = _collection(tmp_path)

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "exampp", "eval", *args], input=paths[1].read_text(),
                              capture_output=True, text=True)

    files = ["-q", "-m", "all_trec", str(qrels_path), str(paths[0]), "-", *map(str, paths[2:])]
    outputs = [cli("-j", str(jobs), *files) for jobs in (1, 2, 4)]
    assert [out.returncode for out in outputs] == [0, 0, 0], [out.stderr for out in outputs]
    assert outputs[0].stdout == outputs[1].stdout == outputs[2].stdout
    assert outputs[0].stdout.count("runid                 \tall\tsys1") == 1  # the one on standard input
    refused = cli("-j", "0", str(qrels_path), str(paths[0]))
    assert refused.returncode == 2 and "-j" in refused.stderr
