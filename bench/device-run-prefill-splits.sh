#!/usr/bin/env bash
# One device call: a prefill run of a small grid (B 1, 8 heads, Lq 200, L
# 32k, D = 128), whose split count tile-split-kv now takes from the prefill
# kernel's own grid (8 splits) where it used the decode program's (4), timed
# by `kiln run --repeats` at the plan's choice and at 4 and 1 splits, each
# checked against float64 first. On a .device/ with the kiln binary.
set -u
. bench/device-env.sh
for ex in plain causal; do
  for s in "" 4 1; do
    echo "== $ex Lq=200 Lk=32768 H=8 splits=${s:-plan}"
    timeout 120 $KILN run examples/$ex.mlir --backend cuda --head-dim 128 --heads 8 --seqlen 200 \
      --seqlen-kv 32768 ${s:+--kv-splits $s} --check --repeats 200 2>&1 | grep -E "PASS|FAIL|timed|rror"
  done
done | tee "$OUT/prefill-splits.txt"
