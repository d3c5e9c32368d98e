#!/usr/bin/env bash
# One device call for tgpu-bulk-reductions defer-flush (the atomic dK/dV
# kernel's dQ share staged in its step, fenced and added during the next
# one), on the .device/ of
# `VARIANTS="plain causal softcap alibi" ABLATIONS="nodefer"
#  ABLATION_HDIMS="64 128" bash bench/prepare-attention.sh build "64 128"`:
#   check - every example's forward + backward against float64 at D = 64,
#           96 and 128 (Lq = 333: a partial last block; Lq = 1; Lq = 70,
#           a single step per loop; many query blocks), fp16, D = 256,
#           varlen, block-sparse; memcheck, racecheck, synccheck on causal
#           softcap's backward at D = 64 and 128;
#   bench - bench_attention.py (forward + backward) with the `nodefer`
#           specs (--no-defer-flush) beside the defaults.
#   bash bench/device-run-defer-flush.sh check|bench|both [seqlens] [variants] [hdims]
set -u
MODE=$1
SEQS=${2:-4096,16384}
VARS=${3:-plain,causal,softcap,alibi}
HDIMS=${4:-64,128}
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = both ]; then
  {
    check_examples df "64 96 128"
    for ex in plain causal_softcap; do
      run_check "$ex hd256 df" examples/$ex.mlir --backend cuda --backward --head-dim 256 --seqlen 333 --seqlen-kv 517 --heads 2
    done
    for case in "--dtype fp16" "--seqlen 1 --seqlen-kv 700" "--seqlen 64 --seqlen-kv 700" "--seqlen 2000 --heads 16 --batch 3" "--seqlen 70 --seqlen-kv 70"; do
      run_check "causal hd128 df $case" examples/causal.mlir --backend cuda --backward --head-dim 128 $case
      run_check "plain hd64 df $case" examples/plain.mlir --backend cuda --backward --head-dim 64 $case
    done
    run_check "varlen_causal hd128" examples/varlen_causal.mlir --backend cuda --backward --head-dim 128 --seqlens 3,100,513,0,250 --heads 4
    run_check "block_sparse_document hd128" examples/block_sparse_document.mlir --backend cuda --backward --head-dim 128
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  {
    sanitize "causal_softcap hd128 backward df" examples/causal_softcap.mlir --backend cuda --backward --head-dim 128 --seqlen 333 --seqlen-kv 517 --heads 2
    sanitize "causal_softcap hd64 backward df" examples/causal_softcap.mlir --backend cuda --backward --head-dim 64 --seqlen 333 --seqlen-kv 517 --heads 2
  } | tee "$OUT/sanitize.txt"
fi
if [ "$MODE" = bench ] || [ "$MODE" = both ]; then
  bench_ablations df nodefer --backward --hdims "$HDIMS" --seqlens "$SEQS" --variants "$VARS"
fi
