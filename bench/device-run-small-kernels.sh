#!/usr/bin/env bash
# One device call: the backward's small kernels (preprocess, dQ conversion)
# with 16-bit tiles by 16-byte chunks (kiln/chunks.cuh, the default) beside
# the forms of bench/prototype_small_kernels.py (FORMS, default "pairs fast
# fill": `_pairs` the form before, `_fast` chunks with no fallback, `_fill`
# the dQ accumulator's zeros by 16-byte chunks too), each kernel's GPU time by
# bench/probe_backward_kernels.py, after checks of the default against
# float64 (CHECKS=full: every example at D = 96 and 128, fp16, decode and
# verify steps, and the sanitizers). On the .device/ of
#   VARIANTS="plain causal" ABLATIONS=" " bash bench/prepare-attention.sh build "64 128"
# with the prototypes' specs added:
#   FORMS="..." bash bench/device-run-small-kernels.sh prepare
set -u
if [ "${1:-}" = prepare ]; then
  set -e
  for v in plain causal; do
    for hd in 64 128; do
      for f in ${FORMS:-pairs fast fill}; do
        python3 bench/prototype_small_kernels.py .device/specs/${v}_hd${hd}_bwd.cubin.json $f \
          .device/specs/${v}_hd${hd}_${f}_bwd.cubin.json
        cp .device/specs/${v}_hd${hd}.cubin.json .device/specs/${v}_hd${hd}_${f}.cubin.json
      done
    done
  done
  exit 0
fi
. bench/device-env.sh
if [ "${1:-}" = ncu ]; then
  # Nsight Compute on the preprocess and dQ conversion kernels of plain's
  # D = 128 backward, compiled and as `_pairs` (bench/probe_small_kernels_ncu.py).
  ncu --clock-control none --kernel-name "regex:preprocess|dq_convert" --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats \
    --section Occupancy --section LaunchStats python3 bench/probe_small_kernels_ncu.py --lib "$LIB" \
    --specs .device/specs plain_hd128_bwd plain_hd128_pairs_bwd > "$OUT/small-kernels-ncu.txt" 2>&1
  echo "ncu rc=$?"
  grep -E "^  [a-z_]+_bwd_|ran$|Duration|DRAM Throughput|Memory Throughput|L1/TEX Hit|Mem Busy|Max Bandwidth|Registers Per|Achieved Occ|Stall Long|Stall LG|Warp Cycles Per Issued|L1: Wavefronts|Wavefronts Shared Excessive" \
    "$OUT/small-kernels-ncu.txt" | sed 's/  */ /g' | head -80
  exit 0
fi
{
  for hd in 64 128; do
    run_check "plain hd$hd" examples/plain.mlir --backend cuda --backward --head-dim $hd --seqlen 333 --seqlen-kv 517 --heads 3
    run_check "causal hd$hd 2000x16x3" examples/causal.mlir --backend cuda --backward --head-dim $hd --seqlen 2000 --heads 16 --batch 3
    run_check "plain hd$hd pad 8 fp16" examples/plain.mlir --backend cuda --backward --head-dim $hd --seqlen 200 --heads 2 --pad 8 --dtype fp16
  done
  if [ "${CHECKS:-}" = full ]; then
    check_examples chunks "96 128"
    run_check "gqa decode 1 x 4096" examples/gqa_decode.mlir --variant gqa4_decode --backend cuda --head-dim 128 \
      --heads 32 --batch 2 --seqlen 1 --seqlen-kv 4096
    run_check "gqa decode 5 x 3000" examples/gqa_decode.mlir --variant gqa4_decode --backend cuda --head-dim 64 \
      --heads 8 --seqlen 5 --seqlen-kv 3000
    run_check "tree verify 32 drafts" examples/tree_verify.mlir --backend cuda --head-dim 128 --heads 32 --batch 2 \
      --seqlen 32 --seqlen-kv 4096
    run_check "plain hd256" examples/plain.mlir --backend cuda --backward --head-dim 256 --seqlen 300 --heads 2
    run_check "causal hd80 (by pairs)" examples/causal.mlir --backend cuda --backward --head-dim 80 --seqlen 333 --seqlen-kv 517 --heads 3
  fi
} > "$OUT/checks.txt" 2>&1
summarize_checks "$OUT/checks.txt"
if [ "${CHECKS:-}" = full ]; then
  sanitize "plain hd128" examples/plain.mlir --backend cuda --backward --head-dim 128 --seqlen 300 --heads 2 \
    > "$OUT/sanitize.txt" 2>&1
  sanitize "plain hd80" examples/plain.mlir --backend cuda --backward --head-dim 80 --seqlen 200 --heads 2 \
    >> "$OUT/sanitize.txt" 2>&1
  cat "$OUT/sanitize.txt"
fi
python3 bench/probe_backward_kernels.py --lib "$LIB" --specs .device/specs --hdims 64,128 --seqlens 2048 \
  --variants plain,causal --suffixes "$(printf "_%s," ${FORMS:-pairs fast fill})" > "$OUT/small-kernels.txt" 2>&1
echo "probe rc=$?"
grep -v Warning "$OUT/small-kernels.txt" | grep -E "==|sum|gradients|preprocess|convert|Memset|dot_do|dkdv" | cut -c1-110
