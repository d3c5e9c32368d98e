#!/usr/bin/env bash
# One device call for convert-tile-to-tgpu philox-lane-pairs (the dK/dV
# kernel's dropout bits at one Philox call per 8 elements, shared by the
# lanes of keys r and r ^ 1 through a shuffle) and for the forward's
# --producer-bits-share, on a .device/ with kiln.gz, libkiln_runtime.so and
# specs/ of
#   bash bench/device-run-philox-lane-pairs.sh prepare   (here, no GPU)
# plain and causal at D = 64, 128: those of device-run-producer-bits.sh
# (<v>_hd<D>[_drop|_drop_pb][_bwd] and the forwards _drop_ps3, _drop_ps4)
# and _drop_nolp_bwd with --no-philox-lane-pairs (the ablation). On the
# device:
#   - every example's forward + backward with dropout (both schedules),
#     plain and causal at D = 64 .. 256 in bf16 and fp16, Lq > Lk over many
#     CTAs, a GQA decode step, against float64 with the same mask; the
#     ablation and the producer's share of 3 on some of them;
#   - memcheck, racecheck and synccheck on a dropout forward + backward;
#   - bench/bench_dropout.py (its bits against python/kiln/dropout.py, bit
#     for bit, and TFLOP/s of every spec beside FlashAttention-2).
#   bash bench/device-run-philox-lane-pairs.sh [prepare]
set -u
if [ "${1:-}" = prepare ]; then
  set -e
  # The producer-bits call's specs (base, _drop, _drop_pb, _drop_ps3/4),
  # then the ablation's backward.
  bash bench/device-run-producer-bits.sh prepare > /dev/null
  for hd in 64 128; do
    for v in plain causal; do
      build/bin/kiln compile examples/$v.mlir --head-dim $hd --dropout 0.1 --backward --no-philox-lane-pairs \
        -o .device/specs/${v}_hd${hd}_drop_nolp_bwd.cubin > /dev/null &
    done
    wait
  done
  rm -f .device/specs/*.cubin
  ls .device/specs | wc -l
  exit 0
fi
. bench/device-env.sh > /dev/null
{
  dropout_checks
  run_check "plain hd64 no-keys-by-queries" examples/plain.mlir --backend cuda --dropout 0.3 --backward \
    --head-dim 64 --no-keys-by-queries --seqlen 300 --heads 2
  run_check "causal hd64 mma.sync keys-by-queries" examples/causal.mlir --backend cuda --no-warpgroup-mma --dropout 0.3 \
    --backward --head-dim 64 --keys-by-queries --seqlen 300 --seqlen-kv 500 --heads 2
  for hd in 64 128; do
    for ex in plain causal; do
      run_check "$ex hd$hd no lane pairs" examples/$ex.mlir --backend cuda --dropout 0.1 --backward --head-dim $hd \
        --no-philox-lane-pairs --seqlen 300 --seqlen-kv 700 --heads 2
      run_check "$ex hd$hd producer share 3" examples/$ex.mlir --backend cuda --dropout 0.1 --backward \
        --head-dim $hd --producer-bits-share 3 --seqlen 2000 --seqlen-kv 900 --heads 16 --batch 3
    done
  done
  run_check "gqa4_decode" examples/gqa_decode.mlir --variant gqa4_decode --backend cuda --dropout 0.2 --heads 8 \
    --seqlen 1 --seqlen-kv 5000
} > "$OUT/checks.txt" 2>&1
summarize_checks "$OUT/checks.txt"
sanitize "causal_softcap dropout" examples/causal_softcap.mlir --backend cuda --dropout 0.2 --backward \
  --seqlen 200 --heads 2 > "$OUT/sanitize.txt" 2>&1
cat "$OUT/sanitize.txt"
timeout 330 python3 bench/bench_dropout.py --lib "$LIB" --specs .device/specs > "$OUT/bench-dropout.txt" 2>&1
echo "bench rc=$?"
tail -9 "$OUT/bench-dropout.txt"
