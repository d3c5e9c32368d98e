#!/usr/bin/env bash
# One device call for issue 11's verify target (>= 60% of the bandwidth with
# 8-64 tree-masked drafts): the decode benchmark (bench/bench_decode.py, dense,
# paged and tree rows, no ablations) with the verify step for GQA 4:1 and for
# 32 heads of their own K and V (`tree_verify_mha`), then Nsight Compute on
# the 64-draft rows of both, to show which of the tensor pipe and DRAM bounds
# each. On the .device/ of bench/prepare-device.sh.
set -u
. bench/device-env.sh
# The MHA verify (a variant no benchmark ran before) against float64 first:
# the decode program (<= 64 rows per KV head), split, and the prefill one.
for a in "--seqlen 64 --seqlen-kv 3000" "--seqlen 8 --seqlen-kv 5000 --kv-splits 4" "--seqlen 64 --seqlen-kv 300 --dtype fp16 --head-dim 64"; do
  run_check "tree_verify_mha $a" .device/tree_verify_mha.mlir --backend cuda --batch 2 --heads 4 $a
done 2>&1 | tee "$OUT/verify-checks.txt"
timeout 330 python3 bench/bench_decode.py --lib "$LIB" --specs .device/specs --variants "" \
  > "$OUT/bench_decode.txt" 2>&1
echo "bench_decode rc=$?"
# Nsight Compute on each 64-draft row's first call (its split and combine
# kernels; bench_decode.py's own decode.json then goes to /tmp, not $OUT).
for row in "H32/8 L8192 Lq64 tree" "H32/32 L8192 Lq64 tree"; do
  tag=$(echo "$row" | tr -c 'a-zA-Z0-9\n' '_')
  OUT=/tmp timeout 150 ncu --clock-control none --kernel-name regex:tree_verify --launch-count 2 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    --section Occupancy --section LaunchStats \
    --metrics sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__t_sector_hit_rate.pct \
    --print-details all python3 bench/bench_decode.py --lib "$LIB" --specs .device/specs --variants "" \
    --only "$row" --rounds 1 > "$OUT/ncu-$tag.txt" 2>&1
  echo "== ncu $row (rc=$?)"
  grep -E "^  [a-z_]+tree_verify|Duration|DRAM Throughput|Compute \(SM\) Throughput|Memory Throughput|pipe_tensor|dram__bytes_read|sector_hit|Grid Size|Registers Per|Achieved Occupancy" \
    "$OUT/ncu-$tag.txt" | sed 's/  */ /g' | head -30
done
grep -v Warning "$OUT/bench_decode.txt" | grep -v "^  " | tail -n 16
