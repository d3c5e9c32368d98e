#!/usr/bin/env bash
# One device call for the wgmma descriptors built as a tile's base plus a
# constant per k16 step (lib/kiln/wgmma.cuh wgmma_desc_from). The change is in
# the device library, which the runtime embeds, so it has no ablation spec:
# .device/libkiln_runtime.so (new) and .device/old/libkiln_runtime.so (the
# previous library, built from the parent commit) run the same specs, in
# turns, on one warm GPU, each beside the peers in its own process.
#   bash bench/device-run-desc-base.sh check|bench|both [seqlens] [variants] [hdims] [order]
# order: "new old" (default) or "old new"; Environment: BUDGET per run.
set -u
MODE=$1
SEQS=${2:-4096,16384}
VARS=${3:-plain,causal,softcap,alibi}
HDIMS=${4:-64,128}
ORDER=${5:-new old}
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = both ]; then
  check_atomic_backward db "${CHECK_HDIMS:-64 96 128}"
fi
if [ "$MODE" = bench ] || [ "$MODE" = both ]; then
  for which in $ORDER; do
    lib=$LIB; [ $which = old ] && lib=$PWD/.device/old/libkiln_runtime.so
    python3 bench/bench_attention.py --lib "$lib" --specs .device/specs --backward \
      --rounds "${ROUNDS:-3}" --budget "${BUDGET:-150}" --hdims "$HDIMS" --seqlens "$SEQS" \
      --variants "$VARS" --json "$OUT/db-$which.json" > "$OUT/db-$which-bench.txt" 2>&1
    echo "== $which rc=$?"
    sed -n '/^TFLOP\/s of visible pairs/,$p' "$OUT/db-$which-bench.txt"
  done
fi
