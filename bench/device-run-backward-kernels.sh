#!/usr/bin/env bash
# One device call: bench/probe_backward_kernels.py, each backward kernel's
# GPU time, Kiln's and cuDNN's, at D = 64 and 128, N = 2k and 16k, plain and
# causal. On the .device/ of
#   VARIANTS="plain causal" ABLATIONS=" " bash bench/prepare-attention.sh build "64 128"
# SUFFIXES names extra spec suffixes (ablations) to probe beside the default.
set -u
. bench/device-env.sh
python3 bench/probe_backward_kernels.py --lib "$LIB" --specs .device/specs --hdims 64,128 \
  --seqlens 2048,16384 --variants plain,causal --suffixes "${SUFFIXES:-}" > "$OUT/backward-kernels.txt" 2>&1
echo "probe rc=$?"
grep -v Warning "$OUT/backward-kernels.txt" | cut -c1-120
