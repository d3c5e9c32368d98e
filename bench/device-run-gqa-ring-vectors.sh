#!/usr/bin/env bash
# One device call (2026-11-29) for `tgpu-warp-specialize ring-vectors` with
# views the step makes itself: GQA's dK/dV kernels (one loop over the
# group's query heads) now get each step's LSE and D from the producer too,
# beside Q, instead of loading them from global memory (Nsight Compute on
# GQA causal's D = 64 dK/dV kernel: long-scoreboard stalls 1.68 per
# instruction against causal's 1.02). On the .device/ of
#   VARIANTS=gqa_causal ABLATIONS=norv ABLATION_HDIMS="64 128" \
#     bash bench/prepare-attention.sh build "64 128"
#   check - GQA causal's forward + backward against float64 at D = 64, 96,
#           128 and 256 (partial blocks, many CTAs, fp16, Lq > Lk, the
#           two-kernel schedule, ordered dQ adds and their reruns), the tree
#           verify's backward (GQA too) and the ablation; memcheck,
#           racecheck and synccheck on GQA causal's D = 64 backward;
#   bench - bench_attention.py forward + backward, GQA causal, the `norv`
#           specs (the previous default: no ring vectors) beside the defaults.
#   bash bench/device-run-gqa-ring-vectors.sh check|bench|all [hdims] [seqlens]
set -u
MODE=${1:-all}
HDIMS=${2:-64,128}
SEQS=${3:-2048,4096,16384}
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = all ]; then
  {
    for hd in 64 96 128 256; do
      A="examples/gqa_causal.mlir --backend cuda --backward --head-dim $hd"
      run_check "gqa_causal hd$hd Lq<Lk" $A --heads 8 --seqlen 333 --seqlen-kv 517
      [ $hd = 256 ] && continue
      run_check "gqa_causal hd$hd many CTAs" $A --heads 16 --batch 3 --seqlen 2000
      run_check "gqa_causal hd$hd Lq>Lk fp16" $A --heads 8 --seqlen 700 --seqlen-kv 300 --dtype fp16
      run_check "gqa_causal hd$hd two-kernel" $A --heads 8 --seqlen 333 --seqlen-kv 517 --bwd-schedule two-kernel
    done
    for hd in 64 128; do
      A="examples/gqa_causal.mlir --backend cuda --backward --head-dim $hd"
      run_check "gqa_causal hd$hd ordered dQ (reruns)" $A --heads 16 --batch 3 --seqlen 2000 --ordered-dq
      run_check "gqa_causal hd$hd no ring vectors" $A --heads 8 --seqlen 333 --seqlen-kv 517 --no-ring-vectors
      run_check "tree_verify hd$hd backward" examples/tree_verify.mlir --backend cuda --backward --head-dim $hd --heads 8
    done
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  sanitize "gqa_causal hd64 backward" examples/gqa_causal.mlir --backend cuda --backward --head-dim 64 \
    --seqlen 300 --seqlen-kv 517 --heads 8 | tee "$OUT/sanitize.txt"
fi
if [ "$MODE" = bench ] || [ "$MODE" = all ]; then
  ROUNDS=${ROUNDS:-3} BUDGET=${BUDGET:-330} bench_ablations gqarv norv --backward \
    --hdims "$HDIMS" --seqlens "$SEQS" --variants gqa_causal 2>&1 | tail -16
fi
