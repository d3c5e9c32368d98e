#!/usr/bin/env bash
# One device call (2026-11-29): GQA causal's forward + backward at D = 64,
# the farthest row from issue 10's 1.0x cuDNN (0.87-0.91x at N >= 4k on
# 2026-11-29, on the two-kernel schedule then), now on the 128-key atomic
# schedule by default. On the .device/ of
#   VARIANTS="causal gqa_causal" ABLATIONS=twokernel ABLATION_HDIMS=64 \
#     bash bench/prepare-attention.sh build 64
#   check   - GQA causal and causal forward + backward against float64 at
#             D = 64 (partial blocks, many CTAs, fp16, Lq > Lk);
#   profile - `kiln run --repeats` of both backwards at N = 4096 (B 4, 32
#             query heads; GQA over 8 KV heads), GQA's two-kernel schedule
#             beside, then Nsight Compute on each dK/dV kernel;
#   bench   - bench_attention.py forward + backward, causal and GQA causal,
#             the two-kernel specs beside the defaults.
#   bash bench/device-run-gqa64-profile.sh check|profile|bench|all [seqlens]
set -u
MODE=${1:-all}
SEQS=${2:-2048,4096,16384}
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = all ]; then
  {
    for ex in causal gqa_causal; do
      A="examples/$ex.mlir --backend cuda --backward --head-dim 64"
      run_check "$ex hd64 Lq<Lk" $A --heads 8 --seqlen 333 --seqlen-kv 517
      run_check "$ex hd64 many CTAs" $A --heads 16 --batch 3 --seqlen 2000
      run_check "$ex hd64 Lq>Lk fp16" $A --heads 8 --seqlen 700 --seqlen-kv 300 --dtype fp16
    done
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
fi
if [ "$MODE" = profile ] || [ "$MODE" = all ]; then
  A="--backend cuda --backward --head-dim 64 --seqlen 4096 --heads 32 --batch 4"
  for spec in "causal|" "gqa_causal|" "gqa_causal|--bwd-schedule two-kernel"; do
    ex=${spec%%|*} flags=${spec#*|}
    echo "== time $ex $flags"
    timeout 120 $KILN run examples/$ex.mlir $A $flags --repeats 20 2>&1 | grep -iE "TFLOP|ms|rror" | head -6
  done > "$OUT/times.txt" 2>&1
  cat "$OUT/times.txt"
  for ex in causal gqa_causal; do
    echo "== ncu $ex dkdv"
    timeout 150 ncu --clock-control none --kernel-name "regex:bwd_dkdv" --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats \
      --section Occupancy --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
      --section LaunchStats --print-details all $KILN run examples/$ex.mlir $A > "$OUT/ncu-$ex.txt" 2>&1
    grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L1/TEX Hit|L2 Hit|Issue Slots Busy|Warp Cycles Per Issued|Registers Per|Executed Instructions  |Stall (Long|Barrier|Wait|Short|Math|MIO|Dispatch|LG|Membar|Branch)|Pipe Tensor|Grid Size|Waves|Shared Memory Configuration Size|Dynamic Shared" \
      "$OUT/ncu-$ex.txt" | sed 's/  */ /g' | head -32
  done
fi
if [ "$MODE" = bench ] || [ "$MODE" = all ]; then
  ROUNDS=${ROUNDS:-3} BUDGET=${BUDGET:-300} bench_ablations gqa64 twokernel --backward \
    --hdims 64 --seqlens "$SEQS" --variants causal,gqa_causal 2>&1 | tail -16
fi
