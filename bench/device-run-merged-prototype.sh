#!/usr/bin/env bash
# Prototype timing (2026-11-28): the forward of plain and causal at D = 64 and
# 128 beside `merged` specs, whose full and trailing-partial KV loops are one
# loop with the mask in a branch; then the cached kernels' SASS.
set -u
# The specs' `merged` columns: `python3 bench/prototype_merged_loop.py` on the split
# (`--no-branch-masked-steps`) plain and causal forward specs first.
export OUT=${OUT:-/tmp/kiln-out}
BACKWARD=0 BUDGET=330 bash bench/device-run-attention.sh merged "64,128" 2048,4096,16384 plain,causal merged
echo "== SASS of the cached kernels (HGMMA, local memory)"
for f in $(ls /tmp/kiln-cache/* 2>/dev/null | head -40); do
  n=$(cuobjdump -sass "$f" 2>/dev/null | grep -c HGMMA); l=$(cuobjdump -sass "$f" 2>/dev/null | grep -cE "LDL|STL")
  fn=$(cuobjdump -sass "$f" 2>/dev/null | grep -m1 "Function :" | awk '{print $3}')
  echo "$fn HGMMA=$n LDL/STL=$l"
done | sort | uniq -c
