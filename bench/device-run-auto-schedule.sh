#!/usr/bin/env bash
# One device call for the backward's auto schedule (the atomic one at 128
# keys per dK/dV CTA where attn-choose-tiles marks the op: D = 128 on sm_90a):
#   check    - every example's default backward at D = 64 and 128 against
#              float64 (D = 128: the atomic schedule), GQA, varlen, dropout,
#              capture gradients, fp16, Lq = 1 and Lq > Lk at D = 128, the
#              two-kernel schedule's bit-identical reruns at D = 128;
#              memcheck, racecheck, synccheck on causal softcap at D = 128;
#   variants - kiln run --repeats timings of the backward, auto next to
#              --bwd-schedule two-kernel, at D = 128 for the examples with
#              mods, dropout, capture gradients, block-sparse lists, GQA,
#              sliding window and varlen (the rows bench_backward.py lacks);
#   bench    - bench_backward.py twice (specs <v>_hd<D>_bwd = auto and
#              <v>_hd<D>_bwd_twokernel).
#   bash bench/device-run-auto-schedule.sh check|variants|bench|all [hdims] [seqlens]
set -u
MODE=${1:-all}
HDIMS=${2:-64,128}
SEQS=${3:-2048,4096,8192,16384}
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = all ]; then
  {
    check_examples auto "64 128"
    for case in "causal|--dtype fp16" "causal|--seqlen 1 --seqlen-kv 700" "causal|--seqlen-kv 200" \
                "causal|--dropout 0.2" "alibi|--dropout 0.2" "alibi|--capture-gradients" \
                "causal|--bwd-schedule two-kernel" "alibi|--deterministic-capture-gradients"; do
      ex=${case%%|*}; extra=${case#*|}
      echo "== $ex hd128 auto $extra"
      timeout 120 $KILN run examples/$ex.mlir --backend cuda --backward --head-dim 128 --seqlen 1000 \
        --heads 3 --check $extra 2>&1 | grep -E "rel L2|PASS|FAIL|rror|differ|identical|reruns|backward \("
    done
    echo "== varlen_causal hd128 auto"
    timeout 120 $KILN run examples/varlen_causal.mlir --backend cuda --backward --heads 8 \
      --seqlens 40,700,3,1000,129 --check 2>&1 | grep -E "rel L2|PASS|FAIL|rror"
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  sanitize "auto hd128" examples/causal_softcap.mlir --backend cuda --backward --head-dim 128 --seqlen 300 \
    --seqlen-kv 517 --heads 2 | tee "$OUT/sanitize.txt"
fi
if [ "$MODE" = variants ] || [ "$MODE" = all ]; then
  {
    for case in "softcap|" "causal_softcap|" "alibi|" "document_mask|" "causal|--dropout 0.1" \
                "alibi|--capture-gradients" "block_sparse_document|--block-density 0.3" \
                "gqa_causal|" "sliding_window|" "varlen_causal|--varlen"; do
      ex=${case%%|*}; extra=${case#*|}
      heads=16; [ $ex = gqa_causal ] && heads=32
      for sched in auto two-kernel; do
        echo -n "$ex hd128 N4096 $extra $sched: "
        timeout 120 $KILN run examples/$ex.mlir --backend cuda --backward --bwd-schedule $sched --head-dim 128 \
          --seqlen 4096 --batch 4 --heads $heads --repeats 20 $extra 2>&1 |
          grep -iE "backward \(|timed 20 backward" | sed 's/ *timed 20 backward launches://; s/, NVRTC.*//' | tr '\n' ' '; echo
      done
    done
  } | tee "$OUT/variants.txt"
fi
if [ "$MODE" = bench ] || [ "$MODE" = all ]; then
  for r in 1; do
    timeout 400 python3 bench/bench_backward.py --lib "$LIB" --specs .device/specs \
      --hdims "$HDIMS" --seqlens "$SEQS" --rounds 3 > "$OUT/bench_backward_$r.txt" 2>&1
    cp "$OUT/bench_backward.json" "$OUT/bench_backward_$r.json" 2>/dev/null
    echo "bench $r rc=$?"
    tail -n 17 "$OUT/bench_backward_$r.txt"
  done
fi
