#!/usr/bin/env bash
# One device call for tile-reassociate-low-rank (the mods' per-row and
# per-column terms combined before per-element ones), on the .device/ of
# `ABLATION_HDIMS="64 128" bash bench/prepare-attention.sh build "64 128"`:
#   check - every example's forward + backward against float64 at D = 64 and
#           128 (the pass changes the mods' and the backward's arithmetic),
#           ALiBi with its slopes' gradients, fp16, a decode step and the
#           ablation; memcheck, racecheck, synccheck on ALiBi's backward;
#   bench - bench_attention.py with the `noreassoc` specs
#           (--no-reassociate-low-rank) beside the defaults.
#   bash bench/device-run-reassociate.sh check|bench|all [hdims] [seqlens] [variants]
set -u
MODE=${1:-all}
HDIMS=${2:-64,128}
SEQS=${3:-2048,8192}
VARS=${4:-alibi,softcap,plain,causal}
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = all ]; then
  {
    check_examples default "64 128"
    for case in "--capture-gradients" "--dtype fp16" "--seqlen 1 --seqlen-kv 3000" "--no-reassociate-low-rank"; do
      echo "== alibi hd128 $case"
      timeout 120 $KILN run examples/alibi.mlir --backend cuda --backward --head-dim 128 --heads 4 \
        --seqlen 333 --seqlen-kv 517 --check $case 2>&1 | grep -E "rel L2|PASS|FAIL|rror"
    done
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  sanitize "alibi backward" examples/alibi.mlir --backend cuda --backward --head-dim 64 --seqlen 300 \
    --seqlen-kv 517 --heads 2 | tee "$OUT/sanitize.txt"
fi
if [ "$MODE" = bench ] || [ "$MODE" = all ]; then
  BUDGET=${BUDGET:-300} bench_ablations reassociate noreassoc --backward --hdims "$HDIMS" --seqlens "$SEQS" --variants "$VARS"
fi
