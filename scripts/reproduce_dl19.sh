#!/usr/bin/env bash
# Reproduce the EXAM++ figures on TREC DL 2019 from the reference data (outside this repository).
# Usage: scripts/reproduce_dl19.sh [SHARED_DIR] [WORKSPACE]   (defaults: ../shared, out/dl19)
# Needs exampp on PATH (e.g. `. .venv/bin/activate` after scripts/setup.sh).
set -euo pipefail
shared=${1:-${EXAMPP_SHARED:-../shared}}
ws=${2:-out/dl19}
data=$shared/data/dl19
late=UNH_exDL_bm25   # submitted after the track: not part of the official leaderboard

exampp import "$data/DL19-graded-t5-rating-genq-exam-qrels-runs-with-text.jsonl.gz" \
    --workspace "$ws" --questions "$data/dl19-genq.jsonl.gz"
exampp qrels -w "$ws"                                   # graded EXAM labels (max self-rating)
for tau in 1 2 3 4 5; do
    exampp qrels -w "$ws" --min-grade $tau -o "$ws/qrels/exam-$tau.qrels"
done
exampp leaderboard "$ws/runs" --qrels "$ws/qrels/official.qrels" -m nDCG@10 --exclude $late \
    --format tsv -o "$ws/official.tsv"

printf '%-10s %-4s %8s %8s %8s %8s\n' leaderboard tau spearman kendall pearson tau_ap
row() {  # label tau, then correlate's arguments
    local label=$1 tau=$2; shift 2
    exampp correlate --a "$ws/official.tsv" --a-column nDCG@10 --exclude $late --format json "$@" \
        | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%-10s %-4s %8.4f %8.4f %8.4f %8.4f" % (sys.argv[1], sys.argv[2], d["spearman"], d["kendall"], d["pearson"], d["tau_ap"]))' "$label" "$tau"
}
for tau in 1 2 3 4 5; do
    for measure in P@20 nDCG@20; do
        row "$measure" $tau --runs "$ws/runs" --b-qrels "$ws/qrels/exam-$tau.qrels" --b-measure $measure
    done
    exampp cover -w "$ws" --tau $tau --format tsv -o "$ws/cover-$tau.tsv"
    row Cover@20 $tau --b "$ws/cover-$tau.tsv" --b-column mean
done
exampp agree --exam "$ws/qrels/exam.qrels" --official "$ws/qrels/official.qrels"
