"""False positives of ``exampp audit``'s detectors on untouched data, and the figures their
thresholds were fitted on.

Two collections no one gamed: the DL19 workspace (43 queries, the pool of all its runs at depth
20, the generated question bank as the exam) and the TREC 2024 RAG answers of
``../shared/data/rag24`` (each answer a text of its run, the topic's nuggets as the exam, with
the thresholds for nuggets, :data:`exampp.audit.NUGGET_EXAM`). For
each, :func:`exampp.audit.audit_texts` runs over every pooled text; printed per class: how many
texts are flagged and their share of the pooled texts, then every flag with its evidence (the
issue's goal: below 1% of pooled passages, each flag explained).

``--fit`` prints, first, what the thresholds of :class:`exampp.audit.Thresholds` were fitted
on, from the DL19 pool: the share of the officially relevant passages (and of all pooled ones)
whose best question containment reaches each level, and the percentiles of query-term density,
top-term repetition and the query's repeats in a row.

Usage (from the repository root; build the workspace first, see scripts/reproduce_dl19.sh):
    python benchmarks/audit_false_positives.py --workspace /tmp/dl19 [--rag ../shared/data/rag24] [--fit]
"""
from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence

import numpy as np

from audit_data import exam_of, rag_answers
from exampp.audit import CLASSES, DEFAULT, NUGGET_EXAM, Flag, audit_texts
from exampp.audit.leakage import containments, words
from exampp.audit.stuffing import term_density
from exampp.formats.corpus_sources import open_corpus
from exampp.formats.question_bank import read_question_bank
from exampp.formats.topic_files import read_topics
from exampp.formats.trec_qrels import read_qrels
from exampp.formats.trec_run import read_runs
from exampp.pool import build_pool
from exampp.stores.layout import Workspace

DEPTH = 20
LEVELS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def report(name: str, flags: Sequence[Flag], pooled: int) -> None:
    """Per class: texts flagged and their share of the ``pooled`` texts; then every flag."""
    print(f"\n== {name}: {pooled} pooled texts, {len(flags)} flags")
    flagged = {kind: {(f.query_id, f.text_id) for f in flags if f.kind == kind} for kind in CLASSES}
    every = set().union(*flagged.values())
    for kind in CLASSES:
        print(f"{kind:>10}: {len(flagged[kind]):5d} texts  {len(flagged[kind]) / pooled:7.3%}")
    print(f"{'any':>10}: {len(every):5d} texts  {len(every) / pooled:7.3%}")
    for flag in flags:
        where = f" run {flag.run}" if flag.run else ""
        print(f"  {flag.kind:<9} q {flag.query_id} text {flag.text_id}{where}: {flag.evidence}")


def fit(texts: Mapping[str, Mapping[str, str]], queries: Mapping[str, str],
        exam: Mapping[str, Mapping[str, str]], qrels: Mapping[str, Mapping[str, float]]) -> None:
    """The figures the thresholds were fitted on (see the module's description)."""
    best: dict[tuple[str, str], float] = {}
    densities, repetitions, repeats, hits = [], [], [], []
    for query_id, pooled in texts.items():
        questions = {question_id: words(question) for question_id, question in exam.get(query_id, {}).items()}
        for text_id, text in pooled.items():
            text_words = words(text)
            shares = containments(text_words, questions, DEFAULT.leakage_min_words)
            best[query_id, text_id] = max(shares.values(), default=0.0)
            counts = term_density(text_words, queries[query_id])
            densities.append(counts.density)
            repetitions.append(counts.repetition)
            repeats.append(counts.repeats)
            hits.append(counts.hits)
    for grade in (1, 2):
        relevant = [key for key in best if qrels.get(key[0], {}).get(key[1], 0) >= grade]
        shares = "  ".join(f"{level:.1f}: {sum(best[k] >= level for k in relevant) / len(relevant):6.2%}"
                           for level in LEVELS)
        print(f"leakage, relevant (qrels >= {grade}, {len(relevant)} pooled): containment reaching  {shares}")
    shares = "  ".join(f"{level:.1f}: {sum(v >= level for v in best.values()) / len(best):6.2%}" for level in LEVELS)
    print(f"leakage, all pooled ({len(best)}): containment reaching  {shares}")
    print(f"leakage, highest containment: {max(best.values()):.3f}, of a relevant passage: "
          f"{max(v for k, v in best.items() if qrels.get(k[0], {}).get(k[1], 0) >= 1):.3f}")
    for name, values in (("density", densities), ("repetition", repetitions), ("query repeats", repeats)):
        cuts = np.percentile(values, [50, 90, 99, 99.9, 100])
        print(f"{name}: p50 {cuts[0]:.3f}  p90 {cuts[1]:.3f}  p99 {cuts[2]:.3f}  p99.9 {cuts[3]:.3f}  "
              f"max {cuts[4]:.3f}")
    print(f"query-term hits: p50 {np.percentile(hits, 50):.0f}  p99 {np.percentile(hits, 99):.0f}  max {max(hits)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", default="/tmp/dl19")
    parser.add_argument("--rag", default="../shared/data/rag24")
    parser.add_argument("--fit", action="store_true")
    args = parser.parse_args()

    ws = Workspace.at(args.workspace)
    runs = read_runs(ws.runs)
    pool = build_pool(runs, open_corpus(ws.corpus), DEPTH)
    bank = read_question_bank(ws.question_bank)
    queries = {query_id: topic.text for query_id, topic in read_topics(ws.topics).items()} \
        if ws.topics.exists() else bank.query_texts
    exam = exam_of(bank)
    rankings = {name: {q: [doc.docid for doc in run.top(q, DEPTH)] for q in run.rankings} for name, run in runs.items()}
    if args.fit:
        fit(pool.passages, queries, exam, read_qrels(ws.official_qrels))
    report(f"DL19 ({len(runs)} runs, depth {DEPTH})", audit_texts(pool.passages, queries, exam, rankings), len(pool))

    answers = rag_answers(args.rag)
    flags = audit_texts(answers.texts, answers.topics, answers.exam, answers.rankings, thresholds=NUGGET_EXAM)
    report(f"RAG 2024 answers ({len(answers.rankings)} runs)", flags, answers.count)


if __name__ == "__main__":
    main()
