#!/usr/bin/env bash
# Set up (see setup.sh) and evaluate the example collection shipped in this repository:
# trec_eval-style evaluation of one run, a leaderboard of all runs against the official qrels,
# and the correlation between two leaderboards. Outputs also go to out/example/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
out=out/example
mkdir -p "$out"

echo "== trec_eval-compatible evaluation of runs/bm25.run"
exampp eval -m official qrels/official.qrels runs/bm25.run | tee "$out/bm25.eval"

echo "== leaderboard of all runs against the official judgments"
exampp leaderboard runs/ --qrels qrels/official.qrels -m nDCG@10 -m 'P(rel=2)@10' -m AP -m RR \
    | tee "$out/leaderboard.txt"

echo "== how well does reciprocal rank reproduce the nDCG@10 ranking?"
exampp correlate --runs runs/ --a-qrels qrels/official.qrels --a-measure nDCG@10 \
    --b-qrels qrels/official.qrels --b-measure RR --show | tee "$out/correlation.txt"
