#!/usr/bin/env bash
# One device call for tgpu-warp-specialize ring-vectors (the backward's
# per-query LSE and D copied by the producer beside Q into the ring, read by
# the consumers from shared memory) and the preprocess's base-2 LSE, on the
# .device/ of
# `VARIANTS="plain causal softcap alibi" ABLATIONS="norv"
#  ABLATION_HDIMS="64 128" bash bench/prepare-attention.sh build "64 128"`:
#   check - every example's forward + backward against float64 at D = 64,
#           96 and 128 (Lq = 333: a partial last block), the two-kernel
#           schedule at 64 and 128, D = 256, fp16, Lq = 1, many query blocks,
#           70 x 70, varlen, block-sparse; memcheck, racecheck, synccheck on
#           a causal softcap backward at D = 128 and (two-kernel) 64;
#   bench - bench_attention.py (forward + backward) with the `norv` specs
#           (--no-ring-vectors) beside the defaults at D = 64 and 128.
#   bash bench/device-run-ring-vectors.sh check|bench|both [seqlens] [variants]
set -u
MODE=$1
SEQS=${2:-4096,16384}
VARS=${3:-plain,causal,softcap,alibi}
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = both ]; then
  {
    check_examples rv "64 96 128"
    check_examples "rv two-kernel" "64 128" --bwd-schedule two-kernel
    for ex in plain causal_softcap; do
      run_check "$ex hd256 rv" examples/$ex.mlir --backend cuda --backward --head-dim 256 --seqlen 333 --seqlen-kv 517 --heads 2
    done
    for case in "--dtype fp16" "--seqlen 1 --seqlen-kv 700" "--seqlen 2000 --heads 16 --batch 3" "--seqlen 70 --seqlen-kv 70"; do
      run_check "causal hd128 rv $case" examples/causal.mlir --backend cuda --backward --head-dim 128 $case
      run_check "causal hd64 rv $case" examples/causal.mlir --backend cuda --backward --head-dim 64 $case
    done
    run_check "varlen_causal hd128" examples/varlen_causal.mlir --backend cuda --backward --head-dim 128 --seqlens 3,100,513,0,250 --heads 4
    run_check "block_sparse_document hd128" examples/block_sparse_document.mlir --backend cuda --backward --head-dim 128
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  {
    sanitize "causal_softcap hd128 backward rv" examples/causal_softcap.mlir --backend cuda --backward --head-dim 128 --seqlen 333 --seqlen-kv 517 --heads 2
    sanitize "causal_softcap hd64 two-kernel backward rv" examples/causal_softcap.mlir --backend cuda --backward --head-dim 64 --bwd-schedule two-kernel --seqlen 333 --seqlen-kv 517 --heads 2
  } | tee "$OUT/sanitize.txt"
fi
if [ "$MODE" = bench ] || [ "$MODE" = both ]; then
  bench_ablations rv norv --backward --hdims 64,128 --seqlens "$SEQS" --variants "$VARS"
fi
