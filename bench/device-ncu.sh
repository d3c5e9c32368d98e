#!/usr/bin/env bash
# One device call: Nsight Compute on one kernel of a `kiln run`, once per
# flag set, so that an ablation's profile sits beside the default's. Clocks
# are left alone (--clock-control none). Unpacks .device/ like the other
# device scripts (bench/prepare-device.sh). With --source first, it keeps
# the per-instruction (SASS) stall samples as CSV in $OUT instead, for
# reading off the device, and summarises them (bench/ncu_source_summary.py).
#   bash bench/device-ncu.sh [--source] KERNEL-REGEX "RUN-ARGS" ["FLAGS-A" "FLAGS-B" ...]
# NCU_SECTIONS="--section X ..." replaces the default sections (e.g. the
# memory workload's tables, to read shared-memory traffic per pipe).
# e.g. bash bench/device-ncu.sh dkdv "examples/plain.mlir --backward --head-dim 128 --seqlen 4096 --heads 16" "" "--no-keys-by-queries"
set -u
SOURCE=0
[ "${1:-}" = --source ] && SOURCE=1 && shift
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
  echo "== $flags"
  if [ $SOURCE = 1 ]; then
    ncu --clock-control none --kernel-name "regex:$KERNEL" --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section SourceCounters \
      -o /tmp/ncu-$tag -f /tmp/kiln-bin/kiln run $ARGS --backend cuda $flags > /dev/null 2>&1
    ncu -i /tmp/ncu-$tag.ncu-rep --page source --csv --print-source sass > "$OUT/ncu-source-$tag.csv" 2>&1
    ncu -i /tmp/ncu-$tag.ncu-rep --page details > "$OUT/ncu-details-$tag.txt" 2>&1
    grep -E "Duration|Compute \(SM\) Throughput|Warp Cycles Per Issued" "$OUT/ncu-details-$tag.txt" | sed 's/  */ /g'
    python3 bench/ncu_source_summary.py "$OUT/ncu-source-$tag.csv" --by-count 6 | head -20
    continue
  fi
  ncu --clock-control none --kernel-name "regex:$KERNEL" --launch-count 1 \
    ${NCU_SECTIONS:---section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section InstructionStats --section Occupancy --section ComputeWorkloadAnalysis} \
    --print-details all /tmp/kiln-bin/kiln run $ARGS --backend cuda $flags > "$OUT/ncu-$tag.txt" 2>&1
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Executed Ipc Active|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Achieved Occupancy|Registers Per|Executed Instructions  |Stall|Theoretical Occupancy" \
    "$OUT/ncu-$tag.txt" | sed 's/  */ /g' | head -24
done
