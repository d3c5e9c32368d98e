#!/usr/bin/env bash
# One device call for GQA's dK/dV kernel in one loop per range of Q blocks
# over the group's heads (convert-attn-to-tile-backward group-steps), which
# gives it the TMA producer warpgroup:
#   check - gqa_causal forward + backward against float64 at D = 64, 96,
#           128 (both schedules, Lq != Lk, Lq = 1, fp16, 16 query heads
#           over 4 KV heads), and --no-group-steps; memcheck, racecheck, synccheck on
#           the default and the atomic GQA backward;
#   bench - bench_backward.py --gqa 4 (specs gqa_causal_hd<D>{,_bwd,
#           _bwd_nogroup,_bwd_atomic128}).
#   bash bench/device-run-group-steps.sh check|bench|all [hdims] [seqlens]
set -u
MODE=${1:-all}
HDIMS=${2:-64,128}
SEQS=${3:-2048,4096,8192,16384}
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = all ]; then
  {
    for hd in 64 96 128; do
      for case in "" "--bwd-schedule atomic --key-block 128" "--seqlen 1 --seqlen-kv 700" "--seqlen-kv 200" \
                  "--dtype fp16" "--heads 16 --seqlen 700" "--no-group-steps"; do
        echo "== gqa_causal hd$hd $case"
        timeout 120 $KILN run examples/gqa_causal.mlir --backend cuda --backward --head-dim $hd --heads 8 \
          --seqlen 333 --seqlen-kv 517 --check $case 2>&1 | grep -E "rel L2|PASS|FAIL|rror|reruns"
      done
    done
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  for sched in two-kernel "atomic --key-block 128"; do
    # ($sched unquoted: "atomic --key-block 128" is three arguments.)
    sanitize "gqa $sched" examples/gqa_causal.mlir --backend cuda --backward --bwd-schedule $sched --head-dim 128 \
      --seqlen 300 --seqlen-kv 517 --heads 8
  done | tee "$OUT/sanitize.txt"
fi
if [ "$MODE" = bench ] || [ "$MODE" = all ]; then
  timeout 420 python3 bench/bench_backward.py --lib "$LIB" --specs .device/specs --gqa 4 \
    --hdims "$HDIMS" --seqlens "$SEQS" --rounds 3 > "$OUT/bench_backward_gqa.txt" 2>&1
  echo "bench rc=$?"
  tail -n 9 "$OUT/bench_backward_gqa.txt"
fi
