#!/usr/bin/env bash
# One device call for tile-row-terms-after-max (a score's per-row terms added
# to the rows' maxima, not to every element) and tile-hoist-invariant-reads
# (a mod's capture reads out of the KV loops), on the .device/ of
#   VARIANTS=alibi ABLATIONS="norowterms nohoist" ABLATION_HDIMS="64 128" \
#     bash bench/prepare-attention.sh build "64 128"
#   check - ALiBi's forward + backward against float64 at D = 64 and 128
#           (short and long rows, Lq != Lk, fp16, its slopes' gradients, a
#           decode step, split KV, the ablations), causal and softcap
#           alongside; memcheck, racecheck, synccheck on ALiBi's backward;
#   bench - bench_attention.py's ALiBi with the `norowterms` and `nohoist`
#           specs beside the defaults, forward + backward.
#   bash bench/device-run-row-terms.sh check|bench|all [hdims] [seqlens]
set -u
MODE=${1:-all}
HDIMS=${2:-64,128}
SEQS=${3:-2048,4096,16384}
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = all ]; then
  {
    for hd in 64 128; do
      A="examples/alibi.mlir --backend cuda --backward --head-dim $hd"
      run_check "alibi hd$hd Lq<Lk" $A --heads 4 --seqlen 333 --seqlen-kv 517
      run_check "alibi hd$hd Lq>Lk fp16" $A --heads 4 --seqlen 700 --seqlen-kv 300 --dtype fp16
      run_check "alibi hd$hd many tiles" $A --heads 16 --batch 3 --seqlen 2000
      run_check "alibi hd$hd slopes' gradients" $A --heads 4 --seqlen 333 --capture-gradients
      run_check "alibi hd$hd no row terms" $A --heads 4 --seqlen 333 --no-row-terms-after-max
      run_check "alibi hd$hd no hoist" $A --heads 4 --seqlen 333 --no-hoist-invariant-reads
      run_check "alibi hd$hd decode" examples/alibi.mlir --backend cuda --head-dim $hd --batch 2 --heads 4 --seqlen 1 --seqlen-kv 3000
      run_check "alibi hd$hd 2 splits" examples/alibi.mlir --backend cuda --head-dim $hd --heads 4 --seqlen 300 --seqlen-kv 6000 --kv-splits 2
      run_check "softcap hd$hd" examples/softcap.mlir --backend cuda --backward --head-dim $hd --heads 4 --seqlen 333 --seqlen-kv 517
      run_check "causal hd$hd" examples/causal.mlir --backend cuda --backward --head-dim $hd --heads 4 --seqlen 333 --seqlen-kv 517
    done
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  sanitize "alibi backward" examples/alibi.mlir --backend cuda --backward --head-dim 64 --seqlen 300 \
    --seqlen-kv 517 --heads 2 | tee "$OUT/sanitize.txt"
fi
if [ "$MODE" = bench ] || [ "$MODE" = all ]; then
  ROUNDS=${ROUNDS:-3} BUDGET=${BUDGET:-330} bench_ablations rowterms norowterms,nohoist --backward \
    --hdims "$HDIMS" --seqlens "$SEQS" --variants alibi 2>&1 | tail -24
fi
