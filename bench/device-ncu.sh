#!/usr/bin/env bash
# One device call: Nsight Compute on one kernel of a `kiln run`, once per
# flag set, so that an ablation's profile sits beside the default's. Clocks
# are left alone (--clock-control none). Unpacks .device/ like the other
# device scripts (bench/prepare-device.sh).
#   bash bench/device-ncu.sh KERNEL-REGEX "RUN-ARGS" ["FLAGS-A" "FLAGS-B" ...]
# e.g. bash bench/device-ncu.sh dkdv "examples/plain.mlir --backward --head-dim 128 --seqlen 4096 --heads 16" "" "--no-keys-by-queries"
set -u
KERNEL=$1 ARGS=$2
shift 2
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT" /tmp/kiln-bin
gunzip -c .device/kiln.gz > /tmp/kiln-bin/kiln && chmod +x /tmp/kiln-bin/kiln
export KILN_CACHE_DIR=/tmp/kiln-cache
[ $# -eq 0 ] && set -- ""
for flags in "$@"; do
  tag=$(echo "default $flags" | tr -c 'a-zA-Z0-9\n' '_' | sed 's/_*$//')
  # The first run fills the kernel cache, so the profiled one does not
  # include NVRTC.
  /tmp/kiln-bin/kiln run $ARGS --backend cuda $flags > /dev/null 2>&1
  ncu --clock-control none --kernel-name "regex:$KERNEL" --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section InstructionStats --section Occupancy --section ComputeWorkloadAnalysis \
    --print-details all /tmp/kiln-bin/kiln run $ARGS --backend cuda $flags > "$OUT/ncu-$tag.txt" 2>&1
  echo "== $flags"
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Executed Ipc Active|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Achieved Occupancy|Registers Per|Executed Instructions  |Stall|Theoretical Occupancy" \
    "$OUT/ncu-$tag.txt" | sed 's/  */ /g' | head -24
done
