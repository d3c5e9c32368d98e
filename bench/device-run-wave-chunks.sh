#!/usr/bin/env bash
# One device call on the order of the causal forward's query blocks
# (tgpu-longest-first wave-chunks: the longest first within chunks of about
# a wave of (head, batch) pairs; GQA's keep the whole-grid order), on the
# .device/ of `VARIANTS="causal causal_softcap alibi" ABLATIONS=nowc
# ABLATION_HDIMS="64 128" bash bench/prepare-attention.sh build "64 128"`:
# forward checks against float64 (the short program at seq_kv <= 4096 and
# the prefill program, many tiles, Lq != Lk, split KV, fp16), then
# bench_attention.py's forward with the ablation (`nowc`, grid order).
#   bash bench/device-run-wave-chunks.sh [check|bench|all] [hdims] [seqlens] [variants]
# (2026-11-29: D = 64 in one call, D = 128 and GQA causal's 128-key atomic
# backward at D = 64 in the next, with
#   VARIANTS="causal causal_softcap alibi gqa_causal" ABLATIONS="nowc atomic128" \
#     ABLATION_HDIMS="64 128" bash bench/prepare-attention.sh build "64 128"
# then `bench/device-run-wave-chunks.sh bench 128` and, with BACKWARD rows,
# `. bench/device-env.sh; bench_ablations gqa64 atomic128 --backward --hdims 64
# --seqlens 2048,4096,16384 --variants gqa_causal`; docs/performance.md.)
set -u
MODE=${1:-all}
HDS=${2:-64,128}
SEQS=${3:-2048,4096,16384}
VARS=${4:-causal,causal_softcap,alibi}
. bench/device-env.sh
if [ "$MODE" != bench ]; then
{
  for hd in 64 128; do
    for ex in causal causal_softcap alibi; do
      C="examples/$ex.mlir --backend cuda --head-dim $hd"
      run_check "$ex hd$hd short, many tiles" $C --seqlen 3000 --heads 16 --batch 3
      run_check "$ex hd$hd prefill" $C --seqlen 5000 --heads 8 --batch 3
    done
    C="examples/causal.mlir --backend cuda --head-dim $hd"
    run_check "causal hd$hd Lq<Lk" $C --seqlen 4500 --seqlen-kv 5000 --heads 8 --batch 2
    run_check "causal hd$hd fp16 Lq>Lk" $C --seqlen 2000 --seqlen-kv 700 --heads 4 --dtype fp16
    run_check "causal hd$hd 2 splits" $C --seqlen 300 --seqlen-kv 6000 --heads 4 --kv-splits 2
  done
} > $OUT/checks.txt 2>&1
summarize_checks $OUT/checks.txt
fi
[ "$MODE" = check ] && exit 0
ROUNDS=${ROUNDS:-3} BUDGET=${BUDGET:-300} bench_ablations wc nowc --hdims "$HDS" --seqlens "$SEQS" --variants "$VARS" 2>&1 | tail -24
