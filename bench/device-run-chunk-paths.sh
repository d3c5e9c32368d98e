#!/usr/bin/env bash
# One device call: the schedules whose kernels store (or load) bf16 tiles
# through kiln::store / kiln::load, and so by 16-byte chunks where they fit
# (kiln/chunks.cuh), beside the backward's preprocess and dQ conversion:
# the mma.sync, cp.async and per-lane-store ablations' forward O and
# backward dK / dV / dQ, and varlen's. Forward + backward against float64,
# and memcheck on one of them. On the .device/ of bench/prepare-decode.sh or
# any with the kiln binary and runtime library.
set -u
. bench/device-env.sh
{
  for flags in --no-warpgroup-mma --no-warp-specialize --no-tma-stores; do
    for hd in 64 128; do
      run_check "causal hd$hd $flags" examples/causal.mlir --backend cuda --backward --head-dim $hd $flags \
        --seqlen 333 --seqlen-kv 517 --heads 3
    done
  done
  run_check "varlen causal hd128" examples/varlen_causal.mlir --backend cuda --backward --head-dim 128 \
    --seqlens 100,333,7,517 --heads 4
  run_check "varlen causal hd64 fp16" examples/varlen_causal.mlir --backend cuda --backward --head-dim 64 \
    --seqlens 64,200,1 --heads 2 --dtype fp16
} > "$OUT/checks.txt" 2>&1
summarize_checks "$OUT/checks.txt"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $KILN run examples/causal.mlir --backend cuda \
  --backward --head-dim 64 --no-warpgroup-mma --seqlen 200 --heads 2 --check 2>&1 | grep -E "ERROR SUMMARY|PASS|FAIL"
