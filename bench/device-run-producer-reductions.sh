#!/usr/bin/env bash
# One device call for tgpu-bulk-reductions producer-reductions (the atomic
# dK/dV kernel's consumers stage each step's dQ share into two buffers by
# turns; the producer's warp issues the bulk reductions), on the .device/ of
# `VARIANTS="plain causal softcap alibi" ABLATIONS="noprod"
#  ABLATION_HDIMS="64 128" bash bench/prepare-attention.sh build "64 128"`:
#   check - every example's forward + backward against float64 at D = 64,
#           96 and 128 (Lq = 333: a partial last block; Lq = 1; Lq = 70,
#           a single step per loop; many query blocks), fp16, D = 256,
#           varlen, block-sparse; memcheck, racecheck, synccheck on causal
#           softcap's backward at D = 64 and 128;
#   bench - bench_attention.py (forward + backward) with the `noprod`
#           specs (--no-producer-reductions) beside the defaults, or those
#           named by ABLATION (`nodefer`: --no-defer-flush, the consumers'
#           fence and arrival in the step that staged the share).
#   bash bench/device-run-producer-reductions.sh check|bench|both [seqlens] [variants] [hdims]
# Environment: CHECK_HDIMS (default "64 96 128"), ABLATION (default noprod),
# LABEL (the checks' and the JSON's tag, default pr).
set -u
MODE=$1
SEQS=${2:-4096,16384}
VARS=${3:-plain,causal,softcap,alibi}
HDIMS=${4:-64,128}
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = both ]; then
  check_atomic_backward "${LABEL:-pr}" "${CHECK_HDIMS:-64 96 128}"
fi
if [ "$MODE" = bench ] || [ "$MODE" = both ]; then
  bench_ablations "${LABEL:-pr}" "${ABLATION:-noprod}" --backward --hdims "$HDIMS" --seqlens "$SEQS" --variants "$VARS"
fi
