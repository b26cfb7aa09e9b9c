"""Fit the offline nugget assignment methods on TREC 2024 RAG topics and measure them on others.

The track's assignments of 11 topics (``nugget-assignments.dev.jsonl.gz``: 487 answers of 45
runs, 6,771 (answer, nugget) pairs) are split by a fixed rule: the topic ids sorted as strings,
those at odd positions (1st, 3rd, ..., 11th: 6 topics) held out, those at even positions
(5 topics) for fitting. On the fitting pairs only:

- ``nugget-embedding``: a proportional-odds (ordinal logistic) model of the official grade 0/1/2
  on the features of :mod:`exampp.grading.methods.nugget_embedding` (maximum likelihood with a
  small L2 penalty, features standardised while fitting, weights given back on their own scale),
  then the cuts of its linear score that maximise Cohen's κ level by level
  (:func:`exampp.grading.calibration.fit_thresholds`);
- ``nugget-cosine``: the naive baseline, the one cut of the best sentence cosine that maximises
  κ of support against the rest (:func:`exampp.grading.calibration.best_cut`).

The parameters are rounded to 4 decimals, as they ship, before anything is measured. On the
held-out topics, both are compared with the official assignment by
:func:`exampp.api.nugget_agreement.assignment_agreement` (κ, α, and the V_strict leaderboard's
Kendall τ / Spearman ρ against the official one, bootstrap over topics). Then leave-one-topic-out:
each topic graded by both methods fitted on the other 10, measured on all 11 together.

Embeddings are cached per text in ``out/embedding-cache/nugget-texts.*`` (gitignored), so
reruns are fast; the first run's embedding time is printed.

Usage (from the repository root):
    python benchmarks/fit_nugget_assignment.py [--data ../shared/data/rag24/nugget-assignments.dev.jsonl.gz]
"""
from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy import optimize

from exampp.analysis.nugget_agreement import NuggetAgreement
from exampp.api.nugget_agreement import assignment_agreement
from exampp.collection.questions import Question, question_id_for
from exampp.formats.nugget_assignments import ASSIGNMENTS, Answer, AssignedNugget, read_assignments
from exampp.grading.base import Pair
from exampp.grading.calibration import best_cut, fit_thresholds
from exampp.grading.methods import nugget_embedding as shipped
from exampp.grading.methods.nugget_embedding import FEATURES, NuggetCosine, NuggetEmbedding, features
from exampp.llm.backend import Backend, Capability
from exampp.llm.backends.embedding import SentenceEmbedder

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "rag24" / "nugget-assignments.dev.jsonl.gz"
PENALTY = 1e-3  # L2 on the standardised weights: keeps collinear cosines from drifting apart
DECIMALS = 4
SUPPORT = ASSIGNMENTS.index("support")


class CachedEmbedder(Backend):
    """The packaged embedding model with a per-text cache on disk (texts in a JSON list, vectors
    in a .npy): a backend the methods grade through."""

    capabilities = frozenset({Capability.EMBED})

    def __init__(self, folder: Path) -> None:
        self.backend = SentenceEmbedder()
        self.name = self.backend.name
        self.texts_path, self.vectors_path = folder / "nugget-texts.json", folder / "nugget-texts.npy"
        self.rows: dict[str, int] = {}
        self.vectors = np.zeros((0, 0), dtype=np.float32)
        if self.texts_path.exists() and self.vectors_path.exists():
            self.rows = {t: i for i, t in enumerate(json.loads(self.texts_path.read_text()))}
            self.vectors = np.load(self.vectors_path, allow_pickle=False)
        self.seconds = 0.0
        self.embedded = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.rows]
        if missing:
            self.backend.model  # load before timing
            start = time.perf_counter()
            new = self.backend.embed(missing)
            self.seconds += time.perf_counter() - start
            self.embedded += len(missing)
            self.vectors = new if not self.rows else np.vstack([self.vectors, new])
            self.rows.update((t, i) for i, t in enumerate(missing, start=len(self.rows)))
            self.texts_path.parent.mkdir(parents=True, exist_ok=True)
            np.save(self.vectors_path, self.vectors, allow_pickle=False)
            self.texts_path.write_text(json.dumps(list(self.rows)))
        return self.vectors[[self.rows[t] for t in texts]]


def nugget_pairs(answers: Sequence[Answer]) -> list[Pair]:
    """Every (answer, nugget) pair, as ``exampp nuggets assign`` makes them: passage = the answer
    (passage id = the run), question = the nugget."""
    return [Pair(a.query_id, a.run_id, a.text,
                 Question(a.query_id, question_id_for(a.query_id, n.text), n.text, info={"importance": n.importance}))
            for a in answers for n in a.nuggets]


def split_topics(topics: Sequence[str]) -> tuple[list[str], list[str]]:
    """(fitting, held out): the sorted ids at even positions (2nd, 4th, ...) and at odd ones."""
    ordered = sorted(topics)
    return ordered[1::2], ordered[0::2]


def fit_ordinal(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Weights of a proportional-odds model P(grade >= k) = σ(x·w − θ_k), k = 1, 2, by penalised
    maximum likelihood; the cuts θ are not returned (the methods' cuts are fitted for κ)."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z = (x - mean) / scale
    levels = int(y.max()) + 1

    def loss(theta: np.ndarray) -> float:
        beta, first, gaps = theta[:z.shape[1]], theta[z.shape[1]], np.exp(theta[z.shape[1] + 1:])
        cuts = first + np.r_[0.0, np.cumsum(gaps)]
        eta = z @ beta
        at_least = np.column_stack([np.ones(len(z)), 1 / (1 + np.exp(-(eta[:, None] - cuts))), np.zeros(len(z))])
        probability = at_least[np.arange(len(z)), y] - at_least[np.arange(len(z)), y + 1]
        return float(-np.log(np.maximum(probability, 1e-12)).mean() + PENALTY * beta @ beta)

    start = np.r_[np.zeros(z.shape[1]), 0.0, np.zeros(levels - 2)]
    result = optimize.minimize(loss, start, method="L-BFGS-B")
    return result.x[:z.shape[1]] / scale


def fit(x: np.ndarray, y: np.ndarray) -> dict[str, tuple[float, ...]]:
    """Both methods' parameters, rounded as they ship."""
    weights = tuple(round(float(w), DECIMALS) for w in fit_ordinal(x, y))
    thresholds = fit_thresholds(x @ np.asarray(weights), y, levels=2).thresholds
    cosine, _ = best_cut(x[:, FEATURES.index("best")], y == SUPPORT)
    return {"weights": weights, "thresholds": tuple(round(t, DECIMALS) for t in thresholds),
            "cosine": (round(cosine, DECIMALS),)}


def predict(backend: Backend, pairs: Sequence[Pair], parameters: dict[str, tuple[float, ...]]
            ) -> dict[str, np.ndarray]:
    """Grades 0/1/2 of both methods with ``parameters``, graded by the methods themselves."""
    methods = [NuggetCosine(parameters["cosine"][0]), NuggetEmbedding(parameters["weights"], parameters["thresholds"])]
    return {m.name: np.array([j.grade for j in m.grade(backend, pairs)], dtype=int) for m in methods}


def assigned(answers: Sequence[Answer], grades: np.ndarray) -> list[Answer]:
    """The answers with their nuggets assigned ``grades`` (in :func:`nugget_pairs` order)."""
    out, position = [], 0
    for answer in answers:
        nuggets = tuple(AssignedNugget(n.text, n.importance, ASSIGNMENTS[int(g)])
                        for n, g in zip(answer.nuggets, grades[position:position + len(answer.nuggets)]))
        position += len(answer.nuggets)
        out.append(Answer(answer.query_id, answer.run_id, answer.text, nuggets, answer.query))
    return out


def side_by_side(results: dict[str, NuggetAgreement]) -> str:
    """One line per statistic, a column per method: value [low, high]."""
    tables = {name: r.table().set_index(["level", "measure", "statistic"]) for name, r in results.items()}
    index = next(iter(tables.values())).index
    lines = [f"{'statistic':<34}" + "".join(f"{name:>28}" for name in tables)]
    for key in index:
        cells = [f"{t.at[key, 'value']:.3f} [{t.at[key, 'low']:.3f}, {t.at[key, 'high']:.3f}]" for t in tables.values()]
        lines.append(f"{' '.join(key[1:]):<34}" + "".join(f"{c:>28}" for c in cells))
    return "\n".join(lines)


def compare(answers: list[Answer], grades: dict[str, np.ndarray], bootstrap: int, seed: int) -> str:
    results = {name: assignment_agreement(assigned(answers, g), answers, bootstrap=bootstrap, seed=seed)
               for name, g in grades.items()}
    first = next(iter(results.values()))
    confusions = [f"{name}, ours (rows) x official (columns):\n{r.confusion.to_string()}"
                  for name, r in results.items()]
    head = (f"{first.n_nuggets} (answer, nugget) pairs of {len(first.topics)} topics; V_strict leaderboards of "
            f"{first.n_runs} runs (left out, not answering every topic: {', '.join(first.runs_left_out) or 'none'}); "
            f"{bootstrap} bootstrap resamplings of the topics, seed {seed}, 95% intervals")
    return "\n\n".join([head + "\n" + side_by_side(results), *confusions])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the track's nugget assignment file")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=REPO / "out" / "embedding-cache")
    args = parser.parse_args()

    answers = read_assignments(args.data)
    pairs = nugget_pairs(answers)
    grades = np.array([n.grade for a in answers for n in a.nuggets])
    topic_of = np.array([p.query_id for p in pairs])
    embed = CachedEmbedder(args.cache)
    start = time.perf_counter()
    x = features(pairs, embed.embed)
    feature_seconds = time.perf_counter() - start - embed.seconds
    print(f"{len(pairs)} pairs, {len(answers)} answers; embedded {embed.embedded} new texts in {embed.seconds:.1f} s "
          f"(cache {args.cache}), features besides embedding {feature_seconds:.1f} s")

    fitting, held = split_topics(sorted(set(topic_of)))
    print(f"fitting topics ({len(fitting)}): {', '.join(fitting)}")
    print(f"held-out topics ({len(held)}): {', '.join(held)}")
    on_fit = np.isin(topic_of, fitting)
    start = time.perf_counter()
    parameters = fit(x[on_fit], grades[on_fit])
    print(f"fitted in {time.perf_counter() - start:.2f} s on {on_fit.sum()} pairs\n")
    print("# shipped parameters (exampp/grading/methods/nugget_embedding.py)")
    print(f"DEFAULT_WEIGHTS: tuple[float, ...] = {parameters['weights']}  # {'/'.join(FEATURES)}")
    print(f"DEFAULT_THRESHOLDS: tuple[float, ...] = {parameters['thresholds']}")
    print(f"DEFAULT_COSINE_THRESHOLD = {parameters['cosine'][0]}")
    current = (shipped.DEFAULT_WEIGHTS, shipped.DEFAULT_THRESHOLDS, (shipped.DEFAULT_COSINE_THRESHOLD,))
    same = current == (parameters["weights"], parameters["thresholds"], parameters["cosine"])
    print("(the module ships these)" if same else "(the module ships OTHER parameters: copy these in)")

    held_answers = [a for a in answers if a.query_id in held]
    print("\n# held-out topics, against the official assignment")
    held_pairs = [p for p, fitted in zip(pairs, on_fit) if not fitted]
    print(compare(held_answers, predict(embed, held_pairs, parameters), args.bootstrap, args.seed))

    start = time.perf_counter()
    pooled = {name: np.zeros(len(pairs), dtype=int) for name in ("nugget-cosine", "nugget-embedding")}
    for topic in sorted(set(topic_of)):
        inside = topic_of == topic
        topic_pairs = [p for p, here in zip(pairs, inside) if here]
        for name, g in predict(embed, topic_pairs, fit(x[~inside], grades[~inside])).items():
            pooled[name][inside] = g
    print(f"\n# leave one topic out (11 fits, {time.perf_counter() - start:.1f} s): each topic graded by the "
          "methods fitted on the other 10")
    print(compare(answers, pooled, args.bootstrap, args.seed))


if __name__ == "__main__":
    main()
