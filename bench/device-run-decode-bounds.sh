#!/usr/bin/env bash
# One device call on issue 11's dense decode rows: Nsight Compute on one
# step of each, Kiln's kernels and cuDNN's in the same process
# (bench/probe_decode_bounds.py: duration, DRAM throughput and bytes read per
# kernel, clocks left alone), then bench/bench_decode.py's rows (dense, paged,
# tree verify; no ablations) for the standing. On the .device/ of
# bench/prepare-device.sh (or prepare-decode.sh).
set -u
. bench/device-env.sh
timeout 200 ncu --clock-control none --profile-from-start off --section SpeedOfLight --section LaunchStats \
  --metrics dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum \
  --print-summary none python3 bench/probe_decode_bounds.py --lib "$LIB" --specs .device/specs \
  > "$OUT/ncu-decode-bounds.txt" 2>&1
echo "ncu rc=$?"
grep -E "^row|^  [A-Za-z_].*\(|Duration|DRAM Throughput|dram__bytes_read.sum|dram__throughput|Grid Size" \
  "$OUT/ncu-decode-bounds.txt" | sed 's/  */ /g' | head -80
timeout 330 python3 bench/bench_decode.py --lib "$LIB" --specs .device/specs --variants "" \
  > "$OUT/bench_decode.txt" 2>&1
echo "bench_decode rc=$?"
grep -v Warning "$OUT/bench_decode.txt" | grep -v "^  " | tail -n 16
