#!/usr/bin/env bash
# One device call for ordered dQ adds (`--ordered-dq`, tgpu-ordered-adds:
# the atomic backward made deterministic by adding each Q block's dQ shares
# in key-block order), on the .device/ of
#   VARIANTS="plain causal softcap alibi" ABLATIONS="ordered twokernel" \
#     ABLATION_HDIMS="128 64" bash bench/prepare-attention.sh build "128 64"
#   check - every example's forward + backward with --ordered-dq against
#           float64 at D = 64 and 128 (kiln run fails unless two reruns give
#           the same bits), fp16, Lq != Lk both ways, one query, many
#           tiles, dropout, capture gradients (not ordered: f32 atomics),
#           a document mask;
#           memcheck and synccheck on causal's;
#   bench - bench_attention.py (forward + backward) with `ordered` and
#           `twokernel` (the deterministic schedule until now) beside the
#           defaults.
#   bash bench/device-run-ordered-dq.sh check|bench|both [seqlens] [hdims] [variants]
set -u
MODE=$1
SEQS=${2:-2048,4096,16384}
HDIMS=${3:-128,64}
VARS=${4:-plain,causal,softcap,alibi}
. bench/device-env.sh
O=--ordered-dq # on the schedule auto picks: atomic at D = 64 and 128
if [ "$MODE" = check ] || [ "$MODE" = both ]; then
  {
    for ex in plain causal softcap causal_softcap alibi; do
      for hd in 128 64; do
        run_check "$ex hd$hd ordered" examples/$ex.mlir --backend cuda --backward --head-dim $hd --seqlen 700 --seqlen-kv 900 --heads 3 $O
      done
    done
    for case in "--dtype fp16" "--seqlen 1 --seqlen-kv 700" "--seqlen 900 --seqlen-kv 300" "--seqlen 2000 --heads 16 --batch 3" \
        "--dropout 0.2" "--seqlen 64 --seqlen-kv 64"; do
      run_check "causal hd128 ordered $case" examples/causal.mlir --backend cuda --backward --head-dim 128 $O $case
    done
    run_check "alibi hd128 ordered capture gradients" examples/alibi.mlir --backend cuda --backward --head-dim 128 --seqlen 1000 --heads 3 \
      --capture-gradients $O
    run_check "document_mask hd128 ordered" examples/document_mask.mlir --backend cuda --backward --head-dim 128 $O
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  grep -h "reruns" "$OUT/checks.txt" | sort | uniq -c
  sanitize "causal hd128 ordered" examples/causal.mlir --backend cuda --backward --head-dim 128 --seqlen 333 --seqlen-kv 517 --heads 2 $O \
    | tee "$OUT/sanitize.txt"
fi
if [ "$MODE" = bench ] || [ "$MODE" = both ]; then
  bench_ablations ordered ordered,twokernel --backward --hdims "$HDIMS" --seqlens "$SEQS" --variants "$VARS"
fi
