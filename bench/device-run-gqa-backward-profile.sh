#!/usr/bin/env bash
# One device call (2026-11-29): why GQA causal's backward trails causal's
# (issue 10: GQA causal forward + backward 0.88-0.95x cuDNN, causal
# 0.96-1.01x). D = 128, 16k tokens at N = 4096 (B 4, 16 query heads; GQA
# over 4 KV heads). First `kiln run --repeats` of both backwards (and GQA's
# two-kernel schedule and --no-group-steps), then Nsight Compute on each
# dK/dV kernel; then the ordered GQA backward's bit-for-bit reruns, not
# checked before (`kiln run --ordered-dq --check` compares two runs).
set -u
. bench/device-env.sh > /dev/null
A="--backend cuda --backward --head-dim 128 --seqlen 4096 --heads 16 --batch 4"
{
for spec in "causal|" "gqa_causal|" "gqa_causal|--bwd-schedule two-kernel" "gqa_causal|--no-group-steps"; do
  ex=${spec%%|*} flags=${spec#*|}
  echo "== time $ex $flags"
  timeout 120 $KILN run examples/$ex.mlir $A $flags --repeats 20 2>&1 | grep -iE "TFLOP|ms|rror" | head -6
done
} > $OUT/times.txt 2>&1
cat $OUT/times.txt
for ex in causal gqa_causal; do
  echo "== ncu $ex dkdv"
  timeout 150 ncu --clock-control none --kernel-name "regex:bwd_dkdv" --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats \
    --section Occupancy --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --print-details all $KILN run examples/$ex.mlir $A > "$OUT/ncu-$ex.txt" 2>&1
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|Issue Slots Busy|Warp Cycles Per Issued|Registers Per|Executed Instructions  |Stall (Long|Barrier|Wait|Short|Math|MIO|Dispatch|LG|Membar|Branch)|Pipe Tensor|L2 Hit|Grid Size|Waves" \
    "$OUT/ncu-$ex.txt" | sed 's/  */ /g' | head -30
done
for args in "--seqlen 700 --heads 8" "--seqlen 2000 --heads 16 --batch 3"; do
  echo "== gqa_causal hd128 ordered $args"
  timeout 90 $KILN run examples/gqa_causal.mlir --backend cuda --backward --head-dim 128 $args --ordered-dq --check 2>&1 \
    | grep -E "rel L2|PASS|FAIL|rror|reruns"
done > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
