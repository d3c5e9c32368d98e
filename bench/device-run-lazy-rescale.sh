#!/usr/bin/env bash
# One device call for the opt-in tile-lazy-rescale (the online softmax's
# reference maximum moved only when a step's maximum exceeds it by more than
# 8 in log2 units) and
# tgpu-skip-unit-scales (the accumulator's correction skipped by warps whose
# factors are all 1), on the .device/ of
# `VARIANTS="plain causal softcap causal_softcap" ABLATIONS="lazy lazyskip skip"
#  ABLATION_HDIMS="128 256" bash bench/prepare-attention.sh build "128 256"`
# plus the tests' inputs:
#   check - every example's forward + backward against float64 at D = 64
#           and 128 (the backward reads the forward's LSE), scores that rise
#           along the keys (the reference moves in every step, or lags the
#           maximum) at D = 64, 128 and 256, fp16, a split-KV decode step,
#           all with both passes on; memcheck, racecheck, synccheck on a
#           forward;
#   bench - bench_attention.py (forward) with the `lazy`, `lazyskip` (both
#           on) and `skip` specs beside the defaults.
#   bash bench/device-run-lazy-rescale.sh check|bench|all [hdims] [seqlens] [variants]
set -u
MODE=${1:-all}
HDIMS=${2:-64,128,256}
SEQS=${3:-2048,8192}
VARS=${4:-plain,causal,softcap}
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = all ]; then
  {
    check_examples lazyskip "64 128" --lazy-rescale --skip-unit-scales
    for in in rising-scores slow-rising-scores; do
      for hd in 64 128 256; do
        for case in "" "--dtype fp16" "--seqlen 1 --seqlen-kv 5000"; do
          [ $hd != 128 ] && [ -n "$case" ] && continue
          echo "== $in hd$hd $case"
          timeout 90 $KILN run test/Numerics/Inputs/$in.mlir --backend cuda --backward --head-dim $hd \
            --heads 3 --seqlen 333 --seqlen-kv 1517 --check --lazy-rescale --skip-unit-scales $case 2>&1 | grep -E "rel L2|PASS|FAIL|rror"
        done
      done
    done
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  grep -A3 "^== slow-rising-scores hd128 $" "$OUT/checks.txt"
  sanitize "slow-rising forward" test/Numerics/Inputs/slow-rising-scores.mlir --backend cuda --head-dim 128 \
    --seqlen 300 --seqlen-kv 917 --heads 2 --lazy-rescale --skip-unit-scales | tee "$OUT/sanitize.txt"
fi
if [ "$MODE" = bench ] || [ "$MODE" = all ]; then
  bench_ablations lazy-rescale lazy,lazyskip,skip --hdims "$HDIMS" --seqlens "$SEQS" --variants "$VARS"
fi
