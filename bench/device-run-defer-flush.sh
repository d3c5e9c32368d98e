#!/usr/bin/env bash
# One device call for tgpu-bulk-reductions defer-flush (the atomic dK/dV
# kernel's dQ share staged in its step, fenced and added during the next
# one), on the .device/ of
# `VARIANTS="plain causal softcap alibi" ABLATIONS="nodefer"
#  ABLATION_HDIMS="64 128" bash bench/prepare-attention.sh build "64 128"`:
#   check - every example's forward + backward against float64 at D = 64,
#           96 and 128 (Lq = 333: a partial last block; Lq = 1; Lq = 70,
#           a single step per loop; many query blocks), fp16, D = 256,
#           varlen, block-sparse; memcheck, racecheck, synccheck on causal
#           softcap's backward at D = 64 and 128;
#   bench - bench_attention.py (forward + backward) with the `nodefer`
#           specs (--no-defer-flush) beside the defaults.
#   bash bench/device-run-defer-flush.sh check|bench|both [seqlens] [variants] [hdims]
# The same checks and benchmark as bench/device-run-producer-reductions.sh,
# with the `nodefer` specs and the tag `df`.
LABEL=df ABLATION=nodefer exec bash bench/device-run-producer-reductions.sh "$@"
