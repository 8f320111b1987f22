#!/usr/bin/env bash
# Full reproduction of the paper's offline experiments: every synthetic workload, the LoCoMo
# protocol and the dialogue-turn protocol, all 9 presets, seeds 42 1337 2024; then the experience-following study's RegAgent. Writes docs/results/<workload>.jsonl (the data),
# docs/results/<workload>.txt (the table) and docs/figures/<workload>.png, and prints the
# wall time of each workload and of the whole run.
#
#   benchmarks/reproduce.sh [path/to/locomo.json]      (latency is separate: it needs a quiet host)
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=${BENCH:-.venv/bin/solar-bench}
LOCOMO=${1:-${SOLAR_DATA:?"pass the LoCoMo file, or set SOLAR_DATA to the data folder"}/locomo/locomo-dev.json}
mkdir -p docs/results docs/figures
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
run() {
  local name=$1; shift
  local start=$SECONDS
  "$BENCH" "$name" "$@" --format json --out "docs/results/$name.jsonl" \
    --plot "docs/figures/$name.png" | tee "docs/results/$name.txt"
  echo "$name: $((SECONDS - start)) s" >&2
}
for workload in cycling working-set drift noise-static noise-stream; do
  run "$workload"
done
# Both rankings: hybrid (the default) and cosine alone, the rows before hybrid retrieval.
run locomo --data "$LOCOMO" --retrieval hybrid,vector --embedder minilm
# Dialogue turns streamed into a bounded memory, questions asked at the end or interleaved,
# under every ranking.
run dialogue --data "$LOCOMO" --retrieval hybrid,vector,lexical --embedder minilm
run regagent
# The ranking's evidence on the same conversations: the fusion chosen, the relevance floor and
# gate, the response cache's check, and how far a better salience prior could go.
export PYTHONPATH=benchmarks${PYTHONPATH:+:$PYTHONPATH}
for script in fusion_choice relevance_floor cache_lexical prior_variants; do
  start=$SECONDS
  .venv/bin/python "benchmarks/$script.py" --data "$LOCOMO" | tee "docs/results/${script//_/-}.txt"
  echo "$script: $((SECONDS - start)) s" >&2
done
# Steps per second in memory, on SQLite and on PostgreSQL (a throwaway server when the binaries
# are installed: scripts/install_postgres.sh; else its rows say "skipped"). A timing: quiet host.
start=$SECONDS
"$BENCH" persistence --repeats 5 --format json \
  --out docs/results/persistence.jsonl \
  | tee docs/results/persistence.txt
echo "persistence: $((SECONDS - start)) s" >&2
# Resident memory of one process serving 1,000 / 5,000 / 20,000 users (each N in a fresh process).
start=$SECONDS
"$BENCH" growth --format json --out docs/results/growth.jsonl
echo "growth: $((SECONDS - start)) s" >&2
echo "full reproduction: $SECONDS s" >&2
