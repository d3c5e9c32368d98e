#!/usr/bin/env bash
# One device call for ordered dQ adds whose turns are passed on a step late
# (tgpu-ordered-adds deferred-signal: causal's turns in arrival order), on
# the .device/ of
#   VARIANTS="plain causal" ABLATIONS="ordered orderedeager twokernel" \
#     ABLATION_HDIMS="128 64" bash bench/prepare-attention.sh build "128 64"
# Checks (--ordered-dq forward + backward against float64, kiln run failing
# unless reruns are bit-equal: causal, causal softcap and plain at D = 64
# and 128, causal with Lq > Lk, Lq < Lk, fp16, more CTAs than the GPU holds,
# one head of 8192, and the eager ablation), memcheck and synccheck on
# causal's, then bench_attention.py's `ordered` (deferred),
# `orderedeager` (--no-deferred-turns) and `twokernel` beside the defaults.
#   bash bench/device-run-deferred-turns.sh [seqlens] [hdims]
set -u
. bench/device-env.sh > /dev/null
SEQS=${1:-2048,4096,16384}
HDIMS=${2:-128,64}
O=--ordered-dq
{
for ex in causal causal_softcap plain; do for hd in 128 64; do
  run_check "$ex hd$hd ordered" examples/$ex.mlir --backend cuda --backward --head-dim $hd --seqlen 700 --seqlen-kv 900 --heads 3 $O
done; done
for case in "--seqlen 900 --seqlen-kv 300" "--seqlen 2000 --heads 16 --batch 3" "--seqlen 300 --seqlen-kv 1000" "--dtype fp16" \
    "--seqlen 1 --seqlen-kv 700" "--seqlen 64 --seqlen-kv 64"; do
  run_check "causal hd128 ordered $case" examples/causal.mlir --backend cuda --backward --head-dim 128 $O $case
done
run_check "causal hd128 ordered N=8192 one head" examples/causal.mlir --backend cuda --backward --head-dim 128 $O --seqlen 8192 --heads 1
run_check "causal hd128 ordered eager" examples/causal.mlir --backend cuda --backward --head-dim 128 $O --no-deferred-turns --seqlen 700 --heads 3
} > $OUT/checks.txt 2>&1
summarize_checks $OUT/checks.txt
grep -h "reruns" $OUT/checks.txt | sort | uniq -c
for tool in memcheck synccheck; do
  echo -n "$tool: "
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $KILN run examples/causal.mlir --backend cuda --backward --head-dim 128 --seqlen 333 --seqlen-kv 517 --heads 2 $O --check 2>&1 | grep -E "ERROR SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
done
ROUNDS=${ROUNDS:-2} BUDGET=${BUDGET:-300} bench_ablations deferred ordered,orderedeager,twokernel --backward --hdims "$HDIMS" --seqlens "$SEQS" --variants causal,plain 2>&1 | tail -16
