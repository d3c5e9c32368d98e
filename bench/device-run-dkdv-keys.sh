#!/usr/bin/env bash
# One device call for the backward's keys per dK/dV CTA at D = 128 (the
# two-kernel schedule at attn-choose-tiles' attn.two_kernel_key_block = 128,
# GQA on the 128-key atomic schedule), on the .device/ of
#   VARIANTS="plain causal softcap alibi gqa_causal" ABLATIONS="twokernel tk64" \
#     bash bench/prepare-attention.sh build 128
#   check - every example's forward + backward against float64 at D = 128
#           on the two-kernel schedule (bit-identical reruns checked by
#           kiln run), with fp16, one query, one Q block, Lq != Lk both
#           ways, many tiles, dropout, block-sparse lists, capture
#           gradients (deterministic); GQA's default (atomic) likewise;
#           memcheck, racecheck and synccheck on both;
#   bench - bench_attention.py (forward + backward) with `twokernel` (the
#           deterministic schedule, now 128 keys per dK/dV CTA) and `tk64`
#           (--bwd-schedule two-kernel --key-block 64: the deterministic
#           schedule before, and GQA's default before) beside the defaults.
#   bash bench/device-run-dkdv-keys.sh check|bench|both [seqlens] [variants]
# Environment: BUDGET (the bench's).
set -u
MODE=$1
SEQS=${2:-2048,4096,16384}
VARS=${3:-plain,causal,softcap,alibi,gqa_causal}
. bench/device-env.sh
TK="--bwd-schedule two-kernel"
if [ "$MODE" = check ] || [ "$MODE" = both ]; then
  {
    check_examples tk128 128 $TK
    for case in "--dtype fp16" "--seqlen 1 --seqlen-kv 700" "--seqlen 64 --seqlen-kv 700" "--seqlen 700 --seqlen-kv 300" \
        "--seqlen 300 --seqlen-kv 700" "--seqlen 2000 --heads 16 --batch 3" "--dropout 0.2"; do
      run_check "causal hd128 tk128 $case" examples/causal.mlir --backend cuda --backward --head-dim 128 $TK $case
      run_check "gqa_causal hd128 auto $case" examples/gqa_causal.mlir --backend cuda --backward --head-dim 128 --heads 8 $case
    done
    run_check "plain hd128 tk128 one tile" examples/plain.mlir --backend cuda --backward --head-dim 128 $TK --seqlen 70 --seqlen-kv 70
    run_check "block_sparse_document hd128 tk128" examples/block_sparse_document.mlir --backend cuda --backward --head-dim 128 $TK
    run_check "alibi hd128 deterministic capture gradients" examples/alibi.mlir --backend cuda --backward --head-dim 128 \
      --seqlen 1000 --heads 3 --deterministic-capture-gradients
    run_check "gqa_causal hd128 auto group 8" examples/gqa_causal.mlir --backend cuda --backward --head-dim 128 --heads 16 \
      --seqlen 333 --seqlen-kv 517
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  {
    sanitize "causal_softcap hd128 tk128" examples/causal_softcap.mlir --backend cuda --backward --head-dim 128 $TK \
      --seqlen 333 --seqlen-kv 517 --heads 2
    sanitize "gqa_causal hd128 auto" examples/gqa_causal.mlir --backend cuda --backward --head-dim 128 --heads 8 \
      --seqlen 333 --seqlen-kv 517
  } | tee "$OUT/sanitize.txt"
fi
if [ "$MODE" = bench ] || [ "$MODE" = both ]; then
  bench_ablations dkdv twokernel,tk64 --backward --hdims 128 --seqlens "$SEQS" --variants "$VARS"
fi
