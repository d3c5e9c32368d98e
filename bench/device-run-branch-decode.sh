#!/usr/bin/env bash
# One device call: bench/bench_decode.py with plain's `_nobranch` spec
# (--no-branch-masked-steps: the decode kernel's last partial key block in
# a loop of its own) beside the default, on a .device/ holding
# plain_hd128{,_nobranch}, gqa4_decode_hd128 and gqa8_decode_hd128 specs
# (`kiln compile`); the MHA rows run plain's decode kernel, the GQA rows are
# the unchanged control. Each row checked against SDPA's math backend.
set -u
. bench/device-env.sh
timeout 300 python3 bench/bench_decode.py --lib "$LIB" --specs .device/specs --variants _nobranch \
  > "$OUT/bench_decode.txt" 2>&1
echo "bench_decode rc=$?"
grep -v Warning "$OUT/bench_decode.txt" | grep -v "^  " | tail -n 12
