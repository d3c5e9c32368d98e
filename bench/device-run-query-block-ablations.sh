#!/usr/bin/env bash
# One device call: plain D = 64 forward + backward against float64 with its
# default 128-query dK/dV steps and under the ablation flags that keep them
# (--no-bulk-reductions, --no-async-accumulate, --no-overlap-products; with
# --ordered-dq the steps go back to 64 queries). On a .device/ with kiln.gz.
. bench/device-env.sh > /dev/null
{
for f in "" "--no-bulk-reductions" "--no-async-accumulate" "--no-overlap-products" "--ordered-dq"; do
  run_check "plain hd64 $f" examples/plain.mlir --backend cuda --backward --head-dim 64 --seqlen 333 --seqlen-kv 517 --heads 3 $f
  run_check "plain hd64 2000x16x3 $f" examples/plain.mlir --backend cuda --backward --head-dim 64 --seqlen 2000 --heads 16 --batch 3 $f
done
} > $OUT/checks.txt 2>&1
summarize_checks $OUT/checks.txt
grep -B1 FAIL $OUT/checks.txt | head
