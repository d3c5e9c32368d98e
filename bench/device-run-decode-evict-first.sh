#!/usr/bin/env bash
# One device call: the decode programs with their Q, K and V loads under an L2
# evict-first policy (bench/prototype_decode_evict_first.py, the `_ef` specs)
# beside the defaults, on bench_decode.py's rows (GPU time, every row checked
# against SDPA's math backend). On the .device/ of bench/prepare-decode.sh,
# with the `_ef` specs made here first:
#   bash bench/device-run-decode-evict-first.sh prepare
set -u
if [ "${1:-}" = prepare ]; then
  set -e
  for s in plain_hd128 gqa4_decode_hd128 gqa8_decode_hd128; do
    python3 bench/prototype_decode_evict_first.py .device/specs/$s.cubin.json .device/specs/${s}_ef.cubin.json
  done
  exit 0
fi
. bench/device-env.sh
timeout 300 python3 bench/bench_decode.py --lib "$LIB" --specs .device/specs --variants _ef \
  > "$OUT/bench_decode.txt" 2>&1
echo "bench_decode rc=$?"
grep -v Warning "$OUT/bench_decode.txt" | grep -v "^  \|^{" | tail -n 16
