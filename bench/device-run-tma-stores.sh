#!/usr/bin/env bash
# One device call for tgpu-tma-stores (the consumers' output tiles staged in
# shared memory and stored by TMA), on the .device/ of
# `VARIANTS="plain causal sliding_window alibi" ABLATIONS="notma"
#  ABLATION_HDIMS="64 128" bash bench/prepare-attention.sh build "64 128"`:
#   check - every example's forward + backward against float64 at D = 64,
#           128 and 256 (Lq = 333: a partial last query block, whose rows
#           past the sequence TMA must not write), fp16, N = 1 and a
#           many-tile causal forward; memcheck, racecheck, synccheck;
#   bench - bench_attention.py (forward) with the `notma` specs
#           (--no-tma-stores) beside the defaults.
#   bash bench/device-run-tma-stores.sh check|bench|all [hdims] [seqlens] [variants]
set -u
MODE=${1:-all}
HDIMS=${2:-64,128}
SEQS=${3:-2048,4096,16384}
VARS=${4:-plain,causal,sliding_window,alibi}
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = all ]; then
  {
    check_examples tma "64 128 256"
    for case in "--dtype fp16" "--seqlen 1 --seqlen-kv 700" "--seqlen 2000 --heads 16 --batch 3"; do
      for ex in causal sliding_window; do
        echo "== $ex hd64 $case"
        timeout 90 $KILN run examples/$ex.mlir --backend cuda --head-dim 64 $case --check 2>&1 | grep -E "rel L2|PASS|FAIL|rror"
      done
    done
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  {
    sanitize "sliding window hd64" examples/sliding_window.mlir --backend cuda --head-dim 64 --seqlen 700 --heads 2
    sanitize "causal hd128" examples/causal.mlir --backend cuda --head-dim 128 --seqlen 333 --seqlen-kv 517 --heads 2
  } | tee "$OUT/sanitize.txt"
fi
if [ "$MODE" = bench ] || [ "$MODE" = all ]; then
  bench_ablations tma-stores notma --hdims "$HDIMS" --seqlens "$SEQS" --variants "$VARS"
fi
