#!/usr/bin/env bash
# One device call for convert-attn-to-tile-backward's rotate-query-blocks
# (the atomic schedule's dK/dV programs each start at their own key block's
# Q block), on the .device/ of
# `VARIANTS="plain causal softcap alibi" ABLATIONS="norot"
#  ABLATION_HDIMS=128 bash bench/prepare-attention.sh build 128`:
#   check - every example's forward + backward against float64 at D = 128
#           (the atomic schedule; Lq = 333: a partial last Q block),
#           fp16, Lq = 1, many query blocks; memcheck, racecheck and
#           synccheck on a plain backward;
#   bench - bench_attention.py (forward + backward) with the `norot` specs
#           (--no-rotate-query-blocks) beside the defaults.
#   bash bench/device-run-rotate.sh check|bench|both [seqlens] [variants]
set -u
MODE=$1
SEQS=${2:-4096,16384}
VARS=${3:-plain,causal,softcap,alibi}
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = both ]; then
  {
    check_examples rotate "128"
    for case in "--dtype fp16" "--seqlen 1 --seqlen-kv 700" "--seqlen 2000 --heads 16 --batch 3"; do
      echo "== plain hd128 $case"
      timeout 90 $KILN run examples/plain.mlir --backend cuda --backward --head-dim 128 $case --check 2>&1 | grep -E "rel L2|PASS|FAIL|rror"
    done
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  sanitize "plain hd128 backward" examples/plain.mlir --backend cuda --backward --head-dim 128 --seqlen 333 --seqlen-kv 517 --heads 2 | tee "$OUT/sanitize.txt"
fi
if [ "$MODE" = bench ] || [ "$MODE" = both ]; then
  bench_ablations rotate norot --backward --hdims 128 --seqlens "$SEQS" --variants "$VARS"
fi
