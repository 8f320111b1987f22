#!/usr/bin/env bash
# Ablation of solar-adaptive: the full preset and one variant per mechanism switched off,
# with the four policies it must match (fifo, lfu, solar, solar-a), on every workload of the bars.
# Writes docs/results/ablation-<workload>.{jsonl,txt}; benchmarks/ablation_table.py summarises.
#
#   benchmarks/ablation.sh [path/to/locomo.json]
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=${BENCH:-.venv/bin/solar-bench}
LOCOMO=${1:-${SOLAR_DATA:?"pass the LoCoMo file, or set SOLAR_DATA to the data folder"}/locomo/locomo-dev.json}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
POLICIES="fifo,lfu,solar,solar-a,solar-adaptive"
POLICIES+=",solar-adaptive[hysteresis=0]"      # no hysteresis: swap on any larger gain
POLICIES+=",solar-adaptive[shift=0]"           # no regime-shift detector
POLICIES+=",solar-adaptive[use_feedback=False]" # ratings ignored
POLICIES+=",solar-adaptive[window_per_slot=4]" # remember 4 x K queries instead of 16 x K
POLICIES+=",solar-adaptive[max_window=4096]"   # no cap on the window (slower steps)
mkdir -p docs/results
for workload in cycling working-set drift noise-stream; do
  start=$SECONDS
  "$BENCH" "$workload" --policies "$POLICIES" --format json \
    --out "docs/results/ablation-$workload.jsonl" 2>/dev/null > "docs/results/ablation-$workload.txt"
  echo "$workload: $((SECONDS - start)) s" >&2
done
start=$SECONDS
"$BENCH" locomo --data "$LOCOMO" --policies "$POLICIES" --format json \
  --out docs/results/ablation-locomo.jsonl 2>/dev/null > docs/results/ablation-locomo.txt
echo "locomo: $((SECONDS - start)) s" >&2
# The default policy's bars on the main results (make bench) and on the 30-seed LoCoMo run when present.
PY=${PY:-.venv/bin/python}
"$PY" benchmarks/policy_bars.py --misses
if [ -f docs/results/locomo-30seeds.jsonl ]; then
  "$PY" benchmarks/policy_bars.py --locomo docs/results/locomo-30seeds.jsonl --misses
fi
