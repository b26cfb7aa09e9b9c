"""How well a human sample corrects the judge's leaderboard, on TREC DL 2019 with the official
judgments standing in for the assessors and the FLAN-T5 EXAM labels (the reference tool's
self-ratings) as the judge.

For each budget (a share of the top-10 pool of the 36 official runs), strategy and estimator it
draws ``--draws`` samples (seeds 0..draws-1), labels them with the official grades and estimates
every run's P@10 and nDCG@10 (relevant from official grade 2); it prints, over runs x draws, the
coverage of the fully judged value by the nominal interval, the mean interval width, and the mean
Kendall τ of the point estimates with the fully judged leaderboard, beside the judge's own τ. The
baselines sit beside the default (``runs`` + ``eb``): uniform sampling with plain PPI (ppi-python)
and the humans alone.

With ``--rag OURS --rag-official OFFICIAL`` the same on TREC 2024 RAG answers instead: the pool is
every (answer, nugget) pair, the judge an assignment of exampp's (``exampp nuggets assign``), the
assessors' assignment the people, the measure V_strict.

With ``--support PEOPLE`` the same on TREC 2024 RAG citation support, semi-synthetic: the people
are the assessors' support of every citation they judged (``final.citation_judgments_Webassess``;
the citations they left unjudged dropped), the judge those labels made wrong at random, the way
an LLM judge is: each run gets a leniency ℓ_r drawn uniformly in [0, 2·noise], and each citation
is rated full support with probability ℓ_r and a uniformly random level with probability noise/2
(the track's human and model judgments share no topic, so no real judge can be paired with the
people here). The measure is weighted_precision or weighted_recall, one per call.

Usage (from the repository root; the workspace from scripts/reproduce_dl19.sh or `exampp import`):
    python benchmarks/assess.py --workspace out/dl19 [--draws 200] [--budgets 0.02,0.05,0.1,0.2]
    python benchmarks/assess.py --rag out/rag24/offline.jsonl.gz \
        --rag-official ../shared/data/rag24/nugget-assignments.dev.jsonl.gz --measures V_strict
    python benchmarks/assess.py --support ../shared/data/rag24/final.citation_judgments_Webassess.20241031.jsonl.gz \
        --measures weighted_precision
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from scipy import stats

from exampp.api.assess import Judge, parse_measures, workspace_judge
from exampp.assess import design
from exampp.assess.estimators import Evidence, estimate, judge_values
from exampp.assess.measures import run_weights
from exampp.formats.trec_qrels import read_qrels
from exampp.formats.trec_run import read_runs

LATE = "UNH_exDL_bm25"  # submitted after the track: not on the official leaderboard
CONFIGURATIONS = (("runs", "eb"), ("runs", "calibrated"), ("stratified", "eb"), ("uniform", "eb"),
                  ("uniform", "ppi"), ("uniform", "ppi++"), ("uniform", "humans"), ("runs", "humans"))


def dl19_population(workspace: str, measures: list) -> tuple:
    """The DL19 top-10 pool of the official runs with the EXAM labels, and each pair's official grade."""
    runs = {name: run for name, run in read_runs(f"{workspace}/runs").items() if name != LATE}
    judge = workspace_judge(workspace, measures, runs=runs)
    official = read_qrels(f"{workspace}/qrels/official.qrels")
    pop = judge.population
    return judge, np.array([float(official.get(q, {}).get(k, 0)) for q, k in zip(pop.query_ids, pop.keys)])


def rag_population(ours: str, official: str, measures: list) -> tuple:
    """Every (answer, nugget) pair with the judge's assignment, and the assessors' grade of each."""
    from exampp.assess.population import nugget_labels
    from exampp.formats.nugget_assignments import read_assignments

    judge = workspace_judge(".", measures, nuggets=ours)
    pop = judge.population
    labels = nugget_labels(read_assignments(ours), read_assignments(official), official)
    return judge, np.array([labels[(q, k)][0] for q, k in zip(pop.query_ids, pop.keys)])


def support_population(people: str, noise: float, measures: list) -> tuple:
    """Every citing sentence of the assessors' judged citations with a judge made of them (see the
    module), and the people's support of each sentence."""
    import random
    from dataclasses import replace

    from exampp.assess.population import support_labels, support_population as population
    from exampp.formats.citations import read_citations

    if len(measures) != 1:
        raise SystemExit("--support: give one measure, weighted_precision or weighted_recall")
    rng = random.Random(0)
    answers = [replace(a, sentences=tuple(replace(s, citations=tuple(c for c in s.citations if c.support is not None))
                                          for s in a.sentences)) for a in read_citations(people)]
    leniency = {run: rng.uniform(0, 2 * noise) for run in sorted({a.run_id for a in answers})}

    def judged(support: int, run: str) -> int:
        draw = rng.random()
        return 2 if draw < leniency[run] else rng.choice((0, 1, 2)) if draw < leniency[run] + noise / 2 else support

    judge_answers = [replace(a, sentences=tuple(replace(s, citations=tuple(
        replace(c, support=judged(c.support, a.run_id)) for c in s.citations)) for s in a.sentences))
        for a in answers]
    kind = measures[0].kind
    pop = population(judge_answers, kind)
    labels = support_labels(judge_answers, answers, kind, people)
    return Judge(pop, "support", 2.0), np.array([labels[(q, k)][0] for q, k in zip(pop.query_ids, pop.keys)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", default="out/dl19")
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--budgets", default="0.02,0.05,0.1,0.2")
    parser.add_argument("--measures", default="P@10,nDCG@10")
    parser.add_argument("--level", type=float, default=0.9)
    parser.add_argument("--replicates", type=int, default=300)
    parser.add_argument("--configurations", default=",".join(f"{s}:{e}" for s, e in CONFIGURATIONS))
    parser.add_argument("--rag", help="The judge's nugget assignment (RAG answers) instead of the DL19 workspace.")
    parser.add_argument("--rag-official", help="The assessors' nugget assignment, with --rag.")
    parser.add_argument("--support", help="The assessors' citation-support file (semi-synthetic judge, see above).")
    parser.add_argument("--support-noise", type=float, default=0.3)
    args = parser.parse_args()
    measures = parse_measures(args.measures.split(","), rel_level=2)
    if args.support:
        judge, human = support_population(args.support, args.support_noise, measures)
    elif args.rag:
        judge, human = rag_population(args.rag, args.rag_official, measures)
    else:
        judge, human = dl19_population(args.workspace, measures)
    pop = judge.population
    everything = Evidence(pop.layout, pop.judge, judge.relevant_grade, np.arange(len(human)),
                          np.ones(len(human)), human[:, None])
    truth = estimate(everything, measures, estimator="humans", replicates=2).table
    truth = {m.name: truth.loc[truth["measure"] == m.name, "estimate"].to_numpy() for m in measures}
    for m in measures:
        own = stats.kendalltau(truth[m.name], judge_values(m, everything))[0]
        print(f"{m.name}: {len(pop.layout.runs)} runs, {pop.layout.n_pairs} pooled pairs; "
              f"the judge's own Kendall tau {own:.3f}")
    squares, spread = design.run_weight_sums({m.name: run_weights(m, pop.layout).toarray() for m in measures})
    sd = design.prior_sd(pop.judge, float(pop.judge.max()))
    rows = []
    for share in map(float, args.budgets.split(",")):
        budget = max(2, round(share * pop.layout.n_pairs))
        for configuration in args.configurations.split(","):
            strategy, estimator = configuration.split(":")
            sizes = design.sizes_for(strategy, sd, squares, spread)
            wanted = [m for m in measures if estimator not in ("ppi", "ppi++") or m.kind == "P"]
            found = {m.name: ([], [], []) for m in wanted}
            start = time.perf_counter()
            for seed in range(args.draws):
                chosen, probabilities, _ = design.draw(sizes, design.permanent_uniforms(seed, pop.query_ids, pop.keys),
                                                       budget)
                evidence = Evidence(pop.layout, pop.judge, judge.relevant_grade, chosen, probabilities,
                                    human[chosen][:, None])
                table = estimate(evidence, wanted, estimator=estimator, level=args.level,
                                 replicates=args.replicates, seed=seed).table
                for m in wanted:
                    part = table[table["measure"] == m.name]
                    low, high, value = (part[c].to_numpy() for c in ("low", "high", "estimate"))
                    covered, width, tau = found[m.name]
                    covered.extend((low <= truth[m.name] + 1e-12) & (truth[m.name] <= high + 1e-12))
                    width.append(float(np.mean(high - low)))
                    tau.append(stats.kendalltau(truth[m.name], value)[0])
            seconds = (time.perf_counter() - start) / args.draws
            for name, (covered, width, tau) in found.items():
                rows.append((f"{share:.0%}", budget, strategy, estimator, name, np.mean(covered), np.mean(width),
                             np.nanmean(tau), seconds))
                print("\t".join(map(str, rows[-1])), flush=True)
    table = pd.DataFrame(rows, columns=["budget", "labels", "strategy", "estimator", "measure", "coverage",
                                        "width", "kendall", "s_per_draw"])
    print(f"\n{args.draws} draws each, nominal {args.level:.0%}:")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
