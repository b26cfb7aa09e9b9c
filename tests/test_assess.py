"""exampp assess: sampling designs, estimators and their intervals, the jobs and the commands.

Truths are worked out by hand or by an independent route: ir_measures for the measures, exact
enumeration of every Poisson sample for unbiasedness, a brute-force search for the robust critical
value, the synthetic workspace's known human grades for coverage."""
from __future__ import annotations

import itertools
import json
import math

import ir_measures
import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from assess_workspace import truth, write_workspace
from exampp.api.assess import AssessError, EstimateJob, PlanJob, SampleJob, draw_sample, judge_agreement
from exampp.assess import design
from exampp.assess.estimators import Evidence, estimate
from exampp.assess.measures import AssessMeasure, Layout
from exampp.assess.shrinkage import _non_coverage, robust_critical_value
from exampp.cli import main
from exampp.errors import InputError
from exampp.formats.assessment_sample import SamplePair, read_sample, write_sample

# --- designs ---------------------------------------------------------------------------------------

def test_inclusion_probabilities_take_the_largest_for_sure_and_spread_the_rest():
    # sizes 4,1,1,1,1 and budget 2: c = 0.25 gives the first 4 * 0.25 = 1, the others 0.25 each, sum 2
    assert design.inclusion_probabilities(np.array([4.0, 1, 1, 1, 1]), 2) == pytest.approx([1, 0.25, 0.25, 0.25, 0.25])
    # sizes 9,9,1,1 budget 3: both 9s certain, the two 1s share the last pair
    assert design.inclusion_probabilities(np.array([9.0, 9, 1, 1]), 3) == pytest.approx([1, 1, 0.5, 0.5])
    assert design.inclusion_probabilities(np.array([1.0, 2, 3]), 5) == pytest.approx([1, 1, 1])


def test_a_larger_budget_draws_a_superset_in_the_same_order():
    sizes = np.random.default_rng(0).gamma(1.0, size=200) + 0.01
    u = design.permanent_uniforms(3, ["q"] * 200, [f"d{i}" for i in range(200)])
    small, _, _ = design.draw(sizes, u, 20)
    large, probabilities, priorities = design.draw(sizes, u, 60)
    assert list(large[:20]) == list(small)
    assert list(priorities) == sorted(priorities)
    assert probabilities.sum() <= 60 and (probabilities > 0).all()


def test_a_pairs_number_depends_on_the_seed_and_its_ids_alone():
    alone = design.permanent_uniforms(5, ["q1"], ["d1"])
    among = design.permanent_uniforms(5, ["q0", "q1", "q2"], ["x", "d1", "y"])
    assert alone[0] == among[1]
    assert design.permanent_uniforms(6, ["q1"], ["d1"])[0] != alone[0]
    assert 0 < alone[0] < 1


def test_stratified_sizes_are_neyman_and_every_strategy_keeps_a_uniform_share():
    sd = np.array([0.3, 0.3, 0.5, 0.5])
    sizes = design.sizes_for("stratified", sd)
    # the strategy's part is proportional to the sd (Neyman), mixed with DEFENSIVE of the uniform design
    raw = sd / sd.mean()
    assert sizes == pytest.approx((1 - design.DEFENSIVE) * raw + design.DEFENSIVE)
    weights = {"m": np.array([[1.0, 1, 0, 0], [1.0, 0, 1, 0]])}
    squares, spread = design.run_weight_sums(weights)
    # pair 0 is in both runs: it weighs most for the runs' values and nothing for their difference
    assert squares == pytest.approx(np.array([2, 1, 1, 0]) / 4)
    assert spread == pytest.approx(np.array([0, 1, 1, 0]) / 4)
    assert design.sizes_for("separating", sd, squares, spread)[0] == pytest.approx(design.DEFENSIVE)


# --- measures against ir_measures ------------------------------------------------------------------

def _layout(rankings: dict[str, dict[str, list[str]]], pool: list[tuple[str, str]]) -> Layout:
    queries = sorted({q for q, _ in pool})
    at = {pair: d for d, pair in enumerate(pool)}
    runs = sorted(rankings)
    return Layout(tuple(runs), tuple(queries), np.array([queries.index(q) for q, _ in pool]),
                  tuple(tuple(np.array([at[(q, d)] for d in rankings[r].get(q, [])], dtype=int) for q in queries)
                        for r in runs))


def test_fully_judged_measures_equal_ir_measures():
    rng = np.random.default_rng(1)
    pool = [(f"q{q}", f"d{d}") for q in range(4) for d in range(12)]
    grades = {pair: int(rng.choice(4, p=[0.5, 0.2, 0.2, 0.1])) for pair in pool}
    rankings = {f"r{r}": {f"q{q}": [f"d{d}" for d in rng.permutation(12)[:int(rng.integers(3, 12))]]
                          for q in range(4) if not (r == 2 and q == 1)} for r in range(5)}  # r2 skips q1: 0
    layout = _layout(rankings, pool)
    human = np.array([grades[pair] for pair in pool], dtype=float)
    everything = Evidence(layout, np.zeros(len(pool)), 1.0, np.arange(len(pool)), np.ones(len(pool)), human[:, None])
    measures = [AssessMeasure.parse("P@5", rel_level=2), AssessMeasure.parse("nDCG@10"),
                AssessMeasure.parse("P(rel=1)@3")]
    table = estimate(everything, measures, estimator="humans", replicates=2).table
    qrels = [ir_measures.Qrel(q, d, g) for (q, d), g in grades.items()]
    for run in rankings:
        docs = [ir_measures.ScoredDoc(q, d, -i) for q, ranked in rankings[run].items() for i, d in enumerate(ranked)]
        per_query = {m: {q: 0.0 for q in layout.queries} for m in ("P(rel=2)@5", "nDCG@10", "P(rel=1)@3")}
        for metric in ir_measures.iter_calc([ir_measures.parse_measure(m) for m in per_query], qrels, docs):
            per_query[str(metric.measure).replace("P@3", "P(rel=1)@3")][metric.query_id] = metric.value
        for ours, theirs in zip(("P@5", "nDCG@10", "P(rel=1)@3"), per_query):
            got = table[(table["run"] == run) & (table["measure"] == ours)]
            # every query counts, one a run does not answer as 0 (trec_eval -c)
            assert got["estimate"].iloc[0] == pytest.approx(np.mean(list(per_query[theirs].values())), abs=1e-12)
            assert got["low"].iloc[0] == got["high"].iloc[0] == got["estimate"].iloc[0]  # nothing left to estimate


def test_measure_names():
    assert AssessMeasure.parse("P(rel=2)@10") == AssessMeasure("P(rel=2)@10", "P", 10, 2.0)
    assert AssessMeasure.parse("P@10", rel_level=3).rel == 3.0
    for bad in ("AP", "P", "nDCG(dcg=exp-log2)@10", "nonsense@"):
        with pytest.raises(ValueError):
            AssessMeasure.parse(bad)


# --- estimators -----------------------------------------------------------------------------------

def test_horvitz_thompson_is_unbiased_over_every_poisson_sample():
    # 5 pairs, one run ranking all of them: E[estimate] over all 2^5 samples, each with its Poisson
    # probability, is the fully judged P@5
    layout = _layout({"r": {"q": [f"d{i}" for i in range(5)]}}, [("q", f"d{i}") for i in range(5)])
    human = np.array([1.0, 0, 1, 1, 0])
    pi = np.array([0.9, 0.3, 0.5, 0.2, 0.6])
    expected = 0.0
    for included in itertools.product((0, 1), repeat=5):
        chosen = np.flatnonzero(included)
        weight = np.prod(np.where(np.array(included) == 1, pi, 1 - pi))
        if len(chosen) == 0:
            continue  # the empty sample estimates 0
        evidence = Evidence(layout, np.zeros(5), 1.0, chosen, pi[chosen], human[chosen][:, None])
        expected += weight * estimate(evidence, [AssessMeasure.parse("P@5")], estimator="humans",
                                      replicates=2).table["estimate"].iloc[0]
    assert expected == pytest.approx(human.mean(), abs=1e-12)


@pytest.mark.slow
def test_the_robust_critical_value():
    assert robust_critical_value(0.0, 0.1) == pytest.approx(stats.norm.ppf(0.95))
    # an independent route: at chi, no two-point distribution of t (mass at 0 and at t0, E t^2 = m2)
    # nor a point mass has average non-coverage above alpha, and one reaches it
    for m2, alpha in ((1.0, 0.05), (400.0, 0.05), (0.3, 0.1)):
        chi = robust_critical_value(m2, alpha)
        worst = _non_coverage(np.array([m2]), chi)[0]
        for t0 in np.linspace(math.sqrt(m2), 4 * chi, 20001):
            share = m2 / t0 ** 2
            worst = max(worst, (1 - share) * _non_coverage(np.array([0.0]), chi)[0]
                        + share * _non_coverage(np.array([t0 ** 2]), chi)[0])
        assert worst == pytest.approx(alpha, abs=5e-4)
    # far from the truth the bias may sit on a few runs only: chi grows like Chebyshev's sqrt(m2 / alpha)
    assert 20 + stats.norm.ppf(0.975) < robust_critical_value(400.0, 0.05) <= math.sqrt(400 / 0.05)
    assert robust_critical_value(0.5, 0.05) < robust_critical_value(2.0, 0.05)


def _synthetic(tmp_path):
    return write_workspace(tmp_path / "ws")


@pytest.mark.slow
def test_every_interval_holds_its_estimate_and_eb_covers_the_synthetic_truth(tmp_path):
    from exampp.api.assess import workspace_judge

    ws = _synthetic(tmp_path)
    measures = [AssessMeasure.parse("P@10", rel_level=2)]
    judge = workspace_judge(ws, measures)
    pop = judge.population
    human_grades, _ = truth()
    human = np.array([float(human_grades[q][d]) for q, d in zip(pop.query_ids, pop.keys)])
    everything = Evidence(pop.layout, pop.judge, judge.relevant_grade, np.arange(len(human)), np.ones(len(human)),
                          human[:, None])
    true = estimate(everything, measures, estimator="humans", replicates=2).table["estimate"].to_numpy()
    sizes = design.sizes_for("stratified", design.prior_sd(pop.judge, 5.0))
    covered = {"eb": [], "calibrated": []}
    for seed in range(30):
        chosen, pi, _ = design.draw(sizes, design.permanent_uniforms(seed, pop.query_ids, pop.keys), 30)
        evidence = Evidence(pop.layout, pop.judge, judge.relevant_grade, chosen, pi, human[chosen][:, None])
        for estimator in covered:
            table = estimate(evidence, measures, estimator=estimator, level=0.9, replicates=300, seed=seed).table
            assert (table["low"] <= table["estimate"]).all() and (table["estimate"] <= table["high"]).all()
            covered[estimator].extend((table["low"] <= true + 1e-12) & (true <= table["high"] + 1e-12))
    # 30 fixed draws x 8 runs; nominal 90%
    assert np.mean(covered["eb"]) >= 0.85
    assert np.mean(covered["calibrated"]) >= 0.85


# --- the jobs and the commands --------------------------------------------------------------------

def _labels_for(sample, qrels_out):
    human, _ = truth()
    pairs = read_sample(sample)
    qrels_out.write_text("".join(f"{p.query_id} 0 {p.doc_id} {human[p.query_id][p.doc_id]}\n" for p in pairs))
    return pairs


def _labelled(tmp_path, budget: int):
    """(workspace, sample of ``budget`` pairs, its labels from the synthetic truth)."""
    ws = _synthetic(tmp_path)
    sample = tmp_path / "s.tsv"
    draw_sample(SampleJob(ws, budget, output=sample))
    labels = tmp_path / "labels.qrels"
    _labels_for(sample, labels)
    return ws, sample, labels


def test_sample_extends_and_refuses_a_sample_it_cannot_extend(tmp_path):
    ws = _synthetic(tmp_path)
    out = tmp_path / "sample.tsv"
    first = draw_sample(SampleJob(ws, 10, seed=1, output=out))
    assert [p.key for p in read_sample(out)] == [p.key for p in first.pairs]
    second = draw_sample(SampleJob(ws, 25, seed=1, output=out))
    assert second.kept == 10 and [p.key for p in second.pairs[:10]] == [p.key for p in first.pairs]
    with pytest.raises(AssessError, match="not in the new draw"):
        draw_sample(SampleJob(ws, 25, seed=2, output=out))
    assert sum(p.inclusion_probability for p in read_sample(out)) <= 25 + 1e-9


def test_estimate_json_and_agreement_on_the_synthetic_workspace(tmp_path):
    ws = _synthetic(tmp_path)
    runner = CliRunner()
    sample = tmp_path / "s.tsv"
    result = runner.invoke(main, ["assess", "sample", "-w", str(ws), "--budget", "40", "-o", str(sample)])
    assert result.exit_code == 0, result.output
    labels = tmp_path / "labels.qrels"
    pairs = _labels_for(sample, labels)
    result = runner.invoke(main, ["assess", "estimate", "-w", str(ws), "--labels", str(labels), "--sample", str(sample),
                                  "-m", "P@10", "-m", "nDCG@10", "--rel-level", "2", "--format", "json"])
    assert result.exit_code == 0, result.output
    board = json.loads(result.stdout)
    assert sorted(board) == [f"r{n}" for n in range(8)]
    for run in board.values():
        for name in ("P@10", "nDCG@10"):
            assert run[name]["low"] <= run[name]["estimate"] <= run[name]["high"]
    agreement = judge_agreement(ws, sample=sample, labels=labels, rel_level=2)
    assert agreement.n_pairs == len(pairs) == 40
    assert int(agreement.confusion.to_numpy().sum()) == 40
    # kappa recounted from the labelled pairs: judge grade >= 4 against human grade >= 2
    human, judge = truth()
    j = np.array([judge[p.query_id][p.doc_id] >= 4 for p in pairs])
    h = np.array([human[p.query_id][p.doc_id] >= 2 for p in pairs])
    po = np.mean(j == h)
    pe = j.mean() * h.mean() + (1 - j.mean()) * (1 - h.mean())
    assert agreement.kappa == pytest.approx((po - pe) / (1 - pe))
    plan = PlanJob(ws, sample=sample, labels=labels, target_width=0.2, rel_level=2).run()
    row = plan.table.iloc[0]
    assert row["labels"] == 40 and 1 <= row["labels_needed"] <= row["pool"]


def test_unlabelled_pairs_are_non_response_and_stray_labels_are_left_out(tmp_path):
    ws = _synthetic(tmp_path)
    sample = tmp_path / "s.tsv"
    draw_sample(SampleJob(ws, 30, output=sample))
    labels = tmp_path / "labels.qrels"
    pairs = _labels_for(sample, labels)
    kept = labels.read_text().splitlines()[:20] + ["q0 0 nowhere 1"]
    labels.write_text("\n".join(kept) + "\n")
    warnings: list[str] = []
    result = EstimateJob(ws, sample=sample, labels=labels, rel_level=2).run(warn=warnings.append)
    assert len(result.table) == 8
    assert any("10 of 30 sampled pairs have no label" in w for w in warnings)
    assert any("1 labelled pair(s) are not in the sample" in w for w in warnings)
    assert len(pairs) == 30


def test_a_bad_sample_file_names_its_line(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("query_id\tdoc_id\tinclusion_probability\nq1\td1\t0.5\nq1\td2\t1.5\n")
    with pytest.raises(InputError, match=r"bad.tsv:3: inclusion_probability must be in \(0, 1\]"):
        read_sample(bad)
    bad.write_text("query_id\tdoc\n")
    with pytest.raises(InputError, match="bad.tsv:1: the header lacks the column"):
        read_sample(bad)
    bad.write_text("query_id\tdoc_id\tinclusion_probability\nq1\td1\t0.5\nq1\td1\t0.5\n")
    with pytest.raises(InputError, match="bad.tsv:3: the pair q1 d1 is in the sample twice"):
        read_sample(bad)


def test_sample_files_round_trip(tmp_path):
    pairs = [SamplePair("q1", "d1", 0.25, "judge=4", 0.001), SamplePair("q2", "d9", 1.0, "judge=0", 0.5)]
    write_sample(pairs, tmp_path / "s.tsv")
    assert read_sample(tmp_path / "s.tsv") == pairs
    nuggets = [SamplePair("q1", None, 0.5, "", 0.1, run="runA", nugget_id="3")]
    write_sample(nuggets, tmp_path / "n.tsv")
    assert read_sample(tmp_path / "n.tsv") == nuggets and nuggets[0].key == "runA/3"
    sentences = [SamplePair("q1", None, 0.25, "judge=2", 0.1, run="runA", sentence_id="4")]
    write_sample(sentences, tmp_path / "s.tsv")
    assert read_sample(tmp_path / "s.tsv") == sentences and sentences[0].key == "runA/4"
    assert (tmp_path / "s.tsv").read_text().splitlines()[0].split("\t")[:3] == ["query_id", "run", "sentence_id"]
    with pytest.raises(ValueError, match="one kind"):
        write_sample(nuggets + sentences, tmp_path / "mixed.tsv")


@pytest.mark.slow
def test_ppi_needs_a_mean_and_the_judge_has_no_interval(tmp_path):
    ws, sample, labels = _labelled(tmp_path, 30)
    with pytest.raises(AssessError, match="fits means of pair labels"):
        EstimateJob(ws, sample=sample, labels=labels, measures=["nDCG@10"], estimator="ppi").run()
    judged = EstimateJob(ws, sample=sample, labels=labels, estimator="judge", rel_level=2).run().table
    assert judged["low"].isna().all()
    ppi = EstimateJob(ws, sample=sample, labels=labels, estimator="ppi++", rel_level=2).run().table
    assert ((ppi["low"] <= ppi["estimate"]) & (ppi["estimate"] <= ppi["high"])).all()


def test_labels_imported_into_the_store_estimate_as_the_file_does(tmp_path):
    from exampp.api.assess_labels import import_labels

    ws, sample, labels = _labelled(tmp_path, 30)
    import_labels(ws, labels, assessor="ann")
    from_file = EstimateJob(ws, sample=sample, labels=labels, rel_level=2).run().table
    from_store = EstimateJob(ws, sample=sample, rel_level=2).run().table
    assert from_store.equals(from_file)


# --- nuggets: RAG answers -------------------------------------------------------------------------

def _answers(seed: int, judge: bool = False):
    """3 topics x 5 runs (run4 skips t2) with 4 nuggets a topic (the first two vital); the assessors'
    assignment from ``seed``, the judge's a noisy copy."""
    from exampp.formats.nugget_assignments import ASSIGNMENTS, Answer, AssignedNugget

    rng = np.random.default_rng(seed)
    answers = []
    for t in range(3):
        for r in range(5):
            if r == 4 and t == 2:
                continue
            nuggets = []
            for i in range(4):
                grade = int(rng.choice(3, p=[0.4, 0.2, 0.4]))
                if judge and rng.random() < 0.3:
                    grade = int(rng.integers(3))
                nuggets.append(AssignedNugget(f"nugget {t}-{i}", "vital" if i < 2 else "okay", ASSIGNMENTS[grade]))
            answers.append(Answer(f"t{t}", f"run{r}", f"answer {t} {r}", tuple(nuggets)))
    return answers


def test_fully_judged_nugget_measures_equal_the_tracks_scores(tmp_path):
    from exampp.analysis.nugget_scores import MEASURES, per_answer, run_scores
    from exampp.assess.population import nugget_population

    people = _answers(0)
    pop = nugget_population(people)
    everything = Evidence(pop.layout, pop.judge, 2.0, np.arange(len(pop.keys)), np.ones(len(pop.keys)),
                          pop.judge[:, None])
    table = estimate(everything, [AssessMeasure.parse(m) for m in MEASURES], estimator="humans", replicates=2).table
    board = run_scores(per_answer(people)).set_index("run")
    for row in table.itertuples():
        assert row.estimate == pytest.approx(board.at[row.run, row.measure], abs=1e-12)


def test_a_nugget_sample_estimates_from_the_assessors_file(tmp_path):
    from exampp.formats.nugget_assignments import write_assignments

    ours, people = tmp_path / "ours.jsonl", tmp_path / "people.jsonl"
    write_assignments(_answers(0, judge=True), ours)
    write_assignments(_answers(0), people)
    sample = tmp_path / "s.tsv"
    result = draw_sample(SampleJob(tmp_path, 20, measures=("V_strict",), nuggets=ours, output=sample))
    quiet: list[str] = []
    assert all(p.is_nugget for p in read_sample(sample)) and len(result.pairs) == 20
    full = draw_sample(SampleJob(tmp_path, 1000, measures=("V_strict",), nuggets=ours, output=tmp_path / "all.tsv"),
                       quiet.append)
    assert len(full.pairs) == 56  # every (answer, nugget) pair: 14 answers x 4 nuggets
    table = EstimateJob(tmp_path, sample=tmp_path / "all.tsv", labels=people, measures=["V_strict", "A"],
                        nuggets=ours, estimator="calibrated").run(warn=quiet.append).table
    from exampp.analysis.nugget_scores import per_answer, run_scores

    board = run_scores(per_answer(_answers(0))).set_index("run")
    for row in table.itertuples():
        assert row.estimate == pytest.approx(board.at[row.run, row.measure], abs=1e-12)
    some = EstimateJob(tmp_path, sample=sample, labels=people, measures=["V_strict"],
                       nuggets=ours).run(warn=quiet.append).table
    assert ((some["low"] <= some["estimate"]) & (some["estimate"] <= some["high"])).all()
    with pytest.raises(AssessError, match="need the judge's assignment"):
        draw_sample(SampleJob(tmp_path, 20, measures=("V_strict",)))


# --- citation support: RAG answers -----------------------------------------------------------------

def _cited(seed: int, judge: bool = False):
    """3 topics x 4 runs (run3 skips t1); each answer 3 sentences, the last citing nothing, the first
    citing two segments (so that precision's mean and recall's best differ), the second one; the
    assessors' support from ``seed``, the judge's a noisy copy with one citation left unjudged."""
    from exampp.formats.citations import Citation, CitedAnswer, Sentence

    rng = np.random.default_rng(seed)
    noise = np.random.default_rng(seed + 1)
    answers = []
    for t in range(3):
        for r in range(4):
            if (t, r) == (1, 3):
                continue
            sentences = []
            for s, n_cited in enumerate((2, 1, 0)):
                citations = []
                for c in range(n_cited):
                    support = int(rng.choice(3, p=[0.3, 0.3, 0.4]))
                    if judge and noise.random() < 0.4:
                        support = int(noise.integers(3))
                    if judge and (t, r, s, c) == (0, 0, 0, 1):
                        support = None
                    citations.append(Citation(c, f"seg{t}-{s}-{c}", support))
                sentences.append(Sentence(s, f"sentence {s}", tuple(citations)))
            answers.append(CitedAnswer(f"t{t}", f"run{r}", tuple(sentences)))
    return answers


@pytest.mark.parametrize("kind", ["weighted_precision", "weighted_recall"])
def test_fully_judged_support_measures_equal_the_tracks_scores(kind):
    from exampp.analysis.support_scores import per_answer, run_scores
    from exampp.assess.population import support_labels, support_population

    people = _cited(0)
    pop = support_population(_cited(0, judge=True), kind)
    assert len(pop.keys) == 11 * 2  # 11 answers, 2 citing sentences each
    assert pop.judge[pop.keys.index("run0/0")] == (2.0 if kind == "weighted_recall" else pop.judge[0])
    labels = support_labels(_cited(0, judge=True), people, kind, "people")
    human = np.array([labels[pair][0] for pair in zip(pop.query_ids, pop.keys)])
    everything = Evidence(pop.layout, pop.judge, 2.0, np.arange(len(human)), np.ones(len(human)), human[:, None])
    table = estimate(everything, [AssessMeasure.parse(kind)], estimator="humans", replicates=2).table
    board = run_scores(per_answer(people)).set_index("run")
    for row in table.itertuples():
        assert row.estimate == pytest.approx(board.at[row.run, kind], abs=1e-12)


def test_a_support_sample_estimates_from_the_assessors_file(tmp_path):
    from dataclasses import replace

    from exampp.analysis.support_scores import per_answer, run_scores
    from exampp.api.assess_labels import load_tasks
    from exampp.formats.citations import write_citations
    from exampp.formats.nugget_assignments import write_assignments

    ours, people = tmp_path / "ours.jsonl", tmp_path / "people.jsonl"
    write_citations(_cited(0, judge=True), ours)
    write_citations(_cited(0), people)
    measures = ("weighted_precision", "weighted_recall")
    quiet: list[str] = []
    full = draw_sample(SampleJob(tmp_path, 1000, measures=measures, support=ours, output=tmp_path / "all.tsv"),
                       quiet.append)
    assert len(full.pairs) == 22 and all(p.kind == "sentence" for p in read_sample(tmp_path / "all.tsv"))
    table = EstimateJob(tmp_path, sample=tmp_path / "all.tsv", labels=people, measures=measures, support=ours,
                        estimator="calibrated").run(warn=quiet.append).table
    board = run_scores(per_answer(_cited(0))).set_index("run")
    assert len(table) == 8
    for row in table.itertuples():
        assert row.estimate == pytest.approx(board.at[row.run, row.measure], abs=1e-12)
    sample = tmp_path / "s.tsv"
    runner = CliRunner()
    done = runner.invoke(main, ["assess", "sample", "-w", str(tmp_path), "--support", str(ours), "--budget", "12",
                                "-m", "weighted_recall", "-o", str(sample)])
    assert done.exit_code == 0, done.output
    assert {p.key for p in read_sample(sample)} <= {p.key for p in full.pairs} and len(read_sample(sample)) == 12
    done = runner.invoke(main, ["assess", "estimate", "-w", str(tmp_path), "--support", str(ours), "--labels",
                                str(people), "--sample", str(sample), "-m", "weighted_recall", "--format", "json"])
    assert done.exit_code == 0, done.output
    estimates = json.loads(done.stdout)
    assert set(estimates) == {f"run{r}" for r in range(4)}
    assert all(v["weighted_recall"]["low"] <= v["weighted_recall"]["estimate"] <= v["weighted_recall"]["high"]
               for v in estimates.values())
    with pytest.raises(InputError, match="a sample of citing sentences is judged in the track's"):
        load_tasks(tmp_path, sample)
    with pytest.raises(AssessError, match="--support FILE"):
        draw_sample(SampleJob(tmp_path, 5, measures=("weighted_recall",)))
    write_assignments(_answers(0, judge=True), tmp_path / "nuggets.jsonl")
    with pytest.raises(AssessError, match="a sample of sentences"):
        EstimateJob(tmp_path, sample=tmp_path / "all.tsv", labels=people, measures=["V_strict"],
                    nuggets=tmp_path / "nuggets.jsonl").run()
    stray = _cited(0)
    stray[0] = replace(stray[0], run_id="run9")
    write_citations(stray, tmp_path / "stray.jsonl")
    with pytest.raises(InputError, match="stray.jsonl:1: .*run run9: the judge's support file has no such sentence"):
        EstimateJob(tmp_path, sample=tmp_path / "all.tsv", labels=tmp_path / "stray.jsonl",
                    measures=["weighted_recall"], support=ours).run(warn=quiet.append)


@pytest.mark.slow
def test_the_reports_human_check_shows_the_corrected_leaderboard(tmp_path):
    import pandas as pd

    from exampp.api.leaderboards import QrelsMeasure
    from exampp.api.meta_evaluate import MetaEvaluateJob
    from exampp.api.report import ReportJob

    ws, sample, labels = _labelled(tmp_path, 40)
    quiet: list[str] = []
    official = ws / "qrels" / "truth.qrels"
    meta = MetaEvaluateJob(ws, official=QrelsMeasure(str(official), "P@10"), families=("qrels",), bootstrap=20,
                           progress=False).run(warn=quiet.append)  # the synthetic exam gives IRT nothing to fit
    report = ReportJob(ws, tmp_path / "report", meta=meta, official_qrels=official, progress=False,
                       assess_sample=sample, assess_labels=labels, assess_rel_level=2).run(warn=quiet.append)
    board = pd.read_csv(tmp_path / "report" / "human-check.tsv", sep="\t")
    expected = EstimateJob(ws, sample=sample, labels=labels, rel_level=2).run(warn=quiet.append).table.set_index("run")
    assert list(board["P@10"]) == sorted(board["P@10"], reverse=True)
    for _, row in board.iterrows():
        assert row["P@10"] == pytest.approx(expected.at[row["run"], "estimate"], abs=1e-9)
        assert row["P@10 low"] <= row["P@10"] <= row["P@10 high"]
    page = report.html.read_text()
    assert '<section id="human">' in page and "40 pairs judged by people" in page


def test_the_human_check_leaves_out_the_excluded_runs_and_their_pairs(tmp_path):
    # every pooled pair labelled: the humans' estimate over the other runs is their exact P@10 (by
    # ir_measures), from the pairs of their own pool; the sample's pairs only the left-out run ranks are dropped
    from exampp.api.assess import HumanCheckJob, labelled_sample
    from exampp.formats.trec_run import read_runs

    ws, sample, labels = _labelled(tmp_path, 10_000)
    quiet: list[str] = []

    def pool(runs):
        return {(q, doc.docid) for run in runs.values() for q in run.rankings for doc in run.top(q, 10)}

    every = read_runs(ws / "runs")
    left_out = next(name for name in sorted(every)  # a run with pairs of its own
                    if pool({name: every[name]}) - pool({n: r for n, r in every.items() if n != name}))
    check = HumanCheckJob(ws, sample=sample, labels=labels, rel_level=2, estimator="humans",
                          exclude=(left_out,)).run(warn=quiet.append)
    runs = {name: run for name, run in every.items() if name != left_out}
    assert set(check.leaderboard["run"]) == set(runs) and check.n_pairs == len(pool(runs)) < len(read_sample(sample))
    human, _ = truth()
    qrels = [ir_measures.Qrel(q, d, g) for q, docs in human.items() for d, g in docs.items()]
    for name, run in runs.items():
        ranked = [ir_measures.ScoredDoc(q, doc.docid, 10.0 - i) for q in run.rankings
                  for i, doc in enumerate(run.top(q, 10))]
        expected = ir_measures.calc_aggregate([ir_measures.parse_measure("P(rel=2)@10")], qrels, ranked)
        got = check.leaderboard.set_index("run").at[name, "P@10"]
        assert got == pytest.approx(next(iter(expected.values())), abs=1e-12)
    with pytest.raises(InputError, match="not in the judge's pool"):  # without domain: a mismatched sample
        labelled_sample(ws, sample, labels, [AssessMeasure.parse("P@10")], runs=runs, warn=quiet.append)


def test_uncertainty_draws_toward_pairs_the_judges_disagree_on(tmp_path):
    from assess_workspace import QUERIES
    from exampp.api.assess import judges_disagreement, workspace_judge
    from exampp.collection.grades import Grade
    from exampp.stores.grade_store import GradeStore

    ws = _synthetic(tmp_path)
    human, judge = truth()
    with GradeStore(ws / "grades.sqlite") as store:  # a second judge: the human grade itself, on a 0-3 scale
        phash = {q: store.register_passages(q, {d: f"passage {d}" for d in judge[q]}) for q in QUERIES}
        qhash = store.register_questions([(q, f"{q}/u", f"What about {q}?") for q in QUERIES])
        store.put_many([(Grade(q, d, f"{q}/u", float(g), "second|m|p"), phash[q][d], qhash[q, f"{q}/u"])
                        for q in QUERIES for d, g in human[q].items()])
    measures = [AssessMeasure.parse("P@10")]
    pop = workspace_judge(ws, measures, method="synthetic-judge|m|p").population
    spread = judges_disagreement(ws, pop, lambda line: None)
    expected = [np.std([judge[q][d] / 5, human[q][d] / 3]) for q, d in zip(pop.query_ids, pop.keys)]
    assert spread == pytest.approx(expected)
    result = draw_sample(SampleJob(ws, 30, strategy="uncertainty", method="synthetic-judge|m|p"))
    drawn = {(p.query_id, p.doc_id) for p in result.pairs}
    agreeing = [i for i, s in enumerate(spread) if s == 0]
    disagreeing = [i for i, s in enumerate(spread) if s >= 0.3]
    share = lambda pairs: np.mean([(pop.query_ids[i], pop.keys[i]) in drawn for i in pairs])  # noqa: E731
    assert share(disagreeing) > share(agreeing)


def test_the_plan_solves_the_simple_random_sampling_width():
    from exampp.assess.planning import labels_needed, mean_width

    # uniform design over N pairs, one run weighing each 1/N, error variance s2 everywhere: the width at
    # n labels is 2 z s sqrt((N - n) / (N n)), so the target W needs n = ceil(N / (1 + N W^2 / (4 z^2 s2)))
    n_pairs, s2, z, target = 400, 0.2, 1.645, 0.1
    weights, sizes, variances = np.full((1, n_pairs), 1 / n_pairs), np.ones(n_pairs), np.full(n_pairs, s2)
    assert mean_width(weights, sizes, variances, 100, z) == pytest.approx(2 * z * math.sqrt(s2 * 300 / (400 * 100)))
    expected = math.ceil(n_pairs / (1 + n_pairs * target ** 2 / (4 * z ** 2 * s2)))
    assert labels_needed(weights, sizes, variances, target, z) == expected
    assert labels_needed(weights, sizes, variances, 0.0, z) == n_pairs  # only the whole pool is exact
