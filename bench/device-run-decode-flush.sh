#!/usr/bin/env bash
# One device call: bench_decode.py's rows twice in one process each, with the
# GPU timer's L2 flush leaving dirty lines (do_bench's flush, the default) and
# clean ones (--flush clean): how much of a short decode step's time is the
# write-back of the flush's own lines, for Kiln and the peers alike. On a
# .device/ from bench/prepare-decode.sh.
set -u
. bench/device-env.sh
for f in dirty clean; do
  timeout 200 python3 bench/bench_decode.py --lib "$LIB" --specs .device/specs --variants "" --flush $f \
    > "$OUT/bench_decode_$f.txt" 2>&1
  echo "== flush $f rc=$?"
  grep -A14 "^ *shape" "$OUT/bench_decode_$f.txt"
done
