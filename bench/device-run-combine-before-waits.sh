#!/usr/bin/env bash
# One device call for tgpu-combine-before-waits and the review of the
# 128-key two-kernel backward: softcap and causal softcap backward at D = 64
# and 128 on both schedules against float64, capture gradients (not
# deterministic) on the 128-key two-kernel schedule, GQA without group
# steps (two kernels at 64 keys, no producer); memcheck, racecheck and
# synccheck on softcap's backward. On the .device/ of
#   VARIANTS=softcap ABLATIONS=" " bash bench/prepare-attention.sh build 128
set -u
. bench/device-env.sh > /dev/null
{
for ex in softcap causal_softcap; do for s in "" "--bwd-schedule two-kernel"; do
  run_check "$ex hd128 $s" examples/$ex.mlir --backend cuda --backward --head-dim 128 --seqlen 700 --seqlen-kv 900 --heads 3 $s
  run_check "$ex hd64 $s" examples/$ex.mlir --backend cuda --backward --head-dim 64 --seqlen 333 --seqlen-kv 517 --heads 3 $s
done; done
run_check "alibi hd128 capture gradients two-kernel" examples/alibi.mlir --backend cuda --backward --head-dim 128 --seqlen 1000 --heads 3 --capture-gradients --bwd-schedule two-kernel
run_check "bias table hd128 capture gradients two-kernel" test/Numerics/Inputs/bias-table.mlir --backend cuda --backward --head-dim 128 --seqlen 500 --heads 2 --capture-gradients --bwd-schedule two-kernel
run_check "gqa_causal hd128 no group steps" examples/gqa_causal.mlir --backend cuda --backward --head-dim 128 --heads 8 --seqlen 333 --seqlen-kv 517 --no-group-steps
} > $OUT/checks.txt 2>&1
summarize_checks $OUT/checks.txt
sanitize "softcap hd128 backward (combine-before-waits)" examples/softcap.mlir --backend cuda --backward --head-dim 128 --seqlen 333 --seqlen-kv 517 --heads 2 | tee $OUT/sanitize.txt
