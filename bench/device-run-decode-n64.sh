#!/usr/bin/env bash
# One device call: bench/bench_decode.py on GPU time (--timer gpu, the host's
# time per call hidden) with the decode programs' 64-key blocks (`_n64`,
# --block-n 64: 98.5 KB of shared memory, two CTAs per multiprocessor
# instead of one) and 128-row decode blocks (`_d128`, tree verify only) beside
# the defaults; dense, paged and tree-verify rows, each checked against SDPA's
# math backend. On a .device/ holding those specs.
set -u
. bench/device-env.sh
timeout 420 python3 bench/bench_decode.py --lib "$LIB" --specs .device/specs --variants _n64,_d128 \
  > "$OUT/bench_decode.txt" 2>&1
echo "bench_decode rc=$?"
grep -A16 "^ *shape" "$OUT/bench_decode.txt"
