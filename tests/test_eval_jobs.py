"""`exampp eval` on several runs in worker processes (``jobs``): the same output, the same first
error in run order, and a run on standard input still read, as one process gives."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from exampp.cli import main
from exampp.collection.qrels import read_qrels
from exampp.collection.runs import RunFile
from exampp.errors import InputError
from exampp.trec_eval import evaluate_runs, format_trec


def _collection(folder: Path, runs: int = 5) -> tuple[Path, list[Path]]:
    rng = random.Random(3)
    qrels = folder / "qrels"
    qrels.write_text("".join(f"q{q} 0 d{d} {rng.choice([0, 1, 2])}\n" for q in range(8) for d in rng.sample(range(50), 15)))
    paths = []
    for r in range(runs):
        path = folder / f"r{r}.run"
        path.write_text("".join(f"q{q} Q0 d{d} {k} {rng.choice([1.0, 0.5, rng.random()])} sys{r}\n"
                                for q in range(8) for k, d in enumerate(rng.sample(range(50), 30), 1)))
        paths.append(path)
    return qrels, paths


def _text(results) -> str:
    return "".join(format_trec(scores) for scores in results.values())


# In a fresh interpreter (this one may run other tests' threads, and then evaluates here): which
# process evaluated each run, and the text of what came back.
_IN_WORKERS = """
import json, os, sys
from exampp.collection.qrels import read_qrels
from exampp.collection.runs import RunFile
from exampp.trec_eval import engine, evaluate_runs, format_trec
here = []
evaluate = engine.evaluate
engine.evaluate = lambda *a, **k: here.append(os.getpid()) or evaluate(*a, **k)
qrels, jobs, options, paths = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4:]
results = evaluate_runs(read_qrels(qrels), [RunFile(p) for p in paths], ["all_trec"], jobs=jobs, **options)
print(json.dumps({"here": len(here), "names": list(results),
                  "text": "".join(format_trec(scores) for scores in results.values())}))
"""


@pytest.mark.parametrize("options", [{}, {"per_query": True, "complete": True, "max_retrieved": 10}])
def test_workers_give_what_one_process_gives(tmp_path: Path, options):
    import json
    import subprocess
    import sys

    qrels_path, paths = _collection(tmp_path)

    def run(jobs: int) -> dict:
        done = subprocess.run([sys.executable, "-c", _IN_WORKERS, str(qrels_path), str(jobs), json.dumps(options),
                               *map(str, paths)], capture_output=True, text=True, check=True)
        return json.loads(done.stdout)

    one, several = run(1), run(3)
    assert one["here"] == 5 and several["here"] == 0  # the 5 runs were evaluated in the workers
    assert several["names"] == one["names"] == [f"sys{r}" for r in range(5)]
    assert several["text"] == one["text"]
    qrels = read_qrels(qrels_path)  # and in this process, whichever way it goes, the same
    assert _text(evaluate_runs(qrels, [RunFile(p) for p in paths], ["all_trec"], jobs=3, **options)) == one["text"]


def test_the_first_error_in_run_order_is_raised(tmp_path: Path):
    qrels_path, paths = _collection(tmp_path)
    qrels = read_qrels(qrels_path)
    paths[1].write_text(paths[1].read_text() + "q1 Q0 d1 9 x sys1\n")  # a bad score at its last line
    paths[3].write_text("q1 Q0 d1 1 1 sys3\nq1 Q0 d1 2 0.5 sys3\n")  # a docid twice, in a later run
    for jobs in (1, 4):
        with pytest.raises(InputError, match=r"r1\.run:241: score 'x' is not a number"):
            evaluate_runs(qrels, [RunFile(p) for p in paths], ["map"], jobs=jobs)
    paths[1].write_text(paths[0].read_text())  # now run 1 is named as run 0 is: that error comes first
    for jobs in (1, 4):
        with pytest.raises(InputError, match=r"r1\.run: run name 'sys0' already used by .*r0\.run"):
            evaluate_runs(qrels, [RunFile(p) for p in paths], ["map"], jobs=jobs)


def test_the_cli_prints_the_same_with_any_jobs_and_reads_standard_input(tmp_path: Path):
    qrels_path, paths = _collection(tmp_path)
    runner = CliRunner()
    args = ["eval", "-q", "-m", "all_trec", str(qrels_path), str(paths[0]), "-", *map(str, paths[2:])]
    outputs = [runner.invoke(main, [args[0], "-j", str(jobs), *args[1:]], input=paths[1].read_text())
               for jobs in (1, 2, 4)]
    assert all(out.exit_code == 0 for out in outputs), [out.output for out in outputs]
    assert outputs[0].output == outputs[1].output == outputs[2].output
    assert outputs[0].output.count("runid                 \tall\tsys1") == 1  # the one on standard input
    refused = runner.invoke(main, ["eval", "-j", "0", str(qrels_path), str(paths[0])])
    assert refused.exit_code == 2 and "-j" in refused.output
