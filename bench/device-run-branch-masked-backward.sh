#!/usr/bin/env bash
# One device call for branch-masked-steps in the backward (the dK/dV
# kernel's full Q loop also runs the partial steps, masked in a branch;
# opt-in since this measured it, --branch-masked-backward-steps), on the
# .device/ of `VARIANTS=plain ABLATIONS="nobranch branchbwd" ABLATION_HDIMS="64 128"
# bash bench/prepare-attention.sh build "64 128"`: plain's backward against
# float64 on every schedule (default, ordered, deterministic, two-kernel),
# partial blocks both ways, one query, fp16, D = 64 .. 256; memcheck /
# racecheck / synccheck on the D = 128 backward; then bench_attention.py
# (forward + backward) with the `nobranch` (forward split) and `branchbwd`
# (backward branched) specs beside the defaults. (Measured 2026-11-28 when
# the backward's branch was the default and `nobranch` split both.)
#   bash bench/device-run-branch-masked-backward.sh [seqlens]
set -u
SEQS=${1:-4096,16384}
. bench/device-env.sh
{
  for hd in 64 128 256; do
    for shape in "--seqlen 333 --seqlen-kv 517" "--seqlen 517 --seqlen-kv 333"; do
      run_check "plain hd$hd $shape" examples/plain.mlir --backend cuda --backward --head-dim $hd --heads 2 $shape --branch-masked-backward-steps
    done
  done
  for sched in "--ordered-dq" "--bwd-schedule deterministic" "--bwd-schedule two-kernel" "--branch-masked-backward-steps"; do
    for hd in 64 128; do
      run_check "plain hd$hd $sched" examples/plain.mlir --backend cuda --backward --head-dim $hd --heads 2 --seqlen 333 --seqlen-kv 517 $sched
    done
  done
  for case in "--dtype fp16 --seqlen 300 --seqlen-kv 300" "--seqlen 1 --seqlen-kv 700" "--seqlen 2000 --heads 16 --batch 3" "--seqlen 70 --seqlen-kv 70"; do
    run_check "plain hd128 $case" examples/plain.mlir --backend cuda --backward --head-dim 128 $case
  done
} > "$OUT/checks.txt" 2>&1
summarize_checks "$OUT/checks.txt"
sanitize "plain hd128 backward" examples/plain.mlir --backend cuda --backward --head-dim 128 --seqlen 333 --seqlen-kv 517 --heads 2 | tee "$OUT/sanitize.txt"
ROUNDS=3 BUDGET=240 bench_ablations branchbwd nobranch,branchbwd --backward --hdims 64,128 --seqlens "$SEQS" --variants plain
