#!/usr/bin/env bash
# One device call for producer-reductions over GQA's per-step dQ views (the
# producer recomputes each share's query head and view), on the .device/ of
# `VARIANTS="causal gqa_causal" ABLATIONS="noprod" bash bench/prepare-attention.sh build 128`:
# GQA's backward (gqa_causal, tree_verify) against float64 at D = 64 and
# 128 on the default, atomic and ordered (--ordered-dq) schedules, partial
# blocks and Lq > Lk; memcheck / racecheck / synccheck on GQA causal's
# D = 128 backward (default and ordered); then bench_attention.py (forward +
# backward) with the `noprod` specs beside the defaults.
#   bash bench/device-run-gqa-producer-reductions.sh [seqlens]
set -u
SEQS=${1:-4096,16384}
. bench/device-env.sh
{
  for hd in 64 128; do
    for sched in "" "--bwd-schedule atomic" "--ordered-dq"; do
      for shape in "--seqlen 333 --seqlen-kv 517" "--seqlen 517 --seqlen-kv 333" "--seqlen 2000 --batch 2"; do
        run_check "gqa_causal hd$hd $sched $shape" examples/gqa_causal.mlir --backend cuda --backward --head-dim $hd --heads 8 $sched $shape
      done
    done
    run_check "tree_verify hd$hd" examples/tree_verify.mlir --backend cuda --backward --head-dim $hd --heads 8
  done
} > "$OUT/checks.txt" 2>&1
summarize_checks "$OUT/checks.txt"
{
  sanitize "gqa_causal hd128 backward" examples/gqa_causal.mlir --backend cuda --backward --head-dim 128 --heads 8 --seqlen 333 --seqlen-kv 517
  sanitize "gqa_causal hd128 backward ordered" examples/gqa_causal.mlir --backend cuda --backward --head-dim 128 --heads 8 --seqlen 333 --seqlen-kv 517 --ordered-dq
} | tee "$OUT/sanitize.txt"
bench_ablations gqa noprod --backward --hdims 128 --seqlens "$SEQS" --variants causal,gqa_causal
