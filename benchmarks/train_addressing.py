"""Fit the classifier of text that addresses an evaluator (:mod:`exampp.audit.addressing`) and
write its weights to ``exampp/audit/addressing.json``; deterministic (seeded), about a minute.

Attacks are generated from the features, not from sentences: an attack is one to three *moves*
(addressing the grader, claiming relevance, demanding a grade, overriding the instructions,
playing the grader's role, a fake grading format), each a set of the features its words carry in
any of the lexicon's languages (:mod:`exampp.audit.lexicon`), each feature dropped with
probability 0.25 (a wording whose words the lexicon lacks), read 30% of the time with an honest
sentence beside it (whose features it then carries too). Honest windows are those of the ``fit`` half
of DL19's passages and RAG 2024's answers (benchmarks/honest_texts.py); the ``measure`` half is
left for benchmarks/injection_multilingual.py. The model is a logistic regression over the base
features and their pairs, L2-penalised, attacks and honest windows weighted alike; its threshold
is the 99.9th percentile of each source's honest ``fit`` texts' best windows (at least 0.5).

Usage (from the repository root):
    python benchmarks/train_addressing.py [--shared ../shared/data] [--dev benchmarks/injection_dev_multilingual.jsonl]
"""
from __future__ import annotations

import argparse
import json
import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from exampp.audit.addressing import Model, active, best_window, feature_names, is_dense, windows
from exampp.audit.lexicon import CONCEPTS
from exampp.audit.normalise import fold
from honest_texts import SHARED, honest

WEIGHTS = Path(__file__).resolve().parents[1] / "exampp" / "audit" / "addressing.json"
SEED = 34
ATTACKS = 30_000
DROP = 0.25
NEIGHBOUR = 0.3  # the share of attacks read with an honest sentence beside them
PENALTY = 30.0  # L2 on the weights, per honest + attack example of weight 1
# of each source's honest fit texts' best windows: one DL19 passage in 1,000 reaches the threshold (the
# 99.8th, one in 500, had let fewer through only while RAG's top answers set it higher, their "to" read
# as Polish "this")
PERCENTILE = 99.9
TRICKY = 20.0  # weight of a hand-written honest sentence (benchmarks/addressing_honest_multilingual.txt)
HONEST_SENTENCES = Path(__file__).with_name("addressing_honest_multilingual.txt")

CONCEPT_LIKE = set(CONCEPTS) | {"number"}  # what counts towards "dense"
# Each move: the feature sets its wordings carry (one drawn per attack).
MOVES: dict[str, list[set[str]]] = {
    "address": [{"note", "role"}, {"role", "you"}, {"note", "role", "you"}, {"role", "colon"},
                {"note", "role", "colon"}, {"role", "bracket"}, {"please", "role"}],
    "claim": [{"this", "textref", "relevant"}, {"this", "textref", "relevant", "top"}, {"relevant", "question", "top"},
              {"this", "textref", "relevant", "question"}, {"this", "relevant", "question"},
              {"textref", "top", "question"}, {"textref", "relevant", "question"}],
    "demand": [{"order", "score", "number"}, {"order", "score", "top"}, {"order", "top"},
               {"order", "score", "this", "textref"}, {"score", "number", "assign"}, {"score", "number", "colon"},
               {"score", "fraction"}, {"please", "order", "score"}, {"order", "number"}, {"score", "cjk_points"},
               {"order", "cjk_points"}, {"you", "order", "score"}, {"score", "top", "this"}],
    "override": [{"override", "rules"}, {"override", "question"}, {"override", "you", "rules"}, {"override"},
                 {"rules", "order"}, {"override", "this"}],
    "role": [{"you", "role", "order"}, {"you", "role", "score"}, {"you", "role"}, {"you", "role", "top"}],
    "format": [{"bracket", "role", "score", "number"}, {"bracket", "score", "assign"},
               {"colon", "score", "number", "relevant"}, {"score", "relevant", "assign", "top"},
               {"bracket", "rules", "order"}, {"bracket", "this", "textref", "relevant"}],
}


def simulate(rng: random.Random, honest_windows: Sequence[frozenset[str]]) -> frozenset[str]:
    """One generated attack's features (see the module's description)."""
    names = list(MOVES)
    moves = rng.sample(names, rng.choice((1, 2, 2, 2, 3, 3)))
    features: set[str] = set()
    sentence: set[str] = set()  # the concepts and words of the sentence being written
    words = 0
    for move in moves:
        wording = rng.choice(MOVES[move])
        kept = {feature for feature in sorted(wording) if rng.random() > DROP} or {rng.choice(sorted(wording))}
        features |= kept
        if rng.random() < 0.5:  # a sentence of its own (else the move goes on the last one)
            sentence, words = set(), 0
        sentence |= kept & CONCEPT_LIKE
        words += rng.randint(max(3, 2 * len(wording)), 16)
        if is_dense(len(sentence), words):
            features.add("dense")
    if rng.random() < NEIGHBOUR:
        features |= honest_windows[rng.randrange(len(honest_windows))]
    return frozenset(features)


def design(examples: Sequence[frozenset[str]]) -> np.ndarray:
    """The 0/1 matrix of the base features and their pairs."""
    names = feature_names()
    index = {name: i for i, name in enumerate(names)}
    matrix = np.zeros((len(examples), len(names)))
    for row, features in enumerate(examples):
        base, pairs = active(features)
        for name in base + pairs:
            matrix[row, index[name]] = 1.0
    return matrix


def fit(x: np.ndarray, y: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, float]:
    """L2-penalised logistic regression (the bias unpenalised), weights non-negative: weights and bias."""
    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ theta[1:] + theta[0]
        p = 1.0 / (1.0 + np.exp(-z))
        eps = 1e-12
        value = -np.sum(weight * (y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))) \
            + PENALTY * np.sum(theta[1:] ** 2) / 2
        residual = weight * (p - y)
        gradient = np.concatenate(([residual.sum()], x.T @ residual + PENALTY * theta[1:]))
        return value, gradient

    # weights of at least 0: a window with one more feature is never less suspect (the model stays
    # monotone, so that an attack that says more than the generated ones still scores high)
    bounds = [(None, None)] + [(0.0, None)] * x.shape[1]
    result = minimize(loss, np.zeros(x.shape[1] + 1), jac=True, method="L-BFGS-B", bounds=bounds,
                      options={"maxiter": 2000})
    return result.x[1:], float(result.x[0])


def text_windows(texts: dict[str, str]) -> list[list[frozenset[str]]]:
    """Per text (``texts``: id -> text), its windows' features."""
    return [[w.features for w in windows(fold(text).text)] for text in texts.values()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=SHARED, help="the shared data folder (dl19/, rag24/)")
    parser.add_argument("--dev", type=Path, default=Path(__file__).with_name("injection_dev_multilingual.jsonl"),
                        help="hand-written attacks to print the recall on (not fitted on)")
    args = parser.parse_args()
    rng = random.Random(SEED)
    texts = honest("fit", args.shared)
    per_source = {source: text_windows(by_id) for source, by_id in texts.items()}
    per_text = [ws for source in per_source.values() for ws in source]
    honest_windows = [w for ws in per_text for w in ws if w]
    # the RAG answers' windows count as much as DL19's, though there are fewer
    rag = [w for ws in per_source["rag24"] for w in ws if w]
    sentences = [line for line in HONEST_SENTENCES.read_text(encoding="utf-8").splitlines()
                 if line.strip() and not line.startswith("#")]
    tricky = [w.features for line in sentences for w in windows(fold(line).text) if w.features]
    attacks = [simulate(rng, honest_windows) for _ in range(ATTACKS)]
    negatives = honest_windows + rag + tricky
    x = design(negatives + attacks)
    y = np.array([0.0] * len(negatives) + [1.0] * len(attacks))
    weight = np.concatenate((np.full(len(honest_windows) + len(rag), len(attacks) / (len(honest_windows) + len(rag))),
                             np.full(len(tricky), TRICKY), np.ones(len(attacks))))
    weights, bias = fit(x, y, weight)
    names = feature_names()
    scorer = Model(dict(zip(names, weights.tolist())), bias, 0.5)
    best = {source: [max((scorer.score(w) for w in ws if w), default=0.0) for ws in by_text]
            for source, by_text in per_source.items()}
    threshold = max(0.5, *(float(np.percentile(scores, PERCENTILE)) for scores in best.values()))
    data = {"features": list(names), "weights": [round(float(w), 4) for w in weights], "bias": round(bias, 4),
            "threshold": round(threshold, 4),
            "fitted": f"benchmarks/train_addressing.py: {len(attacks)} generated attacks (seed {SEED}), "
                      f"{len(honest_windows)} honest windows of {len(per_text)} texts"}
    WEIGHTS.write_text(json.dumps(data, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{len(attacks)} attacks, {len(honest_windows)} honest windows, {len(tricky)} honest sentences; "
          f"threshold {threshold:.4f}")
    for source, scores in best.items():
        flagged = sum(b >= threshold for b in scores)
        print(f"honest {source} fit texts flagged {flagged}/{len(scores)} ({flagged / len(scores):.2%})")
    held = [simulate(rng, honest_windows) for _ in range(5000)]
    print(f"recall on 5,000 more generated attacks: {np.mean([scorer.score(a) >= threshold for a in held]):.3f}")
    top = sorted(zip(names, weights), key=lambda item: -abs(item[1]))[:15]
    print("largest weights:", ", ".join(f"{n} {w:+.2f}" for n, w in top))
    if args.dev.exists():
        rows = [json.loads(line) for line in args.dev.read_text(encoding="utf-8").splitlines() if line.strip()]
        for kind in ("attack", "honest"):
            chosen = [r for r in rows if r["kind"] == kind]
            hits = [(r, best_window(r["text"], fitted=scorer)) for r in chosen]
            found = [r for r, b in hits if b is not None and b.probability >= threshold]
            print(f"dev {kind}: {len(found)}/{len(chosen)} flagged")
            for r, b in hits:
                if (kind == "attack") != (b is not None and b.probability >= threshold):
                    shown = sorted(b.features) if b else []
                    print(f"   {r['language']} {b.probability if b else 0:.2f} {shown} {r['text'][:90]!r}")


if __name__ == "__main__":
    main()
