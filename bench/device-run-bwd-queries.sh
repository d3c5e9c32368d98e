#!/usr/bin/env bash
# One device call: the dK/dV kernel's steps at 128 queries (`--block-m 128`
# on the backward, the `m128` specs) beside the default 64 at D = 64, plain
# and causal, forward + backward in one process (bench_attention.py), after
# checks against float64 and the sanitizers on the 128-query backward. On
# the .device/ of
#   VARIANTS="plain causal" ABLATIONS="m128" ABLATION_HDIMS="64" bash bench/prepare-attention.sh build "64"
set -u
. bench/device-env.sh
{
  for ex in plain causal; do
    run_check "$ex hd64 m128" examples/$ex.mlir --backend cuda --backward --head-dim 64 --block-m 128 \
      --seqlen 333 --seqlen-kv 517 --heads 3
    run_check "$ex hd64 m128 2000x16x3" examples/$ex.mlir --backend cuda --backward --head-dim 64 --block-m 128 \
      --seqlen 2000 --heads 16 --batch 3
    run_check "$ex hd64 m128 Lq 70" examples/$ex.mlir --backend cuda --backward --head-dim 64 --block-m 128 \
      --seqlen 70 --seqlen-kv 700 --heads 2 --dtype fp16
  done
} > "$OUT/checks.txt" 2>&1
summarize_checks "$OUT/checks.txt"
sanitize "plain hd64 m128" examples/plain.mlir --backend cuda --backward --head-dim 64 --block-m 128 \
  --seqlen 300 --heads 2 > "$OUT/sanitize.txt" 2>&1
tail -3 "$OUT/sanitize.txt"
ROUNDS=3 BUDGET=300 bench_ablations m128 m128 --backward --hdims 64 --seqlens 2048,4096,16384 \
  --variants plain,causal 2>&1 | tail -20
