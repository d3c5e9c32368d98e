#!/usr/bin/env bash
# Second device call for static-max (2026-11-29), after the SFU rule
# (static-max-flop-per-sfu: not at D = 64 on sm_90a): the forward of plain,
# softcap and causal softcap at D = 128 and 256 with the `nostatic` ablation
# beside the defaults; softcap's D = 256 forward + backward checked against
# float64 first. On the .device/ of
#   VARIANTS="plain softcap causal_softcap" ABLATIONS="nostatic" \
#     ABLATION_HDIMS="128 256" bash bench/prepare-attention.sh build "128 256"
set -u
. bench/device-env.sh
for v in softcap causal_softcap; do
  run_check "$v hd256" examples/$v.mlir --backend cuda --backward --head-dim 256 --heads 3 \
    --seqlen 333 --seqlen-kv 517
done 2>&1 | tee "$OUT/static-max-2-checks.txt"
BACKWARD=0 BUDGET=${BUDGET:-270} bash bench/device-run-attention.sh static2 "128,256" 4096,16384 \
  plain,softcap,causal_softcap nostatic
python3 bench/ablation_ratios.py "$OUT/attention-static2.json" nostatic
