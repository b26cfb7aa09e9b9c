"""EXAM on RAG answers, the nuggets as the exam: how its leaderboard agrees with the track's.

The TREC 2024 RAG track's nugget assignments (``../shared/data/rag24``) hold 487 answers of 45
runs to 11 topics, each topic's nuggets (vital or okay) and the assessors' assignment of every
nugget to every answer. Here the answers are segmented into passages and graded, nugget by nugget,
with an exampp grading method (default: the offline ``embedding`` grader, which needs no LLM);
EXAM-Cover@20 of each run (all nuggets, and vital nuggets only) is then compared with the official
nugget leaderboard (V_strict, and the other five scores) by Kendall's τ and Spearman's ρ.

Point values are over all 45 runs, each official score the track's mean over the topics the run
answered. The bootstrap intervals resample topics (the same draws for both leaderboards) and are
over the 44 runs that answered all 11 topics (webis-manual-manual answered 3), printed with the
value on those runs (``kendall_44``).

Usage (from the repository root):
    python benchmarks/rag24_exam_on_answers.py [--data ../shared/data/rag24] [--grader embedding]
                                               [--store out/rag24-exam.sqlite] [--bootstrap 1000]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from exampp.analysis.correlation import correlate
from exampp.analysis.nugget_scores import MEASURES, per_answer, run_scores
from exampp.analysis.statistics import correlation_intervals, scores_table
from exampp.api.grade import grade_collection
from exampp.collection.questions import QuestionBank
from exampp.formats.nugget_assignments import read_assignments
from exampp.formats.question_bank import read_question_bank
from exampp.formats.rag_responses import Response
from exampp.grading.registry import parse_method
from exampp.llm.backend import BackendSpec
from exampp.segment import segment_responses
from exampp.stores.grade_store import GradeStore


def vital_nuggets(bank: QuestionBank) -> QuestionBank:
    """The bank's vital nuggets only."""
    return QuestionBank((q for q in bank if q.info["importance"] == "vital"), query_texts=bank.query_texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data/rag24")
    parser.add_argument("--grader", default="embedding")
    parser.add_argument("--store", default="out/rag24-exam.sqlite")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    assignments = Path(args.data) / "nugget-assignments.dev.jsonl.gz"
    answers = read_assignments(assignments)
    bank = read_question_bank(assignments)  # an assignment file reads as the bank of its nuggets
    official = per_answer(answers)
    board = run_scores(official).set_index("run")
    topics = sorted({a.query_id for a in answers})
    complete = [run for run, n in board["n_topics"].items() if n == len(topics)]
    segmented = segment_responses(Response(a.run_id, a.query_id, a.text) for a in answers)
    method = parse_method(args.grader)
    Path(args.store).parent.mkdir(parents=True, exist_ok=True)
    print(f"{len(answers)} answers of {len(board)} runs, {len(topics)} topics; "
          f"{sum(len(r.rankings[q]) for r in segmented.runs.values() for q in r.rankings)} passages; "
          f"grader {method}")
    rows = []
    backend = BackendSpec(method.default_backend).open() if method.default_backend else None
    try:
        for exam, exam_bank in (("all nuggets", bank), ("vital nuggets", vital_nuggets(bank))):
            start = time.perf_counter()
            with GradeStore(args.store) as store:
                result = grade_collection(segmented.runs, segmented.corpus, method.bind(backend), store,
                                          exam_bank, progress=False)
            seconds = time.perf_counter() - start
            cover = result.leaderboard.set_index("run")["mean"]
            cover_table = scores_table(result.cover, "cover")
            for measure in MEASURES:
                values = correlate(board[measure].to_dict(), cover.to_dict())
                reference = scores_table(official[official["run"].isin(complete)], measure)
                interval = (correlation_intervals(reference, cover_table.loc[complete], n=args.bootstrap,
                                                  seed=args.seed) if args.bootstrap else None)
                row = {"exam": exam, "official": measure, "kendall": values.kendall, "spearman": values.spearman}
                if interval is not None:
                    for name in ("kendall", "spearman"):  # on the runs that answered every topic
                        row[f"{name}_44"], row[f"{name}_low"], row[f"{name}_high"] = interval.loc[name]
                rows.append(row)
            print(f"{exam}: {result.summary}; {seconds:.1f} s")
    finally:
        if backend is not None:
            backend.close()
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
