"""Calibrate the embedding grader's thresholds on DL19 and evaluate them on held-out queries.

The DL19 reference file holds 9,260 judged passages of 43 queries, each self-rated 0–5 by
FLAN-T5-large against the query's ~10 generated questions (92,600 pairs), the official
judgments, and the rankings of the track's runs. The 43 query ids, sorted and shuffled with a
fixed seed, split into 20 calibration and 23 held-out queries. Thresholds are fitted on the
calibration pairs only (:func:`exampp.grading.calibration.fit_thresholds`); every agreement
and leaderboard figure is computed on the held-out queries only.

Embeddings of the distinct texts are cached in ``out/embedding-cache/`` (gitignored), keyed
by model and texts, with the time they took, so reruns are fast. ``benchmarks/cascade.py``
studies the grading cascade's first stages on the same data and split (:func:`load_dl19`).

Usage (from the repository root):
    python benchmarks/calibrate_embedding.py [--data ../shared/data/dl19] [--seed 19]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from exampp.analysis.correlation import correlate
from exampp.collection.qrels import Qrels
from exampp.collection.questions import QuestionBank
from exampp.collection.runs import Run
from exampp.formats.question_bank import read_question_bank
from exampp.formats.reference_grades import read_reference_grades
from exampp.grading.calibration import apply_thresholds, binary_kappa, fit_thresholds, weighted_kappa
from exampp.grading.methods.embedding import DEFAULT_THRESHOLDS
from exampp.importer import Collected, build_run, collect
from exampp.labels import exam_labels
from exampp.llm.backends.embedding import SentenceEmbedder
from exampp.scoring import exam_cover, exam_qrels, leaderboard, summarize

REPO = Path(__file__).resolve().parents[1]
GRADED = "DL19-graded-t5-rating-genq-exam-qrels-runs-with-text.jsonl.gz"
BANK = "dl19-genq.jsonl.gz"
LATE_RUN = "UNH_exDL_bm25"  # submitted after the track: not on the official leaderboard
LEVELS = 5


def split_queries(query_ids: list[str], seed: int, calibration_size: int) -> tuple[list[str], list[str]]:
    """(calibration, held-out) query ids, each sorted: sorted ids shuffled with ``seed``."""
    shuffled = sorted(query_ids)
    random.Random(seed).shuffle(shuffled)
    return sorted(shuffled[:calibration_size]), sorted(shuffled[calibration_size:])


def cached_embeddings(grader: SentenceEmbedder, texts: list[str], cache: Path) -> tuple[np.ndarray, float, bool]:
    """(embeddings, seconds the embedding took, whether read from the cache)."""
    digest = hashlib.sha256("\0".join([grader.name, *texts]).encode("utf-8")).hexdigest()[:16]
    matrix_path, info_path = cache / f"{digest}.npy", cache / f"{digest}.json"
    if matrix_path.exists() and info_path.exists():
        return np.load(matrix_path, allow_pickle=False), json.loads(info_path.read_text())["seconds"], True
    grader.model  # load before timing
    start = time.perf_counter()
    matrix = grader.embed(texts)
    seconds = time.perf_counter() - start
    cache.mkdir(parents=True, exist_ok=True)
    np.save(matrix_path, matrix, allow_pickle=False)
    info_path.write_text(json.dumps({"model": grader.name, "texts": len(texts), "seconds": seconds}))
    return matrix, seconds, False


def agreement(reference: np.ndarray, predicted: np.ndarray) -> dict[str, float]:
    """κ of (grade >= τ) on both sides for τ = 1..5, and quadratic-weighted κ on 0..5."""
    row = {f"κ(≥{tau})": binary_kappa(predicted >= tau, reference >= tau) for tau in range(1, LEVELS + 1)}
    row["κ_w quad"] = weighted_kappa(reference, predicted, LEVELS)
    return row


def restrict_runs(runs: Mapping[str, Run], queries: set[str]) -> dict[str, Run]:
    return {name: Run(name, {q: docs for q, docs in run.rankings.items() if q in queries})
            for name, run in runs.items()}


def boards(runs: Mapping[str, Run], grades: pd.DataFrame, questions: dict[str, list[str]],
           tau: int) -> dict[str, dict[str, float]]:
    """Cover@20 and P@20 on binary EXAM-Qrels at ``tau``: run -> score, per measure."""
    cover = summarize(exam_cover(runs, grades, questions, tau=tau, depth=20)).set_index("run")["mean"]
    qrels = exam_qrels(exam_labels(grades, questions), min_grade=tau)
    precision = leaderboard(runs, qrels, ["P@20"])["P@20"]
    return {"Cover@20": cover.to_dict(), "P@20": precision.to_dict()}


@dataclass(frozen=True)
class DL19:
    """The DL19 reference data as pairs with their FLAN-T5-large grade and question–passage cosine,
    the embeddings of every distinct text, and the query split."""

    collected: Collected
    bank: QuestionBank
    pairs: pd.DataFrame  # query_id, passage_id, question_id, flan (grade), cosine; passage, question (texts)
    embedder: SentenceEmbedder
    vectors: dict[str, np.ndarray]  # text -> unit-length embedding (float64)
    calibration: list[str]
    held_out: list[str]

    def embed(self, texts: list[str], cache: Path) -> np.ndarray:
        """Rows of embeddings of ``texts`` (more texts, e.g. queries, cached alongside)."""
        missing = sorted(set(texts) - set(self.vectors))
        if missing:
            matrix, _, _ = cached_embeddings(self.embedder, missing, cache)
            self.vectors.update(zip(missing, matrix.astype(np.float64)))
        return np.stack([self.vectors[t] for t in texts])

    def held_out_runs(self) -> tuple[dict[str, Run], Qrels]:
        """The track's runs (without the late run) and official qrels, cut to the held-out queries."""
        held = set(self.held_out)
        runs = restrict_runs({name: build_run(name, r)[0] for name, r in self.collected.rankings.items()
                              if name != LATE_RUN}, held)
        return runs, {q: docs for q, docs in self.collected.qrels.items() if q in held}


def add_data_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every DL19 calibration script takes: data, cache, split, embedding device."""
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "dl19")
    parser.add_argument("--cache", type=Path, default=REPO / "out" / "embedding-cache")
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--calibration-queries", type=int, default=20)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch-size", type=int, default=None)


def load_dl19(args: argparse.Namespace) -> DL19:
    """Read DL19, embed its texts (cached), print the timing and the split."""
    graded_path = args.data / GRADED
    collected = collect(read_reference_grades(graded_path), graded_path)
    bank = read_question_bank(args.data / BANK)
    question_text = {q.question_id: q.text for q in bank}
    pairs = pd.DataFrame(
        [(g.query_id, g.passage_id, g.question_id, int(g.grade)) for g in collected.grades],
        columns=["query_id", "passage_id", "question_id", "flan"],
    )
    pairs["passage"] = [collected.passages[q][p] for q, p in zip(pairs["query_id"], pairs["passage_id"])]
    pairs["question"] = [question_text[q] for q in pairs["question_id"]]

    # Embed every distinct text once; the cosine of a pair is the dot product of its rows.
    kwargs = {} if args.batch_size is None else {"batch_size": args.batch_size}
    embedder = SentenceEmbedder(device=args.device, **kwargs)
    texts = sorted(set(pairs["passage"]) | set(pairs["question"]))
    matrix, seconds, cached = cached_embeddings(embedder, texts, args.cache)
    start = time.perf_counter()
    row = {text: i for i, text in enumerate(texts)}
    vectors = matrix.astype(np.float64)
    pairs["cosine"] = np.einsum(
        "ij,ij->i", vectors[[row[t] for t in pairs["passage"]]], vectors[[row[t] for t in pairs["question"]]]
    )
    seconds += time.perf_counter() - start
    print(f"model {embedder.name} on {args.device}, batch size {embedder.batch_size}")
    print(f"embedded {len(texts)} distinct texts for {len(pairs)} pairs in {seconds:.1f} s: "
          f"{len(pairs) / seconds:.0f} pairs/s, {len(texts) / seconds:.1f} texts/s"
          + (" (timing from the run that filled the cache)" if cached else ""))

    calibration, held_out = split_queries(list(collected.passages), args.seed, args.calibration_queries)
    print(f"\nsplit (seed {args.seed}): {len(calibration)} calibration, {len(held_out)} held-out queries")
    print("calibration:", " ".join(calibration))
    print("held-out:   ", " ".join(held_out))
    return DL19(collected, bank, pairs, embedder, dict(zip(texts, vectors)), calibration, held_out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_arguments(parser)
    parser.add_argument("--tau", type=int, nargs="+", default=[4], help="EXAM thresholds for the leaderboards")
    args = parser.parse_args()
    dl19 = load_dl19(args)
    pairs, calibration, held_out = dl19.pairs, dl19.calibration, dl19.held_out

    on_calibration = pairs[pairs["query_id"].isin(calibration)]
    fitted = fit_thresholds(on_calibration["cosine"].to_numpy(), on_calibration["flan"].to_numpy(), LEVELS)
    print(f"\nthresholds fitted on {fitted.pairs} calibration pairs (in-sample κ per level: "
          + ", ".join(f"{k:.3f}" for k in fitted.kappas) + ")")
    thresholds = tuple(round(t, 4) for t in fitted.thresholds)  # as the module stores them
    print(f"DEFAULT_THRESHOLDS = {thresholds}"
          + ("  (as in exampp.grading.methods.embedding)" if thresholds == DEFAULT_THRESHOLDS
             else "  (update exampp.grading.methods.embedding)"))
    pairs["embedding"] = apply_thresholds(pairs["cosine"], thresholds)

    test = pairs[pairs["query_id"].isin(held_out)]
    passages = test.groupby(["query_id", "passage_id"])[["flan", "embedding"]].max()
    print(f"\nheld-out agreement with FLAN-T5-large grades ({len(test)} pairs, {len(passages)} passages)")
    table = pd.DataFrame({
        "pairs": agreement(test["flan"].to_numpy(), test["embedding"].to_numpy()),
        "passages (max)": agreement(passages["flan"].to_numpy(), passages["embedding"].to_numpy()),
    }).T
    print(table.round(3).to_string())
    distribution = pd.DataFrame({
        "FLAN-T5 pairs": test["flan"].value_counts(normalize=True),
        "embedding pairs": test["embedding"].value_counts(normalize=True),
    }).reindex(range(LEVELS + 1)).fillna(0)
    print("\ngrade distribution on held-out pairs\n" + distribution.T.round(3).to_string())

    runs, official = dl19.held_out_runs()
    ndcg = leaderboard(runs, official, ["nDCG@10"])["nDCG@10"].to_dict()
    questions = test.groupby("query_id")["question_id"].unique().map(list).to_dict()
    print(f"\nleaderboard correlations on the {len(held_out)} held-out queries, {len(runs)} runs "
          f"(without {LATE_RUN}); τ_AP takes the first leaderboard as reference")
    rows = []
    for tau in args.tau:
        flan = boards(runs, test.rename(columns={"flan": "grade"}), questions, tau)
        emb = boards(runs, test.rename(columns={"embedding": "grade"}), questions, tau)
        for measure in ("Cover@20", "P@20"):
            label = f"{measure} τ={tau}"
            for reference, other, name in (
                (flan[measure], emb[measure], f"FLAN {label} vs embedding {label}"),
                (ndcg, emb[measure], f"official nDCG@10 vs embedding {label}"),
                (ndcg, flan[measure], f"official nDCG@10 vs FLAN {label}"),
            ):
                c = correlate(reference, other)
                rows.append((name, c.spearman, c.kendall, c.tau_ap, c.n_systems))
    print(pd.DataFrame(rows, columns=["leaderboards", "spearman", "kendall", "tau_ap", "runs"])
          .set_index("leaderboards").round(3).to_string())


if __name__ == "__main__":
    main()
