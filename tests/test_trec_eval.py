"""exampp.trec_eval / ``exampp eval``: byte-identical to NIST trec_eval, cross-checked with pytrec_eval."""
from __future__ import annotations

import json
import math
import random

import ir_measures
import pytest
import pytrec_eval
from click.testing import CliRunner

from conftest import shared_path
from exampp.cli import main
from exampp.collection.runs import from_scores
from exampp.formats.trec_qrels import read_qrels
from exampp.formats.trec_run import read_run
from exampp.trec_eval import evaluate, evaluate_runs, format_trec, interpolated, select, to_dataframe
from exampp.trec_eval.judged import Settings, judge

ALL_Q = {"per_query": True}
# golden file -> (qrels, results, trec_eval flags, the same as evaluate() arguments);
# see shared/data/trec_eval/README.md
GOLDEN = {
    "out.test": ("qrels.test", "results.test", [], [], {}),
    "out.test.a": ("qrels.test", "results.test", ["-m", "all_trec"], ["all_trec"], {}),
    "out.test.aq": ("qrels.test", "results.test", ["-m", "all_trec", "-q"], ["all_trec"], ALL_Q),
    "out.test.aqc": ("qrels.test", "results.trunc", ["-m", "all_trec", "-q", "-c"], ["all_trec"],
                     {**ALL_Q, "complete": True}),
    "out.test.aqcM": ("qrels.test", "results.trunc", ["-m", "all_trec", "-q", "-c", "-M100"], ["all_trec"],
                      {**ALL_Q, "complete": True, "max_retrieved": 100}),
    "out.test.aql": ("qrels.rel_level", "results.test", ["-m", "all_trec", "-mrelstring.20", "-q", "-l2"],
                     ["all_trec", "relstring.20"], {**ALL_Q, "rel_level": 2}),
}


def _golden_inputs(name, tmp_path):
    qrels_name, results_name = GOLDEN[name][:2]
    # results.trunc has junk after the runid column, which trec_eval (and read_run) ignore
    results = shared_path("data", "trec_eval", results_name)
    return shared_path("data", "trec_eval", qrels_name), results, shared_path("data", "trec_eval", name)


@pytest.mark.shared
@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_via_api(name, tmp_path):
    qrels, results, golden = _golden_inputs(name, tmp_path)
    measures, options = GOLDEN[name][3:]
    text = format_trec(evaluate(read_qrels(qrels), read_run(results), measures, **options))
    assert text.encode() == golden.read_bytes()


@pytest.mark.shared
@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_via_cli(name, tmp_path):
    qrels, results, golden = _golden_inputs(name, tmp_path)
    result = CliRunner().invoke(main, ["eval", *GOLDEN[name][2], str(qrels), str(results)])
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == golden.read_bytes()


def _random_collection(seed: int):
    """Qrels with grades 0-3 and some -1 (pooled, unjudged), runs with many tied scores."""
    rng = random.Random(seed)
    qrels, scores = {}, {}
    for q in range(25):
        docs = [f"d{i}" for i in range(rng.randint(3, 80))]
        judged = rng.sample(docs, rng.randint(1, len(docs)))
        qrels[f"q{q}"] = {d: rng.choice([-1, 0, 0, 0, 1, 1, 2, 3]) for d in judged}
        if q % 6 == 0:
            qrels[f"q{q}"] = {d: 0 for d in judged}  # a query without relevant documents
        if q != 24:  # one qrels query the run lacks
            scores[f"q{q}"] = {d: round(rng.random(), 1) for d in rng.sample(docs, rng.randint(1, len(docs)))}
    scores["only_in_run"] = {"d0": 1.0}
    return qrels, scores


def _per_query_values(qrels, run, settings):
    """Every trec_eval measure's per-query value (also those trec_eval prints only as a summary)."""
    out = {}
    for qid in sorted(set(qrels) & set(run.rankings)):
        judged = judge([d.docid for d in run.rankings[qid]], qrels[qid], settings)
        for measure, params in select(["all_trec"]).trec:
            for name, value in zip(measure.value_names(params), measure.calc(judged, params, settings)):
                out[qid, name] = value
    return out


@pytest.mark.parametrize("level, judged_only", [(1, False), (2, False), (1, True)])
def test_per_query_values_agree_with_pytrec_eval(level, judged_only, monkeypatch):
    # pytrec_eval embeds trec_eval 9.0.x, which turned a recall level into a number of relevant
    # documents as (long)(r * R + 0.9); trec_eval now rounds (lround), as the golden files show.
    monkeypatch.setattr(interpolated, "lround", lambda x: int(x + 0.9))
    qrels, scores = _random_collection(seed=20240611)
    ours = _per_query_values(qrels, from_scores("r", scores), Settings(level, judged_only))
    theirs = pytrec_eval.RelevanceEvaluator(
        qrels, pytrec_eval.supported_measures, relevance_level=level, judged_docs_only_flag=judged_only
    ).evaluate(scores)
    compared, mismatched = 0, []
    for qid, values in theirs.items():
        for name, value in values.items():
            if name in ("runid", "relstring"):  # strings; pytrec_eval reports 0.0
                continue
            compared += 1
            same_nan = math.isnan(value) and math.isnan(ours[qid, name])  # -J can leave nothing retrieved
            if not (same_nan or math.isclose(ours[qid, name], value, rel_tol=1e-12, abs_tol=1e-12)):
                mismatched.append((qid, name, ours[qid, name], value))
    assert len(theirs) == 24 and compared > 24 * 70
    assert mismatched == []


def _lines(scores):
    return {(s.measure, s.query): s.fmt % s.value for s in scores}


TIES_QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 x 1\nq2 0 y 1\nq2 0 z 0\n"
# rank column deliberately wrong: trec_eval ranks by score, ties by docid in descending order
TIES_RUN = "q1 Q0 a 1 1.0 tied\nq1 Q0 b 2 1.0 tied\nq1 Q0 c 3 1.0 tied\nq1 Q0 d 4 2.0 tied\n"


def test_ties_ranked_by_docid_descending(write):
    qrels, run = read_qrels(write("qrels", TIES_QRELS)), read_run(write("run", TIES_RUN))
    # order d (2.0), then the ties c, b, a: a (the relevant one) is at rank 4, after judged b
    lines = _lines(evaluate(qrels, run, ["relstring", "recip_rank", "map", "bpref", "P.1,4"], per_query=True))
    assert lines["relstring", "q1"] == "'--01'"
    assert lines["recip_rank", "q1"] == "0.2500"
    assert lines["map", "q1"] == "0.2500"
    assert lines["bpref", "q1"] == "0.0000"  # the one judged nonrelevant doc precedes it
    assert (lines["P_1", "q1"], lines["P_4", "q1"]) == ("0.0000", "0.2500")
    assert ("map", "q2") not in lines  # q2 is not in the run: skipped without -c
    assert lines["map", "all"] == "0.2500"


def test_max_retrieved_truncates_before_evaluating(write):
    qrels, run = read_qrels(write("qrels", TIES_QRELS)), read_run(write("run", TIES_RUN))
    lines = _lines(evaluate(qrels, run, ["num_ret", "num_rel_ret", "relstring", "P.5", "map"], per_query=True,
                            max_retrieved=3))
    assert lines["num_ret", "q1"] == "3"
    assert lines["num_rel_ret", "q1"] == "0"
    assert lines["relstring", "q1"] == "'--0'"
    assert lines["P_5", "q1"] == "0.0000"
    assert lines["map", "q1"] == "0.0000"


def test_complete_counts_missing_query(write):
    qrels, run = read_qrels(write("qrels", TIES_QRELS)), read_run(write("run", TIES_RUN))
    wanted = ["num_q", "num_ret", "num_rel", "map", "gm_map", "relstring", "utility", "unj.5", "num_nonrel_judged_ret"]
    lines = _lines(evaluate(qrels, run, wanted, per_query=True, complete=True))
    assert lines["num_q", "all"] == "2"
    # q2 is evaluated as an empty ranking: nothing retrieved, both relevant docs missed
    assert [lines[m, "q2"] for m in ("num_ret", "num_rel", "map", "relstring", "utility", "unj_5")] == [
        "0", "2", "0.0000", "''", "0.0000", "0.0000"]
    assert lines["num_nonrel_judged_ret", "q2"] == "0"
    assert lines["num_ret", "all"] == "4"
    assert lines["num_rel", "all"] == "3"
    assert lines["map", "all"] == "0.1250"  # (0.25 + 0) / 2
    assert lines["gm_map", "all"] == f"{math.sqrt(0.25 * 0.00001):6.4f}"  # AP 0 floored at 1e-5
    assert lines["utility", "all"] == "-1.0000"  # q1: 1 relevant - 3 nonrelevant retrieved = -2; q2: 0


def test_measure_parameters_and_names():
    names = lambda specs: [n for m, p in select(specs).trec for n in m.value_names(p)]  # noqa: E731
    assert names(["P.10,5"]) == ["P_5", "P_10"]
    assert names(["P.5", "P.10"]) == ["P_5"]  # first parameters win, as in trec_eval
    assert names(["iprec_at_recall.0.25,.5"]) == ["iprec_at_recall_0.25", "iprec_at_recall_0.50"]
    assert names(["relstring.20", "ndcg.1=3,2=9", "utility.2,-1,0,0"]) == [
        "relstring_20", "utility_2,-1,0,0", "ndcg_1=3,2=9"]  # trec_eval's order, not the command line's
    assert names(["map", "official"])[:3] == ["runid", "num_q", "num_ret"]
    for bad in ["P.", "P.0", "P.5,5", "ndcg.1", "utility.1,2", "nosuchmeasure"]:
        with pytest.raises(ValueError):
            select([bad])


def test_gain_parameters_change_ndcg(write):
    qrels, run = read_qrels(write("qrels", TIES_QRELS)), read_run(write("run", TIES_RUN))
    # q1 ranks d c b a: unjudged, unjudged, grade 0 (now gain 1), grade 1 (gain 3); ideal is a then b
    lines = _lines(evaluate(qrels, run, ["ndcg.0=1,1=3"], per_query=True))
    dcg = 1 / math.log2(4) + 3 / math.log2(5)
    ideal = 3 + 1 / math.log2(3)
    assert lines["ndcg_0=1,1=3", "q1"] == f"{dcg / ideal:6.4f}"


@pytest.mark.shared
def test_ir_measures_names_match_ir_measures(tmp_path):
    qrels = read_qrels(shared_path("data", "trec_eval", "qrels.rel_level"))
    run = read_run(shared_path("data", "trec_eval", "results.test"))
    wanted = [ir_measures.parse_measure(name) for name in ("nDCG@20", "P(rel=2)@10", "AP", "RR")]
    scores = evaluate(qrels, run, ["nDCG@20", "P(rel=2)@10", "AP", "RR", "map"], per_query=True)
    got = {(s.measure, s.query): s.value for s in scores}
    run_dict = {q: {d.docid: d.score for d in docs} for q, docs in run.rankings.items()}
    for measure, value in ir_measures.calc_aggregate(wanted, qrels, run_dict).items():
        assert got[str(measure), "all"] == pytest.approx(value, abs=1e-12)
    for metric in ir_measures.iter_calc(wanted, qrels, run_dict):
        assert got[str(metric.measure), metric.query_id] == pytest.approx(metric.value, abs=1e-12)
    assert got["AP", "all"] == pytest.approx(got["map", "all"], abs=1e-12)  # same measure, two routes
    assert [s.measure for s in scores if s.query == "all"] == ["map", "nDCG@20", "P(rel=2)@10", "AP", "RR"]


def test_several_runs_json_tsv_and_dataframe(write, tmp_path):
    qrels = write("qrels", TIES_QRELS)
    write("runs/a.run", TIES_RUN)
    write("runs/b.run", "q1 Q0 a 1 5.0 other\n")
    runner = CliRunner()
    trec = runner.invoke(main, ["eval", "-m", "runid", "-m", "map", str(qrels), str(tmp_path / "runs")])
    assert trec.exit_code == 0, trec.output
    assert trec.output == ("runid                 \tall\ttied\nmap                   \tall\t0.2500\n"
                           "runid                 \tall\tother\nmap                   \tall\t1.0000\n")
    as_json = runner.invoke(main, ["eval", "-m", "map", "--format", "json", "-q", str(qrels), str(tmp_path / "runs")])
    rows = json.loads(as_json.output)
    assert {(r["run"], r["query"]): r["value"] for r in rows} == {
        ("tied", "q1"): 0.25, ("tied", "all"): 0.25, ("other", "q1"): 1.0, ("other", "all"): 1.0}
    as_tsv = runner.invoke(main, ["eval", "-m", "num_ret", "--format", "tsv", str(qrels), str(tmp_path / "runs")])
    assert as_tsv.output == "run\tmeasure\tquery\tvalue\ntied\tnum_ret\tall\t4\nother\tnum_ret\tall\t1\n"
    runs = [read_run(tmp_path / "runs" / "a.run"), read_run(tmp_path / "runs" / "b.run")]
    frame = to_dataframe(evaluate_runs(read_qrels(qrels), runs, ["map", "P.5"]))
    assert list(frame.columns) == ["run", "measure", "query", "value"]
    assert frame.set_index(["run", "measure"]).loc[("other", "P_5"), "value"] == pytest.approx(0.2)


def test_cli_errors(write):
    qrels = write("qrels", TIES_QRELS)
    run = write("run", TIES_RUN)
    unknown = CliRunner().invoke(main, ["eval", "-m", "nosuchmeasure", str(qrels), str(run)])
    assert unknown.exit_code == 2 and "unknown measure 'nosuchmeasure'" in unknown.output
    disjoint = write("other.run", "q9 Q0 a 1 1.0 r\n")
    result = CliRunner().invoke(main, ["eval", str(qrels), str(disjoint)])
    assert result.exit_code == 1
    assert f"{disjoint}: no queries with both results and relevance judgments" in result.output


@pytest.mark.parametrize("measure, message", [
    ("ndcg@10", "unknown measure 'ndcg@10': neither a trec_eval measure nor an ir_measures name; "
                "did you mean nDCG@10?"),
    ("ndcg_cut10", "unknown measure 'ndcg_cut10': neither a trec_eval measure nor an ir_measures name; "
                   "did you mean ndcg_cut.10?"),
    ("nDCG(foo=1)@10", "measure 'nDCG(foo=1)@10': unsupported params found: ['foo']"),
    ("SDCG@10", "measure 'SDCG@10': it needs the parameter max_rel"),
])
def test_eval_measure_mistakes_are_one_line_usage_errors(measure, message):
    from click.testing import CliRunner

    from exampp.cli import main

    result = CliRunner().invoke(main, ["eval", "-m", measure, "no-such.qrels", "no-such.run"])
    assert result.exit_code == 2  # a usage error, not a traceback
    assert result.output.splitlines()[-1] == f"Error: Invalid value for '-m': {message}"
