#!/usr/bin/env bash
# One device call for convert-attn-to-tile branch-masked-steps (the last,
# partial key block run by the full loop, its mask in a branch), on the
# .device/ of `VARIANTS="plain softcap alibi" ABLATIONS="nobranch"
# ABLATION_HDIMS="64 128" bash bench/prepare-attention.sh build "64 128"`:
# the variants it changes against float64 (partial blocks, one query, the
# decode program, fp16, D = 64 .. 256, GQA), memcheck / racecheck /
# synccheck on plain's D = 128 forward with a partial block; then
# bench_attention.py's forward with the `nobranch` specs
# (--no-branch-masked-steps) beside the defaults, and the kernels' SASS.
#   bash bench/device-run-branch-masked-steps.sh [seqlens]
set -u
SEQS=${1:-2048,4096,16384}
. bench/device-env.sh
{
  for ex in plain softcap alibi; do
    for hd in 64 128 256; do
      run_check "$ex hd$hd" examples/$ex.mlir --backend cuda --head-dim $hd --seqlen 333 --seqlen-kv 517 --heads 2
    done
    run_check "$ex hd128 fp16" examples/$ex.mlir --backend cuda --head-dim 128 --seqlen 517 --seqlen-kv 333 --dtype fp16
    run_check "$ex hd128 one query" examples/$ex.mlir --backend cuda --head-dim 128 --seqlen 1 --seqlen-kv 700 --heads 4
    run_check "$ex hd128 Lk 70" examples/$ex.mlir --backend cuda --head-dim 128 --seqlen 2000 --seqlen-kv 70 --heads 4
    run_check "$ex hd64 many" examples/$ex.mlir --backend cuda --head-dim 64 --seqlen 3000 --seqlen-kv 2999 --heads 8 --batch 2
  done
  run_check "plain hd128 ablation" examples/plain.mlir --backend cuda --head-dim 128 --seqlen 333 --seqlen-kv 517 --no-branch-masked-steps
} > "$OUT/checks.txt" 2>&1
summarize_checks "$OUT/checks.txt"
sanitize "plain hd128 forward" examples/plain.mlir --backend cuda --head-dim 128 --seqlen 333 --seqlen-kv 517 --heads 2 | tee "$OUT/sanitize.txt"
ROUNDS=3 BUDGET=300 bench_ablations branch nobranch --hdims 64,128 --seqlens "$SEQS" --variants plain,softcap,alibi
echo "== SASS of the cached kernels (HGMMA, local memory)"
for f in $(ls /tmp/kiln-cache/* 2>/dev/null); do
  s=$(cuobjdump -sass "$f" 2>/dev/null)
  echo "$(echo "$s" | grep -m1 "Function :" | awk '{print $3}') HGMMA=$(echo "$s" | grep -c HGMMA) LDL/STL=$(echo "$s" | grep -cE "LDL|STL")"
done | sort | uniq -c
