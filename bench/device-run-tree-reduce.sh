#!/usr/bin/env bash
# Prototype timing (prepared 2026-11-28, not yet run), after GPU checks of the
# day's guarded divisions: the forward of plain,
# causal and softcap at D = 64 and 128 beside `tree8` / `tree64` specs, whose
# reduce_rows fold each row's values in 8 chains / as a whole tree
# (bench/prototype_tree_reduce.py, applied here to the default specs) instead
# of one dependent chain of 31 FMNMX or FADD per row slot. On the .device/ of
# `VARIANTS="plain causal softcap" ABLATIONS=" " bash bench/prepare-attention.sh build "64 128"`.
# Predicted (before any run): +1 to +4% at D = 64 and for softcap, within
# ±1% for plain and causal at D = 128 (three consumer warps per scheduler
# hide part of the chains' ~250 cycles per step); tree64 spills at D = 128
# (softcap 36, causal 20 LDL/STL in the build machine's SASS), tree8 less.
set -u
. bench/device-env.sh
# First, the guarded divisions of attn-guard-division (2026-11-28, checked on
# the CPU only so far) on the GPU against float64: mods dividing by positions
# (by 0 at kv = 0 and q = 0) and INT_MIN by -1, forward and backward.
for v in divide_by_positions int_min_by_minus_one; do
  run_check "guarded division $v" test/Transforms/Attn/attn-guard-division.mlir --variant $v \
    --backend cuda --backward --batch 2 --seqlen 70 --seqlen-kv 90 --heads 2
done 2>&1 | tee "$OUT/guard-division-checks.txt"
for spec in .device/specs/{plain,causal,softcap}_hd{64,128}.cubin.json; do
  for c in 8 64; do
    python3 bench/prototype_tree_reduce.py "$spec" "${spec%.cubin.json}_tree$c.cubin.json" $c > /dev/null
  done
done
# ABL adds other ablations prepared beside them (e.g. ABL=tree8,tree64,pp,pingpong
# with ABLATIONS="pp pingpong" at prepare time, for softcap's opt-in schedules).
ABL=${ABL:-tree8,tree64}
BACKWARD=0 BUDGET=${BUDGET:-300} bash bench/device-run-attention.sh tree "64,128" ${SEQS:-4096,16384} \
  ${VARS:-plain,causal,softcap} "$ABL"
python3 bench/ablation_ratios.py "$OUT/attention-tree.json" "$ABL"
