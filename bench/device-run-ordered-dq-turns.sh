#!/usr/bin/env bash
# One device call for ordered dQ adds with turns in arrival order (causal:
# key blocks from the last program id down, Q blocks first to last, turn
# J(i) - j), on the .device/ of
#   VARIANTS="plain causal" ABLATIONS="ordered" ABLATION_HDIMS="128 64" \
#     bash bench/prepare-attention.sh build "128 64"
# Checks (--ordered-dq forward + backward against float64, kiln run failing
# unless reruns are bit-equal: plain, causal, causal softcap and ALiBi at
# D = 64 and 128, causal with Lq > Lk, Lq < Lk, fp16, more CTAs than the GPU
# holds, one head of 8192), memcheck on causal's, then bench_attention.py's
# `ordered` beside the defaults (plain and causal, D = 128 and 64, N = 2k and
# 16k; the budget decides how far it gets).
set -u
. bench/device-env.sh > /dev/null
O=--ordered-dq
{
for ex in plain causal causal_softcap alibi; do for hd in 128 64; do
  run_check "$ex hd$hd ordered" examples/$ex.mlir --backend cuda --backward --head-dim $hd --seqlen 700 --seqlen-kv 900 --heads 3 $O
done; done
for case in "--seqlen 900 --seqlen-kv 300" "--seqlen 2000 --heads 16 --batch 3" "--seqlen 300 --seqlen-kv 1000" "--dtype fp16"; do
  run_check "causal hd128 ordered $case" examples/causal.mlir --backend cuda --backward --head-dim 128 $O $case
done
run_check "causal hd128 ordered N=8192 one head" examples/causal.mlir --backend cuda --backward --head-dim 128 $O --seqlen 8192 --heads 1
} > $OUT/checks.txt 2>&1
summarize_checks $OUT/checks.txt
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $KILN run examples/causal.mlir --backend cuda --backward --head-dim 128 --seqlen 333 --seqlen-kv 517 --heads 2 $O --check 2>&1 | grep -E "ERROR SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
ROUNDS=2 BUDGET=200 bench_ablations ordered ordered --backward --hdims 128,64 --seqlens 2048,16384 --variants plain,causal 2>&1 | tail -10
