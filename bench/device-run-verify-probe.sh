#!/usr/bin/env bash
# One device call: bench/probe_decode_host.py (short decode rows: do_bench
# against GPU-only time, host µs per call, kv_splits sweep), then the tree
# verify rows of bench_decode.py with the prefill program (128-row tiles,
# two consumer warpgroups) instead of the decode one (`_nodecode`:
# --decode-rows 0) and with 128-row decode blocks (`_d128`: --decode-rows 128
# --block-m 192).
set -u
. bench/device-env.sh
timeout 200 python3 bench/probe_decode_host.py --lib "$LIB" --specs .device/specs 2>&1 | grep -v Warn \
  | tee "$OUT/probe-decode-host.txt"
timeout 240 python3 bench/bench_decode.py --lib "$LIB" --specs .device/specs \
  --variants _nodecode,_d128 --only tree > "$OUT/bench_decode_tree.txt" 2>&1
echo "bench_decode rc=$?"
grep -A12 "^ *shape" "$OUT/bench_decode_tree.txt"
