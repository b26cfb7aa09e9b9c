"""Build the example runs in examples/runs/ from the example collection (deterministic, stdlib only).

    python scripts/make_example_runs.py             # rewrite examples/runs/*.run of this repository
    python scripts/make_example_runs.py --out DIR   # write them elsewhere (the tests compare)

Each run ranks, per query, the 40 passages judged for that query in qrels/official.qrels and
keeps the top 20, written in trec_eval order (score descending, ties by docid descending) with
scores as Python float reprs rounded to 4 decimals. Random numbers come from random.Random
seeded with "<run>:<query_id>", so the files are identical on every machine and Python >= 3.11.
The runs are of deliberately different quality (P@10 with rel >= 2, best first):

  oracle-ish       official grade + uniform noise in [0, 1.2): grade-3 passages mostly first,
                   neighbouring grades sometimes swapped.
  dense-like       a "semantic" ranker simulated as 0.5 * BM25 (min-max scaled per query)
                   + 0.5 * grade / 3 + Gaussian noise (sd 0.15).
  bm25             real BM25 (k1 = 0.9, b = 0.4, Lucene idf) of the query text together with its
                   subtopic texts (as TREC CAR systems query with the facets), with document
                   frequencies and average length taken over the whole corpus. On the title
                   alone BM25 falls for the keyword-stuffed pages; see keyword-stuffed.
  random           the query's passages in random order; scores have one decimal, so they tie.
  weak             a shallow system that prefers partial and unhelpful text: BM25 rank with
                   grade-3 passages pushed down; it returns nothing at all for Q4, so measures
                   must count that query as 0.
  keyword-stuffed  the number of occurrences of the query title's terms in the passage (an
                   integer, so scores tie): rewards the keyword-stuffed ads and navigation pages.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "examples"  # the example collection's workspace
DEPTH = 20
STOPWORDS = frozenset("a an and are as at be by for from how in is it of on or the to what with".split())
WEAK_MISSING_QUERY = "Q4"

Scores = dict[str, float]


def tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOPWORDS]


class BM25:
    """Okapi BM25 with Lucene's idf, over a fixed set of documents."""

    def __init__(self, docs: dict[str, str], k1: float = 0.9, b: float = 0.4):
        self.k1, self.b = k1, b
        self.tf = {docid: Counter(tokens(text)) for docid, text in docs.items()}
        self.length = {docid: sum(tf.values()) for docid, tf in self.tf.items()}
        self.avg_length = sum(self.length.values()) / len(self.length)
        df = Counter(term for tf in self.tf.values() for term in tf)
        n = len(docs)
        self.idf = {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in df.items()}

    def score(self, query: str, docid: str) -> float:
        tf, norm = self.tf[docid], 1 - self.b + self.b * self.length[docid] / self.avg_length
        return sum(
            self.idf[t] * tf[t] * (self.k1 + 1) / (tf[t] + self.k1 * norm) for t in set(tokens(query)) if t in tf
        )


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        qid, _, docid, rel = line.split()
        qrels.setdefault(qid, {})[docid] = int(rel)
    return qrels


def minmax(scores: Scores) -> Scores:
    lo, hi = min(scores.values()), max(scores.values())
    return {d: (s - lo) / (hi - lo) for d, s in scores.items()}


def build_runs(root: Path) -> dict[str, dict[str, Scores]]:
    """``{run name: {query id: {docid: score}}}`` for all example runs (scores not yet cut to depth)."""
    corpus = {d["docid"]: d["text"] for d in read_jsonl(root / "corpus" / "passages.jsonl")}
    topics = read_jsonl(root / "topics" / "topics.jsonl")
    titles = {t["query_id"]: t["text"] for t in topics}
    with_subtopics = {t["query_id"]: " ".join([t["text"], *(s["text"] for s in t["subtopics"])]) for t in topics}
    qrels = read_qrels(root / "qrels" / "official.qrels")
    bm25 = BM25(corpus)

    def per_query(name: str, scorer: Callable[[random.Random, str, dict[str, int], Scores], Scores]
                  ) -> dict[str, Scores]:
        out = {}
        for qid in sorted(qrels):
            judged = qrels[qid]
            lexical = {d: bm25.score(with_subtopics[qid], d) for d in sorted(judged)}
            out[qid] = scorer(random.Random(f"{name}:{qid}"), qid, judged, lexical)
        return out

    def keyword_count(qid: str, docid: str) -> float:
        terms = set(tokens(titles[qid]))
        return float(sum(1 for t in tokens(corpus[docid]) if t in terms))

    return {
        "oracle-ish": per_query("oracle-ish", lambda rng, q, judged, lex: {
            d: judged[d] + rng.uniform(0, 1.2) for d in sorted(judged)}),
        "dense-like": per_query("dense-like", lambda rng, q, judged, lex: {
            d: 0.5 * s + 0.5 * judged[d] / 3 + rng.gauss(0, 0.15) for d, s in minmax(lex).items()}),
        "bm25": per_query("bm25", lambda rng, q, judged, lex: lex),
        "random": per_query("random", lambda rng, q, judged, lex: {
            d: round(rng.random(), 1) for d in sorted(judged)}),
        "weak": {q: s for q, s in per_query("weak", lambda rng, q, judged, lex: {
            d: s - (0.8 if judged[d] == 3 else 0.0) + rng.uniform(0, 0.3) for d, s in minmax(lex).items()}
        ).items() if q != WEAK_MISSING_QUERY},
        "keyword-stuffed": per_query("keyword-stuffed", lambda rng, q, judged, lex: {
            d: keyword_count(q, d) for d in sorted(judged)}),
    }


def run_text(name: str, scores: dict[str, Scores], depth: int = DEPTH) -> str:
    lines = []
    for qid in sorted(scores):
        ranked = sorted(((round(s, 4), d) for d, s in scores[qid].items()), reverse=True)[:depth]
        lines.extend(f"{qid} Q0 {d} {rank} {s!r} {name}\n" for rank, (s, d) in enumerate(ranked, start=1))
    return "".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="workspace holding corpus/, topics/, qrels/")
    parser.add_argument("--out", type=Path, help="output folder (default: ROOT/runs)")
    args = parser.parse_args()
    out = args.out or args.root / "runs"
    out.mkdir(parents=True, exist_ok=True)
    for name, scores in build_runs(args.root).items():
        (out / f"{name}.run").write_text(run_text(name, scores), encoding="utf-8")


if __name__ == "__main__":
    main()
