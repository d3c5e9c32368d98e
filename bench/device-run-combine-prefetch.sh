#!/usr/bin/env bash
# The by-rows combine kernel's prefetch of the next split's block
# (tile-split-kv combine-prefetch), in one device call: the GPU decode suite
# and tree-verify checks at 2-5 splits with and without the prefetch against
# float64, compute-sanitizer on a by-rows combine, then bench_decode.py with
# `_nopf` (--no-combine-prefetch) beside the defaults and
# probe_verify_splits.py (each kernel's time per step) for both.
# On a .device/ from bench/prepare-decode.sh.
#   bash bench/device-run-combine-prefetch.sh
set -u
. bench/device-env.sh
timeout 400 bash test/Runtime/run-gpu-decode-suite.sh "$KILN" > "$OUT/decode-suite.txt" 2>&1
echo "decode suite rc=$?"; grep -E "^FAIL|summary|failed:" "$OUT/decode-suite.txt"
for pf in "" --no-combine-prefetch; do
  for s in 2 3 5; do
    run_check "tree Lq=32 splits=$s by rows ${pf:-prefetch}" examples/tree_verify.mlir --backend cuda \
      --seqlen 32 --seqlen-kv 3000 --heads 8 --batch 2 --kv-splits $s --combine-by-rows $pf
  done
  run_check "plain hd64 Lq=100 splits=3 by rows ${pf:-prefetch}" examples/plain.mlir --backend cuda \
    --head-dim 64 --seqlen 100 --seqlen-kv 5000 --heads 2 --kv-splits 3 --combine-by-rows $pf
done > "$OUT/checks.txt" 2>&1
summarize_checks "$OUT/checks.txt"
sanitize "tree Lq=32 splits=3 by rows" examples/tree_verify.mlir --backend cuda --seqlen 32 \
  --seqlen-kv 3000 --heads 8 --batch 2 --kv-splits 3 --combine-by-rows
timeout 240 python3 bench/bench_decode.py --lib "$LIB" --specs .device/specs --variants _nopf \
  > "$OUT/bench_decode.txt" 2>&1
echo "bench_decode rc=$?"
grep -A20 "^ *shape" "$OUT/bench_decode.txt"
timeout 120 python3 bench/probe_verify_splits.py --lib "$LIB" --specs .device/specs \
  --programs ,_nopf --splits 0,2,4 2>&1 | grep -v -i warn | tee "$OUT/probe-verify-splits.txt"
