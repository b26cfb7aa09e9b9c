"""First stages for the grading cascade, calibrated on DL19 and judged on held-out queries.

A cascade sends the LLM only the (passage, question) pairs a cheap first stage cannot rule
out; the rest get grade 0. For each first stage, each τ (3, 4, 5) and each target recall of
the pairs FLAN-T5-large grades >= τ, the threshold is chosen on the 20 calibration queries
(:func:`exampp.grading.cascade.recall_threshold`; learned stages are fitted there too) and
applied to the 23 held-out queries (the split and data of ``calibrate_embedding.py``). On
those it reports the recall achieved, the share of LLM calls saved, and how the leaderboards
of the 36 runs move: Kendall's τ and Spearman's ρ between the leaderboard from full FLAN-T5
grades and the one from cascaded grades (FLAN-T5's grade where the pair was sent, 0 where it
was ruled out), for EXAM-Cover@20 and P@20 on binary EXAM-Qrels at τ, and the change in
Kendall's τ against the official nDCG@10 leaderboard.

First stages (scores of all-MiniLM-L6-v2 embeddings):
  q-p cosine       question–passage cosine (what the embedding grader thresholds)
  p-query cosine   passage–query cosine (one score for all questions of a passage)
  max calibrated   the larger of the two after each is calibrated to P(grade >= τ) by a 1-d logistic fit
  learned (shipped) logistic regression on q-p, p-query and question–query cosines, the passage's best
                    q-p cosine over its query's questions, and log passage length in words:
                    exampp.grading.cascade's first stage; its STAGES are printed at the end

It also prints the shipped stage's constants (``exampp.grading.cascade.STAGES``: weights per τ,
thresholds per target recall) and says whether they are the module's, and writes the table to
``out/cascade.tsv``.

Usage (from the repository root):
    python benchmarks/cascade.py [--data ../shared/data/dl19] [--recall 0.9 0.95 0.99] [--tau 3 4 5]
"""
from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from calibrate_embedding import DL19, LATE_RUN, REPO, add_data_arguments, boards, load_dl19
from exampp.analysis.correlation import correlate
from exampp.grading.base import Pair
from exampp.grading.cascade import STAGES as SHIPPED, FirstStage, Logistic, features, fit_logistic, recall_threshold
from exampp.llm.backend import Backend, Capability, Usage
from exampp.scoring import leaderboard

SHIPPED_RECALLS = (0.8, 0.9, 0.95, 0.98, 0.99)  # the target recalls exampp ships thresholds for
QP, PQ = 0, 1  # columns of exampp.grading.cascade.FEATURES
# A stage: fitted on calibration features for "grade >= τ", it scores any features (higher: more likely positive).
Stage = Callable[[np.ndarray, np.ndarray], Callable[[np.ndarray], np.ndarray]]


class CachedEmbedder(Backend):
    """The DL19 embeddings (computed once, cached) behind the backend interface the cascade uses."""

    capabilities = frozenset({Capability.EMBED})

    def __init__(self, dl19: DL19, cache: Path) -> None:
        self.dl19, self.cache, self.name, self.usage = dl19, cache, dl19.embedder.name, Usage()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.dl19.embed(list(texts), self.cache)


def single(column: int) -> Stage:
    return lambda _x, _positive: lambda x: x[:, column]


def max_calibrated(x: np.ndarray, positive: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    fits = {c: fit_logistic(x[:, [c]], positive) for c in (QP, PQ)}
    # Log-odds are monotone in the probability: their maximum ranks pairs as the larger probability does.
    return lambda y: np.maximum(*(fit.score(y[:, [c]]) for c, fit in fits.items()))


def shipped_stage(x: np.ndarray, positive: np.ndarray, tau: int) -> FirstStage:
    """The learned stage as exampp ships it: weights rounded to 6 decimals, thresholds rounded down
    to 4 (computed with the rounded weights, so the calibration recall is still reached)."""
    fitted = fit_logistic(x, positive)
    model = Logistic(tuple(round(w, 6) for w in fitted.weights), round(fitted.bias, 6))
    scores = model.score(x)
    return FirstStage(tau, model, {r: math.floor(recall_threshold(scores, positive, r) * 1e4) / 1e4
                                   for r in SHIPPED_RECALLS})


STAGES: dict[str, Stage] = {
    "q-p cosine": single(QP),
    "p-query cosine": single(PQ),
    "max calibrated": max_calibrated,
}
LEARNED = "learned (shipped)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_arguments(parser)
    parser.add_argument("--tau", type=int, nargs="+", default=[3, 4, 5], help="LLM grades counted as positive")
    parser.add_argument("--recall", type=float, nargs="+", default=[0.9, 0.95, 0.99], help="target recalls")
    parser.add_argument("--output", type=Path, default=REPO / "out" / "cascade.tsv", help="the table as TSV")
    args = parser.parse_args()
    dl19 = load_dl19(args)
    pairs = dl19.pairs
    question = {q.question_id: q for q in dl19.bank}
    exam = pairs.groupby("query_id")["question"].unique().map(list).to_dict()
    x = features(CachedEmbedder(dl19, args.cache),
                 [Pair(q, p, text, question[k]) for q, p, text, k in
                  zip(pairs["query_id"], pairs["passage_id"], pairs["passage"], pairs["question_id"])],
                 exam, dl19.bank.query_texts)

    on_calibration = pairs["query_id"].isin(dl19.calibration).to_numpy()
    on_test = pairs["query_id"].isin(dl19.held_out).to_numpy()
    test = pairs[on_test].copy()
    runs, official = dl19.held_out_runs()
    ndcg = leaderboard(runs, official, ["nDCG@10"])["nDCG@10"].to_dict()
    questions = test.groupby("query_id")["question_id"].unique().map(list).to_dict()
    full = {tau: boards(runs, test.rename(columns={"flan": "grade"}), questions, tau) for tau in args.tau}

    shipped: dict[int, FirstStage] = {}
    rows = []
    for tau in args.tau:
        positive = pairs["flan"].to_numpy() >= tau
        stage = shipped[tau] = shipped_stage(x[on_calibration], positive[on_calibration], tau)
        scorers = {name: fit(x[on_calibration], positive[on_calibration]) for name, fit in STAGES.items()}
        scorers[LEARNED] = stage.model.score
        for name, score in scorers.items():
            calibration_scores, test_scores = score(x[on_calibration]), score(x[on_test])
            for recall in args.recall:
                cut = (stage.thresholds[recall] if name == LEARNED and recall in stage.thresholds
                       else recall_threshold(calibration_scores, positive[on_calibration], recall))
                sent = test_scores >= cut
                board = boards(runs, test.assign(grade=np.where(sent, test["flan"], 0)), questions, tau)
                row = {"stage": name, "τ": tau, "target": recall, "threshold": cut,
                       "recall": sent[positive[on_test]].mean(), "saved": 1 - sent.mean(),
                       # the share saved at exactly the target recall on the held-out pairs themselves
                       "saved@oracle": 1 - np.mean(
                           test_scores >= recall_threshold(test_scores, positive[on_test], recall))}
                for measure in ("Cover@20", "P@20"):
                    c = correlate(full[tau][measure], board[measure])
                    row[f"{measure} kendall"], row[f"{measure} spearman"] = c.kendall, c.spearman
                    row[f"{measure} Δ vs nDCG"] = (correlate(ndcg, board[measure]).kendall
                                                   - correlate(ndcg, full[tau][measure]).kendall)
                rows.append(row)
    table = pd.DataFrame(rows).sort_values(["τ", "target", "stage"], kind="stable")
    print(f"\nheld-out: {len(test)} pairs of {len(dl19.held_out)} queries, {len(runs)} runs (without {LATE_RUN}); "
          "positives: FLAN-T5 grade >= τ; fits and thresholds from the calibration queries")
    print("recall, saved: on held-out pairs at the calibrated threshold; saved@oracle: at the held-out threshold "
          "of exactly the target recall\nkendall/spearman: full vs cascaded leaderboard; "
          "Δ vs nDCG: change in Kendall's τ against official nDCG@10")
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(table.round(4).to_string(index=False))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.output, sep="\t", index=False)
    print(f"(also in {args.output})")
    best = table.loc[table.groupby(["τ", "target"])["saved@oracle"].idxmax(), ["τ", "target", "stage", "saved@oracle"]]
    print("\nmost calls saved at equal recall, per τ and target recall\n" + best.round(4).to_string(index=False))

    literal = "{\n" + "".join(f"    {tau}: FirstStage({tau}, {stage.model!r},\n"
                              f"                  {stage.thresholds!r}),\n"
                               for tau, stage in shipped.items()) + "}"
    same = all(SHIPPED.get(tau) == stage for tau, stage in shipped.items())
    print(f"\nSTAGES: dict[int, FirstStage] = {literal}\n"
          + ("(as in exampp.grading.cascade)" if same else "(update exampp.grading.cascade)"))


if __name__ == "__main__":
    main()
