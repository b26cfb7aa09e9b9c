#!/usr/bin/env bash
# Set up (see setup.sh) and run the main job on the example collection shipped in this repository,
# in its workspace examples/: grade the pooled passages of runs/ against
# question_banks/questions.jsonl with the offline embedding grader (settings in exampp.toml),
# write qrels/exam.qrels and the EXAM-Cover leaderboard, evaluate the runs on the EXAM-Qrels with
# trec_eval measures, and correlate the EXAM leaderboards with the official one. Outputs also go
# to examples/out/.
# EXAMPP_SKIP_SETUP=1 leaves .venv as it is (tests/docs_blocks.py runs the steps so).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${EXAMPP_SKIP_SETUP:-}" ]; then
    bash scripts/setup.sh embed
fi
. .venv/bin/activate
cd examples
out=out
mkdir -p "$out"

echo "== grade the pool of runs/ (grades.sqlite, qrels/exam.qrels, EXAM-Cover@20 leaderboard)"
exampp grade runs/ --no-progress --format tsv -o "$out/cover.tsv"
cat "$out/cover.tsv"

echo "== the same command again: nothing left to grade"
exampp grade runs/ --no-progress -o "$out/cover-again.txt"

echo "== trec_eval-compatible evaluation of runs/bm25.run on the EXAM-Qrels (relevant: grade >= 4)"
exampp eval -l 4 -m P.10,20 -m ndcg_cut.10,20 -m map qrels/exam.qrels runs/bm25.run | tee "$out/bm25.exam.eval"

echo "== leaderboard of all runs against the official judgments"
exampp leaderboard runs/ --qrels qrels/official.qrels -m nDCG@10 -m 'P(rel=2)@10' -m AP -m RR \
    --format tsv -o "$out/official.tsv"
cat "$out/official.tsv"

echo "== EXAM-Cover@20 against official nDCG@10"
exampp correlate --a "$out/official.tsv" --a-column nDCG@10 --b "$out/cover.tsv" --b-column mean --show \
    | tee "$out/correlation-cover.txt"

echo "== P@20 on EXAM-Qrels (grade >= 4) against official nDCG@10"
exampp correlate --runs runs/ --a-qrels qrels/official.qrels --a-measure nDCG@10 \
    --b-qrels qrels/exam.qrels --b-measure 'P(rel=4)@20' | tee "$out/correlation-qrels.txt"

echo "== agreement of EXAM labels with the official judgments"
exampp agree --exam qrels/exam.qrels --official qrels/official.qrels --rel-level 2 | tee "$out/agreement.txt"
