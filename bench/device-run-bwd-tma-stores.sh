#!/usr/bin/env bash
# One device call for tgpu-tma-stores in the backward (dK and dV, and a
# bf16 dQ, by TMA from a shared staging buffer; at D = 128 the dK/dV
# kernel's staging overlays its loops' rings), on the .device/ of
# `VARIANTS="plain causal" ABLATIONS="notmab" ABLATION_HDIMS="64 128"
#  bash bench/prepare-attention.sh build "64 128"`:
#   check - the atomic backward's checks (bench/device-env.sh
#           check_atomic_backward; racecheck covers the D = 128 overlay),
#           then the two-kernel schedule's dQ kernel at D = 64 and 128;
#   bench - bench_attention.py (forward + backward) with the `notmab` specs
#           (--no-tma-stores) beside the defaults.
#   bash bench/device-run-bwd-tma-stores.sh check|bench|both [seqlens] [variants] [hdims]
# Environment: CHECK_HDIMS (default "64 96 128"), BUDGET (the bench's).
set -u
MODE=$1
SEQS=${2:-4096,16384}
VARS=${3:-plain,causal}
HDIMS=${4:-64,128}
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = both ]; then
  check_atomic_backward tma "${CHECK_HDIMS:-64 96 128}"
  for hd in 64 128; do
    for ex in causal sliding_window; do
      run_check "$ex hd$hd two-kernel" examples/$ex.mlir --backend cuda --backward --bwd-schedule two-kernel \
        --head-dim $hd --seqlen 333 --seqlen-kv 517 --heads 3
    done
  done 2>&1 | tee "$OUT/two-kernel-checks.txt" | grep -cE "PASS" | sed 's/^/two-kernel PASS lines: /'
  grep -B2 -E "FAIL|rror" "$OUT/two-kernel-checks.txt" | head
fi
if [ "$MODE" = bench ] || [ "$MODE" = both ]; then
  bench_ablations tma notmab --backward --hdims "$HDIMS" --seqlens "$SEQS" --variants "$VARS"
fi
