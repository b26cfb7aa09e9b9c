"""`exampp eval` against NIST trec_eval on thousands of random inputs (benchmarks/trec_eval_diff.py).

Two independent references:
- trec_eval 10.0's own answers to every case, recorded by that script with a binary built from
  source (tests/data/trec_eval_golden.tsv: a SHA-256 of each output, or that it refused); exampp's
  output must hash the same, byte for byte, on every case;
- pytrec_eval (pytrec-eval-terrier: trec_eval 9.0.8's C code behind a Python API), measure by
  measure on each query, on the measures and flags it takes.
"""
from __future__ import annotations

import math
import re

import pytest

from conftest import REPO, load_benchmark

GOLDEN = REPO / "tests" / "data" / "trec_eval_golden.tsv"


diff = load_benchmark("trec_eval_diff")


def _golden() -> tuple[dict[int, str], str]:
    answers, cases = {}, ""
    for line in GOLDEN.read_text().splitlines():
        if line.startswith("# cases "):
            cases = line.split()[2]
        elif not line.startswith("#"):
            seed, digest = line.split("\t")
            answers[int(seed)] = digest
    return answers, cases


@pytest.mark.slow
def test_the_cases_are_those_trec_eval_answered():
    """The generator still makes the cases the golden answers belong to (else: write them anew
    with ``python benchmarks/trec_eval_diff.py --build SRC --cases 3000 --write-golden ...``)."""
    answers, cases = _golden()
    assert len(answers) >= 3000
    assert diff.cases_digest(sorted(answers)) == cases


@pytest.mark.slow
def test_exampp_equals_trec_eval_on_random_cases(tmp_path):
    answers, _ = _golden()
    answered = [seed for seed, digest in answers.items() if digest != "failed"]
    assert len(answered) >= 2000
    wrong = []
    refused = 0
    for seed, digest in answers.items():
        case = diff.make_case(seed)
        got = diff.exampp_answer(case, tmp_path)
        if diff.documented(case) is not None:  # a deliberate difference: exampp refuses the qrels
            refused += 1
            if got.crash or not got.failed:
                wrong.append(f"seed {seed}: exampp did not refuse {diff.documented(case)}")
            continue
        if got.crash or got.digest() != digest:
            wrong.append(f"seed {seed} ({' '.join(case.args)}): "
                         + (got.crash or ("exampp failed" if got.failed else "exampp printed figures")
                                         if digest == "failed" or got.failed else "the outputs differ"))
    assert not wrong, (f"{len(wrong)} of {len(answers)} cases differ from trec_eval "
                       "(see one with: python benchmarks/trec_eval_diff.py --build SRC --show SEED):\n"
                       + "\n".join(wrong[:20]))
    assert refused >= 100  # the cases of issue 24's label spellings


# ---- pytrec_eval, measure by measure ----------------------------------------------------------

# trec_eval 10.0 turns recall levels into document counts by rounding (lround); 9.0.8, which
# pytrec_eval wraps, by (long)(x + 0.9): these two differ by version, not by port
VERSION_DIFFERS = ("iprec_at_recall", "11pt_avg")


def _pytrec_measures(case) -> list[str]:
    import pytrec_eval

    # utility: pytrec_eval turns parameters into a set (1,0.5,0.5,0.5 becomes 0.5,1), which its C
    # code then refuses, defaults included
    specs = {m for m in pytrec_eval.supported_measures if m not in (*VERSION_DIFFERS, "runid", "relstring", "utility")}
    args = list(case.args)
    for flag, value in zip(args, args[1:]):
        name, _, params = value.partition(".")
        values = params.split(",")
        # pytrec_eval makes a set of the parameters, so a repeated one passes where trec_eval stops
        if (flag == "-m" and name in specs and params and all(_plain_number(v) for v in values)
                and len(set(map(float, values))) == len(values)
                and (name not in diff.LONG_CUTOFFS or "0" not in values)):
            specs.discard(name)
            specs.add(value)
    return sorted(specs)


def _plain_number(text: str) -> bool:
    """A parameter pytrec_eval's measure parser takes (digits, maybe a decimal part)."""
    whole, _, decimals = text.partition(".")
    return whole.isdigit() and (not decimals or decimals.isdigit())


def _respelt(case) -> bool:
    """Whether a label of ``case`` is spelt otherwise than int() writes it (``2.0``, ``+2``, ``1e1``)."""
    return any(not re.fullmatch(r"-?(0|[1-9][0-9]*)", line.split()[3]) for line in case.qrels.splitlines())


def _flag(case, name: str, default: int | None) -> int | None:
    for arg in case.args:
        if arg.startswith(name) and len(arg) > 2:
            return int(arg[2:])
    return default


def _top(run: dict[str, dict[str, float]], depth: int | None) -> dict[str, dict[str, float]]:
    """-M: each ranking's first ``depth`` in trec_eval's order (score descending, then docid descending)."""
    if depth is None:
        return run
    return {qid: dict(sorted(docs.items(), key=lambda d: (d[1], d[0]), reverse=True)[:depth])
            for qid, docs in run.items()}


def _same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b) and math.copysign(1, a) == math.copysign(1, b)
    return a == b


@pytest.mark.slow
@pytest.mark.parametrize("start", range(0, 1200, 300))
def test_per_query_values_equal_pytrec_eval(start, tmp_path):
    import pytrec_eval

    from exampp.formats.trec_qrels import read_qrels
    from exampp.formats.trec_run import read_run
    from exampp.trec_eval import evaluate

    compared = 0
    for seed in range(start, start + 300):
        case = diff.make_case(seed)
        if _respelt(case):
            continue  # pytrec_eval reads labels with int(); the golden answers check these
        qrels_path, run_path = diff.reference_case(case).write(tmp_path)
        # trec_eval's C code keeps the last query's ranking by query id between calls
        # (form_res_rels.c), so every case gets query ids of its own in pytrec_eval
        with open(qrels_path) as f:
            qrels = {f"{seed}:{qid}": docs for qid, docs in pytrec_eval.parse_qrel(f).items()}
        lines = [line.split() for line in run_path.read_text().splitlines()]
        run: dict[str, dict[str, float]] = {}
        for qid, _, docid, _, score, _ in lines:
            run.setdefault(f"{seed}:{qid}", {})[docid] = float(score)
        if len(lines) != sum(map(len, run.values())) or not set(run) & set(qrels):
            continue  # duplicate docids (pytrec_eval cannot take them) or nothing to evaluate
        depth, level = _flag(case, "-M", None), _flag(case, "-l", 1)
        if depth == 0 or level < 1:
            continue  # pytrec_eval crashes on an empty ranking and refuses a relevance level below 1
        measures = _pytrec_measures(case)
        try:
            evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level,
                                                       judged_docs_only_flag="-J" in case.args)
        except ValueError:
            continue  # parameters trec_eval refuses (a zero or repeated cutoff)
        expected = evaluator.evaluate(_top(run, depth))
        expected = {qid.partition(":")[2]: values for qid, values in expected.items()}
        scores = evaluate(read_qrels(qrels_path), read_run(run_path), measures, per_query=True,
                          max_retrieved=depth, rel_level=level, judged_only="-J" in case.args)
        got = {(s.query, s.measure): s.value for s in scores if s.query != "all"}
        for qid, values in expected.items():
            for name, value in values.items():
                if name == "runid" or name.startswith(("num_q", "gm_")):
                    continue  # per-query lines trec_eval does not print (gm_: logs)
                ours = got.get((qid, name))
                if ours is None:  # pytrec_eval names set_F.0.5 and 11pt_avg.x,y without their parameters
                    (ours,) = [v for (q, n), v in got.items() if q == qid and n.startswith(name + "_")]
                assert _same(float(ours), value), (seed, case.args, qid, name, ours, value)
                compared += 1
    print(f"{compared} per-query values compared")
    assert compared > 20_000
