#!/usr/bin/env bash
# One device call on the order in which a GQA causal forward's query blocks
# go out (tgpu-longest-first: the longest of the whole grid first, the
# block the slowest axis of the launch order, a group's query heads
# together), on the .device/ of `VARIANTS="causal gqa_causal" ABLATIONS=nolf
# ABLATION_HDIMS="64 128" bash bench/prepare-attention.sh build "64 128"`:
# GQA causal's forward + backward against float64 (partial blocks, fp16,
# many tiles, Lq != Lk both ways, one query, split KV, D = 64 to 256),
# the prefill kernel (seq_kv > 4096) at 3 x 5000, memcheck / racecheck /
# synccheck on its forward; then bench_attention.py
# with the ablation (`nolf`, grid order) beside the default, for each head
# dim (forward; BACKWARD=1 adds forward + backward).
#   bash bench/device-run-longest-first.sh [check|bench|all] [hdims] [seqlens] [variants]
set -u
MODE=${1:-all}
HDS=${2:-64,128}
SEQS=${3:-2048,4096,16384}
VARS=${4:-gqa_causal}
. bench/device-env.sh
if [ "$MODE" != bench ]; then
{
  for hd in 64 128 256; do
    C="examples/gqa_causal.mlir --backend cuda --head-dim $hd"
    run_check "gqa_causal hd$hd partial" $C --backward --seqlen 333 --seqlen-kv 517 --heads 8
    run_check "gqa_causal hd$hd many tiles" $C --backward --seqlen 2000 --heads 16 --batch 3
    run_check "gqa_causal hd$hd Lq>Lk" $C --seqlen 900 --seqlen-kv 333 --heads 8
  done
  for hd in 64 128; do
    C="examples/gqa_causal.mlir --backend cuda --head-dim $hd"
    run_check "gqa_causal hd$hd fp16" $C --backward --seqlen 700 --heads 8 --dtype fp16
    run_check "gqa_causal hd$hd short" $C --seqlen 3000 --heads 32 --batch 2
    run_check "gqa_causal hd$hd one query" $C --seqlen 1 --seqlen-kv 3000 --heads 8
    run_check "gqa_causal hd$hd 3 splits" $C --seqlen 200 --seqlen-kv 3000 --heads 8 --kv-splits 3
    run_check "gqa_causal hd$hd grid order" $C --seqlen 2000 --heads 16 --batch 3 --no-longest-first
    # seq_kv > 4096: the prefill kernel (the cases above run the short one)
    run_check "gqa_causal hd$hd prefill" $C --seqlen 5000 --heads 8 --batch 3
    run_check "gqa_causal hd$hd prefill Lq<Lk" $C --seqlen 4500 --seqlen-kv 5000 --heads 8 --batch 2
    run_check "gqa_causal hd$hd prefill 2 splits" $C --seqlen 300 --seqlen-kv 6000 --heads 8 --kv-splits 2
  done
  run_check "causal hd128 many tiles" examples/causal.mlir --backend cuda --backward --head-dim 128 --seqlen 2000 --heads 4 --batch 3
} > "$OUT/checks.txt" 2>&1
summarize_checks "$OUT/checks.txt"
sanitize "gqa_causal hd128 forward" examples/gqa_causal.mlir --backend cuda --head-dim 128 --seqlen 700 --heads 8 --batch 2 | tee "$OUT/sanitize.txt"
fi
[ "$MODE" = check ] && exit 0
B=; [ -n "${BACKWARD:-}" ] && B=--backward
ROUNDS=3 BUDGET=${BUDGET:-300} bench_ablations longest-first nolf --hdims "$HDS" --seqlens "$SEQS" --variants "$VARS" $B
