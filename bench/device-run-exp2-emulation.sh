#!/usr/bin/env bash
# Prototype timing (2026-11-28): the forward of plain, causal and softcap at
# D = 64 and 128 beside `emu2` / `emu4` specs, in which 2 or 4 of every 8
# elements of the score tile's exp2 run as a polynomial on the FMA pipe
# (bench/prototype_exp2_emulation.py, applied to the default specs here
# first); then Nsight Compute's pipe utilization of softcap's D = 128 prefill
# kernel for the default and emu2.
set -u
source bench/device-env.sh
BACKWARD=0 BUDGET=${BUDGET:-300} bash bench/device-run-attention.sh emu "64,128" ${SEQS:-4096,16384} \
  ${VARS:-plain,causal,softcap} emu2,emu4
for s in softcap_hd128 softcap_hd128_emu2; do
  echo "== ncu $s"
  timeout 120 ncu --clock-control none --kernel-name "regex:softcap_fwd$" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section InstructionStats --section ComputeWorkloadAnalysis \
    --print-details all python3 bench/ncu_spec.py $LIB .device/specs/$s.cubin.json 4 4096 16 128 > "$OUT/ncu-$s.txt" 2>&1
  grep -E "Duration|Issue Slots Busy|Pipe (Fma|Fmaheavy|Alu|Tensor) Cycles Active|Pipe Xu|Warp Cycles Per Issued|No Eligible" \
    "$OUT/ncu-$s.txt" | sed 's/  */ /g' | head -14
done
