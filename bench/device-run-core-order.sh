#!/usr/bin/env bash
# One device call for tgpu-bulk-reductions core-order (the atomic backward's
# dQ accumulator in mma core-block order: a warp's share one contiguous run,
# 16-byte stores, one bulk reduction per warp and step), on the .device/ of
# `VARIANTS="plain causal softcap gqa_causal"
#  ABLATIONS="rowmajor" ABLATION_HDIMS=128 bash bench/prepare-attention.sh build 128`:
#   check - every example's forward + backward against float64 at D = 64, 96
#           and 128 (Lq = 333: the padded last band), fp16, Lq = 1, many
#           query blocks, varlen, block-sparse and tree verify; memcheck,
#           racecheck, synccheck on a causal softcap backward;
#   bench - bench_attention.py (forward + backward) with the `rowmajor`
#           specs (--no-core-order) beside the defaults.
#   bench64 - at D = 64 the `atomic128` specs (--bwd-schedule atomic
#           --key-block 128) beside the two-kernel default.
#   default64 - D = 64's default (the 128-key atomic schedule) checked, and
#           the `twokernel` specs beside it.
#   bash bench/device-run-core-order.sh check|bench|both|bench64|default64 [seqlens] [variants]
set -u
MODE=$1
SEQS=${2:-4096,16384}
VARS=${3:-plain,causal,softcap,gqa_causal}
. bench/device-env.sh
# edge_cases HD LABEL: causal's backward at head dim HD in fp16, with one
# query, over many query blocks and at 70 x 70, and the block-sparse
# document mask, against float64.
edge_cases() {
  local hd=$1 label=$2 case
  for case in "--dtype fp16" "--seqlen 1 --seqlen-kv 700" "--seqlen 2000 --heads 16 --batch 3" "--seqlen 70 --seqlen-kv 70"; do
    echo "== causal hd$hd $label $case"
    timeout 90 $KILN run examples/causal.mlir --backend cuda --backward --head-dim $hd $case --check 2>&1 | grep -E "rel L2|PASS|FAIL|rror"
  done
  echo "== block_sparse_document hd$hd $label"
  timeout 90 $KILN run examples/block_sparse_document.mlir --backend cuda --backward --head-dim $hd --check 2>&1 | grep -E "rel L2|PASS|FAIL|rror"
}
if [ "$MODE" = check ] || [ "$MODE" = both ]; then
  {
    check_examples core "64 96 128"
    edge_cases 128 core
    echo "== varlen_causal hd128 (packed accumulator: row-major, red.global)"
    timeout 90 $KILN run examples/varlen_causal.mlir --backend cuda --backward --head-dim 128 --seqlens 3,100,513,0,250 --heads 4 --check 2>&1 | grep -E "rel L2|PASS|FAIL|rror"
    check_examples "atomic128 core" "64 96" --bwd-schedule atomic --key-block 128
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  sanitize "causal_softcap hd128 backward core" examples/causal_softcap.mlir --backend cuda --backward --head-dim 128 --seqlen 333 --seqlen-kv 517 --heads 2 | tee "$OUT/sanitize.txt"
fi
if [ "$MODE" = bench ] || [ "$MODE" = both ]; then
  bench_ablations core rowmajor --backward --hdims 128 --seqlens "$SEQS" --variants "$VARS"
fi
# D = 64 (two-kernel by default): the 128-key atomic schedule, now in core
# order, beside it, on the .device/ of
# `VARIANTS=... ABLATIONS="atomic128" ABLATION_HDIMS=64 bash bench/prepare-attention.sh build 64`.
if [ "$MODE" = bench64 ]; then
  bench_ablations core64 atomic128 --backward --hdims 64 --seqlens "$SEQS" --variants "$VARS"
fi
# D = 64 with the 128-key atomic schedule as its default, on a .device/ built
# with `ABLATIONS="twokernel" ABLATION_HDIMS=64`: the checks of its default
# backward (and of the 64-key atomic one, whose warps hold whole rows), the
# sanitizers, and the two-kernel schedule beside it.
if [ "$MODE" = default64 ]; then
  {
    check_examples default "64"
    check_examples "atomic64 core" "64" --bwd-schedule atomic
    edge_cases 64 default
  } > "$OUT/checks64.txt" 2>&1
  summarize_checks "$OUT/checks64.txt"
  sanitize "causal_softcap hd64 backward default" examples/causal_softcap.mlir --backend cuda --backward --head-dim 64 --seqlen 333 --seqlen-kv 517 --heads 2 | tee "$OUT/sanitize64.txt"
  bench_ablations default64 twokernel --backward --hdims 64 --seqlens "$SEQS" --variants "$VARS"
fi
