#!/usr/bin/env bash
# One device call for tile-column-bounds' one-sided merge (the causal
# diagonal and the partial block as one compare of the column index against
# a per-row bound, in KV loops carrying at most 128 x 128 accumulator
# elements), on the .device/ of
#   VARIANTS="plain causal causal_softcap gqa_causal" ABLATIONS="noos" \
#     ABLATION_HDIMS="64 128" bash bench/prepare-attention.sh build "64 128"
#   check - every example's forward + backward against float64 at D = 64 and
#           128 (Lq = 333, Lk = 517: the diagonal and a partial block), causal
#           top-left and bottom-right at Lq != Lk, fp16, many tiles, GQA;
#           racecheck on causal's forward on the short (128-row) kernel;
#   bench - bench_attention.py (forward + backward) with the `noos` specs
#           (--one-sided-bounds-elements 0) beside the defaults.
#   bash bench/device-run-one-sided-bounds.sh check|bench|both [seqlens] [variants] [hdims]
# Environment: BUDGET (the bench's).
set -u
MODE=$1
SEQS=${2:-2048,4096,16384}
VARS=${3:-plain,causal,causal_softcap,gqa_causal}
HDIMS=${4:-64,128}
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = both ]; then
  {
    check_examples os "64 128"
    for hd in 64 128; do
      for case in "--seqlen 700 --seqlen-kv 300" "--seqlen 300 --seqlen-kv 700" "--dtype fp16 --seqlen 1000" \
          "--seqlen 2000 --heads 16 --batch 3"; do
        run_check "causal hd$hd $case" examples/causal.mlir --backend cuda --backward --head-dim $hd $case
      done
      run_check "causal_softcap hd$hd 4000" examples/causal_softcap.mlir --backend cuda --head-dim $hd --seqlen 4000 --heads 4
    done
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  sanitize "causal hd64 short kernel" examples/causal.mlir --backend cuda --head-dim 64 --seqlen 1000 \
    --seqlen-kv 1100 --heads 4 | tee "$OUT/sanitize.txt"
fi
if [ "$MODE" = bench ] || [ "$MODE" = both ]; then
  bench_ablations os noos --backward --hdims "$HDIMS" --seqlens "$SEQS" --variants "$VARS"
fi
