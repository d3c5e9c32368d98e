#!/usr/bin/env bash
# One device call: bench/bench_compile.py on the GPU host (issue 13's "cold
# compile < 300 ms per kernel, warm < 5 ms" is a figure of that machine),
# for every example at the head dims given, with the .device/ that
# bench/prepare-attention.sh assembled (its kiln binary and runtime library).
#   bash bench/device-run-compile.sh ["64 128"]
set -u
. bench/device-env.sh
nproc; lscpu | grep -E "^Model name" || true
for hd in ${1:-128}; do
  timeout 280 python3 bench/bench_compile.py --kiln $KILN --head-dim $hd --warm "$LIB" --repeats 3 \
    > "$OUT/bench_compile_hd$hd.txt" 2>&1
  echo "bench_compile hd$hd rc=$?"; cat "$OUT/bench_compile_hd$hd.txt" | tail -n 20
done
