#!/usr/bin/env bash
# One device call on the order of the dK/dV kernels' key blocks
# (tgpu-longest-first wave-chunks in the backward: the longest key blocks
# first within chunks of about a wave of (head, batch) pairs), on the
# .device/ of `VARIANTS="causal gqa_causal document_mask" ABLATIONS=nobwdlf
# ABLATION_HDIMS="64 128" bash bench/prepare-attention.sh build "64 128"`:
# causal, causal softcap, GQA causal and the document mask forward + backward against float64
# (partial blocks, many CTAs so that several chunks run, Lq != Lk both ways,
# fp16, the two-kernel schedule, the ablation), memcheck and racecheck on
# GQA's; then bench_attention.py forward + backward with the ablation
# (`nobwdlf`, grid order) beside the default.
#   bash bench/device-run-backward-longest-first.sh [check|bench|all] [hdims] [seqlens] [variants]
set -u
MODE=${1:-all}
HDS=${2:-64,128}
SEQS=${3:-2048,4096,16384}
VARS=${4:-causal,gqa_causal}
. bench/device-env.sh
if [ "$MODE" != bench ]; then
{
  for hd in 64 128; do
    for ex in causal gqa_causal causal_softcap; do
      heads=4; [ $ex = gqa_causal ] && heads=8
      C="examples/$ex.mlir --backend cuda --backward --head-dim $hd"
      run_check "$ex hd$hd partial" $C --seqlen 333 --seqlen-kv 517 --heads $heads
      run_check "$ex hd$hd many CTAs" $C --seqlen 2000 --heads 16 --batch 3
      run_check "$ex hd$hd Lq>Lk" $C --seqlen 900 --seqlen-kv 333 --heads $heads
    done
    C="examples/gqa_causal.mlir --backend cuda --backward --head-dim $hd"
    run_check "gqa_causal hd$hd fp16" $C --seqlen 700 --heads 8 --dtype fp16
    run_check "gqa_causal hd$hd two-kernel" $C --seqlen 1500 --heads 16 --batch 2 --bwd-schedule two-kernel
    run_check "gqa_causal hd$hd grid order" $C --seqlen 2000 --heads 16 --batch 3 --no-backward-longest-first
    run_check "causal hd$hd 5 x 3000" examples/causal.mlir --backend cuda --backward --head-dim $hd --seqlen 3000 --heads 5 --batch 3
  done
  run_check "gqa_causal hd256" examples/gqa_causal.mlir --backend cuda --backward --head-dim 256 --seqlen 1200 --heads 8 --batch 2
  run_check "causal hd128 ordered" examples/causal.mlir --backend cuda --backward --head-dim 128 --seqlen 1500 --heads 8 --ordered-dq
  for hd in 64 128; do
    run_check "document_mask hd$hd many CTAs" examples/document_mask.mlir --backend cuda --backward --head-dim $hd --seqlen 2000 --heads 16 --batch 3
  done
} > $OUT/checks.txt 2>&1
summarize_checks $OUT/checks.txt
for tool in memcheck racecheck; do
  echo -n "$tool: "
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $KILN run examples/gqa_causal.mlir --backend cuda --backward \
    --head-dim 128 --seqlen 1000 --heads 8 --batch 2 --check 2>&1 | grep -E "SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
done
fi
[ "$MODE" = check ] && exit 0
ROUNDS=${ROUNDS:-3} BUDGET=${BUDGET:-420} bench_ablations bwdlf nobwdlf --backward --hdims "$HDS" --seqlens "$SEQS" --variants "$VARS" 2>&1 | tail -30
