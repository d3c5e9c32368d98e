#!/usr/bin/env bash
# One device call for tgpu-load-ahead (the backward's per-step LSE and D
# loaded a step ahead), on the .device/ of
# `VARIANTS="plain causal softcap alibi gqa_causal"
#  ABLATIONS="nola" ABLATION_HDIMS=64 bash bench/prepare-attention.sh build 64`:
#   check - every example's forward + backward against float64 at D = 64
#           and 96 (Lq = 333: the last step's load ahead reads past the
#           queries), fp16, Lq = 1, many query blocks; memcheck, racecheck,
#           synccheck on a causal backward;
#   bench - bench_attention.py (forward + backward) with the `nola` specs
#           (--no-load-ahead) beside the defaults.
#   bash bench/device-run-load-ahead.sh check|bench [seqlens] [variants]
set -u
MODE=$1
SEQS=${2:-4096,16384}
VARS=${3:-plain,causal,softcap,alibi,gqa_causal}
. bench/device-env.sh
if [ "$MODE" = check ]; then
  {
    check_examples load-ahead "64 96"
    for case in "--dtype fp16" "--seqlen 1 --seqlen-kv 700" "--seqlen 2000 --heads 16 --batch 3"; do
      echo "== causal hd64 $case"
      timeout 90 $KILN run examples/causal.mlir --backend cuda --backward --head-dim 64 $case --check 2>&1 | grep -E "rel L2|PASS|FAIL|rror"
    done
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  sanitize "causal hd64 backward" examples/causal.mlir --backend cuda --backward --head-dim 64 --seqlen 333 --seqlen-kv 517 --heads 2 | tee "$OUT/sanitize.txt"
fi
if [ "$MODE" = bench ]; then
  bench_ablations load-ahead nola --backward --hdims 64 --seqlens "$SEQS" --variants "$VARS"
fi
