#!/usr/bin/env bash
# One device call for tgpu-warp-specialize's max-ctas-per-sm (three CTAs per
# multiprocessor for one-warpgroup kernels whose registers allow: D = 64's
# dQ kernels), on the .device/ of
# `VARIANTS="plain causal sliding_window"
#  ABLATIONS="c3" ABLATION_HDIMS=64 bash bench/prepare-attention.sh build 64`:
#   check - every example's forward + backward against float64 at D = 64
#           with --max-ctas-per-sm 3, fp16, Lq = 1, many query blocks;
#           memcheck, racecheck, synccheck on a causal backward;
#   bench - bench_attention.py (forward + backward) with the `c3` specs
#           beside the defaults.
#   bash bench/device-run-ctas.sh check|bench|both [seqlens] [variants]
set -u
MODE=$1
SEQS=${2:-4096,16384}
VARS=${3:-plain,causal,sliding_window}
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = both ]; then
  {
    check_examples ctas3 "64" --max-ctas-per-sm 3
    for case in "--dtype fp16" "--seqlen 1 --seqlen-kv 700" "--seqlen 2000 --heads 16 --batch 3"; do
      echo "== causal hd64 ctas3 $case"
      timeout 90 $KILN run examples/causal.mlir --backend cuda --backward --head-dim 64 --max-ctas-per-sm 3 $case --check 2>&1 | grep -E "rel L2|PASS|FAIL|rror"
    done
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  sanitize "causal hd64 backward ctas3" examples/causal.mlir --backend cuda --backward --head-dim 64 --max-ctas-per-sm 3 --seqlen 333 --seqlen-kv 517 --heads 2 | tee "$OUT/sanitize.txt"
fi
if [ "$MODE" = bench ] || [ "$MODE" = both ]; then
  bench_ablations ctas c3 --backward --hdims 64 --seqlens "$SEQS" --variants "$VARS"
fi
