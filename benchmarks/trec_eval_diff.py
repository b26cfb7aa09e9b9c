"""`exampp eval` against a NIST trec_eval binary on random inputs, byte for byte.

Each case comes from a seed (Python's ``random.Random``, stable across versions): a few queries of
random qrels (graded, negative and zero relevance, queries without relevant documents, numeric and
alphanumeric ids) and a run (1-2,000 documents per query, ties, equal scores, queries on one side
only, now and then a duplicate docid or lines out of query order), and random trec_eval flags
(``-q -c -J -l -M -N``) with random ``-m`` measures and parameters. Some cases spell their labels
otherwise (``2.0``, ``2e0``, ``+2``, ``002``; now and then ``1e1`` or ``10e-1``, which trec_eval
reads as another grade). Both tools evaluate the same files; their standard output and whether
they failed must be the same, except where exampp differs by design (:func:`documented`).

    python benchmarks/trec_eval_diff.py --cases 3000                       # trec_eval from PATH
    python benchmarks/trec_eval_diff.py --trec-eval ~/trec_eval/trec_eval --cases 3000
    python benchmarks/trec_eval_diff.py --build ~/src/trec_eval            # make it first
    python benchmarks/trec_eval_diff.py --show 17                          # one case, files and diff
    python benchmarks/trec_eval_diff.py --write-golden tests/data/trec_eval_golden.tsv --cases 2500

``--write-golden`` records trec_eval's answer for each case (exit status and a SHA-256 of its
output) so that the test suite (``tests/test_trec_eval_differential.py``) can check exampp
against trec_eval on every case where no binary is at hand, as in CI.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

RUN_NAME = "rnd"

LONG_CUTOFFS = ("P", "recall", "success", "map_cut", "ndcg_cut", "relative_P", "unj")
DOUBLE_CUTOFFS = ("iprec_at_recall", "Rprec_mult")
PAIRS = ("G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "rbp", "rbp_resid")
PLAIN = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
         "recip_rank", "infAP", "gm_bpref", "binG", "set_P", "set_relative_P", "set_recall", "set_map",
         "num_nonrel_judged_ret")
NICKNAMES = ("official", "all_trec", "set")
DCG_TRIO = {"dcg", "ideal_dcg", "ndcg"}


@dataclass(frozen=True)
class Case:
    seed: int
    qrels: str
    run: str
    args: tuple[str, ...]  # trec_eval's flags and -m measures, before the two file names

    def write(self, folder: Path) -> tuple[Path, Path]:
        qrels, run = folder / "qrels", folder / "run"
        qrels.write_text(self.qrels)
        run.write_text(self.run)
        return qrels, run


def make_case(seed: int) -> Case:
    """The random case of ``seed``."""
    rng = random.Random(seed)
    qids = _query_ids(rng)
    grades = rng.choice([(0, 1), (0, 1, 2, 3), (-1, 0, 1, 2), (0, 1, 2, 3, 4), (-2, -1, 0, 5), (0,), (1, 2)])
    style = rng.choice(["d{}", "{}", "D{}x", "doc-{}", "{}a"])
    qrels_lines, run_lines = [], []
    in_both = rng.randrange(len(qids))
    for index, qid in enumerate(qids):
        universe = [style.format(n) for n in rng.sample(range(100_000), rng.choice([3, 10, 50, 300, 2500]))]
        if index == in_both or rng.random() < 0.85:
            judged = rng.sample(universe, min(len(universe), rng.choice([1, 1, 2, 5, 20, 60])))
            # one judgment at least 0: trec_eval breaks on a query whose judgments are all negative
            labels = [rng.choice([g for g in grades if g >= 0])] + [rng.choice(grades) for _ in judged[1:]]
            rng.shuffle(labels)
            qrels_lines.extend(f"{qid} 0 {docid} {label}\n" for docid, label in zip(judged, labels))
        if index == in_both or rng.random() < 0.85:
            run_lines.extend(_ranking(rng, qid, universe))
    if rng.random() < 0.1:
        rng.shuffle(run_lines)  # not grouped by query
    flags = tuple(_flags(rng))
    # a stream of its own, so that a case keeps every other draw it had before labels were respelt
    qrels_lines = _spelt(random.Random(f"label spelling {seed}"), qrels_lines)
    return Case(seed, "".join(qrels_lines), "".join(run_lines), flags)


SAME_SPELLINGS = ("{}.0", "{}e0", "{:+d}", "{:03d}", "{}.")
"""Spellings of a grade that trec_eval (C's ``atol``) and exampp read as the same grade."""
REFUSED_SPELLINGS = ("1e1", "10e-1", "1_0", "0x1")
"""Labels that trec_eval reads as 1, 10, 1 and 0 and Python as 10, 1, 10 and no number: exampp
refuses the qrels, naming the line (README: the deliberate differences from trec_eval)."""


def _spelt(rng: random.Random, lines: list[str]) -> list[str]:
    """Qrels lines with their labels respelt: all of them in one case in seven, each in a spelling
    of :data:`SAME_SPELLINGS`, or one of them in one case in twenty, in one of :data:`REFUSED_SPELLINGS`."""
    def respelt(line: str, label: str) -> str:
        return line.rsplit(" ", 1)[0] + f" {label}\n"

    draw = rng.random()
    if draw < 1 / 7:
        return [respelt(line, rng.choice(SAME_SPELLINGS).format(int(line.split()[3]))) for line in lines]
    if draw < 1 / 7 + 1 / 20:
        index = rng.randrange(len(lines))
        return [*lines[:index], respelt(lines[index], rng.choice(REFUSED_SPELLINGS)), *lines[index + 1:]]
    return lines


def documented(case: Case) -> str | None:
    """The deliberate difference (README) that exampp's answer to ``case`` shows, or None: exampp
    refuses qrels with a label that trec_eval reads as another grade."""
    refused = {line.split()[3] for line in case.qrels.splitlines()} & set(REFUSED_SPELLINGS)
    return "a label trec_eval reads as another grade: exampp refuses it" if refused else None


def cases_digest(seeds) -> str:
    """A SHA-256 of the cases of ``seeds`` (their files and flags): golden answers belong to it."""
    digest = hashlib.sha256()
    for seed in seeds:
        case = make_case(seed)
        digest.update("\0".join((str(seed), case.qrels, case.run, *case.args)).encode() + b"\1")
    return digest.hexdigest()


def _query_ids(rng: random.Random) -> list[str]:
    count = rng.choice([1, 1, 2, 3, 5, 8])
    pool = rng.choice([[str(n) for n in range(1, 400)], [f"q{n}" for n in range(1, 40)],
                       [str(n) for n in (1, 2, 9, 10, 11, 100, 101, 1000)]])
    return rng.sample(pool, min(count, len(pool)))


def _ranking(rng: random.Random, qid: str, universe: list[str]) -> list[str]:
    size = min(len(universe), rng.choice([1, 2, 3, 5, 10, 30, 100, 1000, 2000]))
    docids = rng.sample(universe, size)
    if size > 2 and rng.random() < 0.05:  # a duplicate docid, mostly deep in the ranking
        docids.append(docids[rng.randrange(size)])
    scoring = rng.choice(["distinct", "ties", "equal", "ranks", "negative"])
    lines = []
    for rank, docid in enumerate(docids, 1):
        if scoring == "distinct":
            score = f"{rng.uniform(0, 100):.6f}"
        elif scoring == "ties":
            score = f"{rng.randint(0, 5) / 2:.1f}"
        elif scoring == "equal":
            score = "1"
        elif scoring == "ranks":
            score = str(len(docids) - rank)
        else:
            score = f"{-rng.uniform(0, 10):.3f}"
        lines.append(f"{qid} Q0 {docid} {rank} {score} {RUN_NAME}\n")
    return lines


def _flags(rng: random.Random) -> list[str]:
    flags = []
    for flag, chance in (("-q", 0.6), ("-c", 0.4), ("-J", 0.25)):
        if rng.random() < chance:
            flags.append(flag)
    if rng.random() < 0.3:
        flags.append(f"-l{rng.choice([-1, 0, 0, 1, 2, 3, 5])}")
    if rng.random() < 0.3:
        flags.append(f"-M{rng.choice([0, 1, 2, 5, 10, 50, 1000])}")
    if rng.random() < 0.15:
        flags.append(f"-N{rng.choice([0, 10, 5000])}")
    choice = rng.random()
    if choice < 0.2:
        return flags  # trec_eval's default measures
    if choice < 0.4:
        return flags + ["-m", rng.choice(NICKNAMES)]
    specs = [_measure(rng) for _ in range(rng.randint(1, 4))]
    # dcg, ideal_dcg and ndcg share one parameter block in trec_eval: with parameters on one of
    # them and another asked for, it frees that block twice and crashes (exampp computes each)
    trio = {spec.partition(".")[0] for spec in specs if spec.partition(".")[0] in DCG_TRIO}
    if len(trio) > 1 and any(spec.partition(".")[0] in DCG_TRIO and "." in spec for spec in specs):
        first = next(spec.partition(".")[0] for spec in specs if spec.partition(".")[0] in DCG_TRIO)
        specs = [spec for spec in specs if spec.partition(".")[0] not in DCG_TRIO - {first}]
    for spec in specs:
        flags += ["-m", spec]
    return flags


def _measure(rng: random.Random) -> str:
    spec = _plain_measure(rng)
    name, dot, params = spec.partition(".")
    if dot and rng.random() < 0.1:  # trec_eval reads parameters with atol/atof: leading junk-free prefixes
        parts = params.split(",")
        at = rng.randrange(len(parts))
        key, eq, value = parts[at].rpartition("=")
        # ... and huge values, which C casts to int or long (x86-64: the most negative one)
        value = rng.choice([f"{value}x", f" {value}", f"+{value}", f"{value}e0", "", "abc", "1e1", "0x1p-1",
                            "3e9", "-3e9", "1e300", "1e19"])
        parts[at] = f"{key}{eq}{value}"
        spec = f"{name}.{','.join(parts)}"
    return spec


def _plain_measure(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.2:
        return rng.choice(PLAIN)
    if kind < 0.4:
        cutoffs = rng.sample([1, 2, 3, 5, 10, 20, 100, 1000], rng.randint(1, 3))
        if rng.random() < 0.05:
            cutoffs.append(rng.choice([0, -3, cutoffs[0]]))  # trec_eval refuses these
        return f"{rng.choice(LONG_CUTOFFS)}.{','.join(map(str, cutoffs))}"
    if kind < 0.55:
        values = rng.sample(["0", "0.0", ".1", "0.25", "0.333", "0.5", "1", "1.5", "2", "0.05", "0.15",
                             "0.95", "-0.5", "0.7"], rng.randint(1, 3))
        return f"{rng.choice(DOUBLE_CUTOFFS)}.{','.join(values)}"
    if kind < 0.85:
        pairs = [f"{rng.choice(['-1', '0', '1', '2', '3', '4'])}="
                 f"{rng.choice(['-1', '0', '0.5', '1', '1.5', '2.25', '3', '10'])}"
                 for _ in range(rng.randint(1, 3))]
        name = rng.choice(PAIRS)
        if name.startswith("rbp") and rng.random() < 0.6:
            pairs.insert(rng.randrange(len(pairs) + 1), f"p={rng.choice(['0.5', '0.8', '0.95', '1', '0', '1.2'])}")
        return f"{name}.{','.join(pairs)}"
    name = rng.choice(["utility", "set_F", "11pt_avg", "relstring"])
    if name == "utility":
        values = [rng.choice(["1", "-1", "0", "2", "0.5"]) for _ in range(4)]
    elif name == "set_F":
        values = [rng.choice(["0", "0.5", "1", "2", "-1"])]
    elif name == "relstring":
        values = [rng.choice(["1", "5", "20", "0"])]
    else:
        values = sorted(rng.sample(["0", "0.1", "0.2", "0.25", "0.5", "0.75", "1"], rng.randint(1, 4)))
    return f"{name}.{','.join(values)}"


def without_rbp(output: bytes) -> bytes:
    """An output without its rbp lines (rbp_resid's stay)."""
    return b"".join(line for line in output.splitlines(keepends=True)
                    if not (line.startswith(b"rbp") and not line.startswith(b"rbp_resid")))


def reference_case(case: Case) -> Case:
    """The case as trec_eval is given it: without ``-c``, the qrels lose the queries the run lacks.

    trec_eval 10.0 stops at such a query ("result qid ... not found in qrels") where 9.x and exampp
    skip it; a skipped query adds nothing, so leaving it out of trec_eval's qrels checks exampp's
    figures all the same.
    """
    if "-c" in case.args:
        return case
    in_run = {line.split(maxsplit=1)[0] for line in case.run.splitlines()}
    qrels = "".join(line for line in case.qrels.splitlines(keepends=True) if line.split(maxsplit=1)[0] in in_run)
    return Case(case.seed, qrels, case.run, case.args)


# ---- running both tools ----------------------------------------------------------------------

@dataclass(frozen=True)
class Answer:
    failed: bool
    output: bytes
    crash: str = ""  # exampp's uncaught exception (a bug whatever trec_eval does)

    def digest(self) -> str:
        return "failed" if self.failed else hashlib.sha256(self.output).hexdigest()


def trec_eval_answer(binary: str, case: Case, folder: Path, rbp: bool = True) -> Answer:
    """trec_eval's answer; ``rbp=False`` leaves rbp's lines out (an unpatched binary's, see :func:`build`)."""
    qrels, run = reference_case(case).write(folder)
    done = subprocess.run([binary, *case.args, str(qrels), str(run)], capture_output=True, timeout=60)
    return Answer(done.returncode != 0, done.stdout if rbp else without_rbp(done.stdout))


def exampp_answer(case: Case, folder: Path, rbp: bool = True) -> Answer:
    """``exampp eval`` in this process (click's runner), on the same files."""
    from click.testing import CliRunner

    from exampp.cli import main

    qrels, run = case.write(folder)
    result = CliRunner().invoke(main, ["eval", *case.args, str(qrels), str(run)], catch_exceptions=True)
    crash = result.exception
    if crash is not None and not isinstance(crash, SystemExit):
        return Answer(True, result.stdout_bytes, f"{type(crash).__name__}: {crash}")
    return Answer(result.exit_code != 0, result.stdout_bytes if rbp else without_rbp(result.stdout_bytes))


def first_difference(expected: Answer, got: Answer) -> str:
    """A short description of where two answers part."""
    if got.crash:
        return f"exampp crashed ({got.crash})"
    if expected.failed != got.failed:
        return "trec_eval failed, exampp did not" if expected.failed else "exampp failed, trec_eval did not"
    want, have = expected.output.decode().splitlines(), got.output.decode().splitlines()
    for line, (a, b) in enumerate(zip(want, have), 1):
        if a != b:
            return f"line {line}: trec_eval {a!r}, exampp {b!r}"
    return f"trec_eval printed {len(want)} lines, exampp {len(have)}"


def measure_of(difference: str) -> str:
    """The measure named in a difference (for the summary), or the kind of difference."""
    if not difference.startswith("line"):
        return difference if difference.startswith("exampp crashed") else difference.split(",")[0]
    quoted = re.match(r"line \d+: trec_eval ['\"]\s*(\S+)", difference)  # repr quotes with ' or "
    name = quoted.group(1) if quoted else "?"
    roots = [r for r in (*LONG_CUTOFFS, *DOUBLE_CUTOFFS, *PAIRS, *PLAIN, "utility", "set_F", "11pt_avg", "relstring")
             if name == r or name.startswith(r + "_")]
    return max(roots, key=len, default=name)


RBP_PATCH = ("double sum, min, max;", "double sum, min = 1e308, max = -1e308;")
"""trec_eval 10.0's m_rbp.c rescales gains outside [0, 1] by a minimum and maximum it never
initialises, so its rbp figures depend on what the stack held (they change with the measures
computed before). The binary built here starts them where the loop that follows means them to
(the gains' own minimum and maximum), as exampp does; the only change made to trec_eval."""


def build(source: Path) -> str:
    """``make`` trec_eval in a copy of its source folder, with :data:`RBP_PATCH`; returns the binary."""
    target = Path(tempfile.mkdtemp(prefix="trec_eval_build_")) / "src"
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("trec_eval", "*.o"))
    rbp = target / "m_rbp.c"
    if rbp.exists():
        rbp.write_text(rbp.read_text().replace(*RBP_PATCH))
    subprocess.run(["make", "-C", str(target)], check=True, capture_output=True)
    return str(target / "trec_eval")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trec-eval", metavar="PATH", help="trec_eval binary (default: trec_eval on PATH)")
    parser.add_argument("--build", metavar="SRC", help="build trec_eval from this source folder first (make)")
    parser.add_argument("--rbp", action="store_true", help="compare rbp too: the binary was built by --build")
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--start", type=int, default=0, help="first seed")
    parser.add_argument("--show", type=int, metavar="SEED", help="print one case, both outputs' difference")
    parser.add_argument("--write-golden", metavar="FILE", help="write trec_eval's answers (seed, SHA-256)")
    args = parser.parse_args()
    binary = build(Path(args.build)) if args.build else args.trec_eval or shutil.which("trec_eval")
    if binary is None:
        raise SystemExit("no trec_eval: give --trec-eval PATH or --build SRC, or put trec_eval on PATH")
    rbp = bool(args.build) or args.rbp
    if not rbp:
        print("rbp lines left out: trec_eval's m_rbp.c reads two variables it never sets (--build SRC patches it)")
    if args.write_golden and not rbp:
        raise SystemExit("--write-golden needs a binary built with --build (or --rbp for one built so)")
    version = subprocess.run([binary, "-v"], capture_output=True, text=True)
    version = (version.stdout + version.stderr).strip()
    print(f"trec_eval: {binary} ({version})")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.show is not None:
            _show(binary, make_case(args.show), folder, rbp)
            return
        _compare(binary, range(args.start, args.start + args.cases), folder, args.write_golden, rbp, version)


def _show(binary: str, case: Case, folder: Path, rbp: bool) -> None:
    print("flags:", " ".join(case.args))
    print(f"--- qrels ({case.qrels.count(chr(10))} lines)\n{case.qrels[:2000]}")
    print(f"--- run ({case.run.count(chr(10))} lines)\n{case.run[:2000]}")
    expected, got = trec_eval_answer(binary, case, folder, rbp), exampp_answer(case, folder, rbp)
    print("--- trec_eval", "failed" if expected.failed else "", "\n" + expected.output.decode())
    print("--- exampp", "failed" if got.failed else "", "\n" + got.output.decode())
    print("same" if expected == got else first_difference(expected, got))
    if documented(case):
        print("by design (README, deliberate differences):", documented(case))


def _compare(binary: str, seeds: range, folder: Path, golden: str | None, rbp: bool, version: str) -> None:
    start = time.perf_counter()
    differences: Counter[str] = Counter()
    deliberate: Counter[str] = Counter()
    examples: dict[str, int] = {}
    rows = []
    failures = 0
    for seed in seeds:
        case = make_case(seed)
        expected = trec_eval_answer(binary, case, folder, rbp)
        got = exampp_answer(case, folder, rbp)
        failures += expected.failed
        rows.append(f"{seed}\t{expected.digest()}\n")
        reason = documented(case)
        if reason is not None and got.failed and not got.crash:
            deliberate[reason] += 1
            continue
        if (reason is None and not got.crash and expected.failed == got.failed
                and (expected.failed or expected.output == got.output)):
            continue
        if reason is not None and not got.crash:
            kind = f"exampp did not refuse {reason}"
        else:
            kind = measure_of(first_difference(expected, got))
        differences[kind] += 1
        examples.setdefault(kind, seed)
    seconds = time.perf_counter() - start
    print(f"{len(seeds)} cases (seeds {seeds.start}-{seeds.stop - 1}) in {seconds:.0f} s; "
          f"trec_eval refused {failures}; {sum(differences.values())} differ")
    for kind, count in differences.most_common():
        print(f"  {count:5d}  {kind}  (e.g. --show {examples[kind]})")
    for reason, count in deliberate.items():
        print(f"{count} more by design (README, deliberate differences): {reason}")
    if golden:
        tmp = Path(golden).with_suffix(".tmp")
        tmp.write_text(f"# trec_eval's answers to benchmarks/trec_eval_diff.py's cases: seed, SHA-256 of its output\n"
                       f"# (or 'failed'); {version}, built by --build (rbp patched)\n"
                       f"# cases {cases_digest(seeds)}\n" + "".join(rows))
        os.replace(tmp, golden)
        print(f"wrote {golden}")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
