#!/usr/bin/env bash
# One device call for tgpu-warp-specialize producer-bits (the dropout's keep
# bits drawn by the producer warpgroup into a slot beside K, read by the
# consumers), on a .device/ with kiln.gz, libkiln_runtime.so and specs/ of
#   bash bench/device-run-producer-bits.sh prepare   (here, no GPU)
# plain and causal at D = 64, 128: <v>_hd<D>[_drop|_drop_pb][_bwd], the _drop
# ones with --dropout 0.1, _drop_pb with --producer-bits too, and forwards
# _drop_ps3 and _drop_ps4 with --producer-bits-share 3 and 4. (Measured
# 2026-11-28 while producer-bits was the default: there _drop was the
# producer's draw and the ablation, then named _drop_cb, the consumers'.)
# On the device:
#   - every example's forward + backward with dropout (both schedules), plain
#     and causal at D = 64 .. 256 in bf16 and fp16, Lq > Lk, a GQA decode
#     step, against float64 with the same mask; the forward + backward of the
#     ablation on two of them;
#   - memcheck, racecheck and synccheck on a dropout forward + backward;
#   - bench/bench_dropout.py (its bits against python/kiln/dropout.py, bit
#     for bit, and TFLOP/s with producer bits, consumer bits, no dropout,
#     and FlashAttention-2 with and without dropout).
#   bash bench/device-run-producer-bits.sh [prepare]
set -u
if [ "${1:-}" = prepare ]; then
  set -e
  D=.device K=build/bin/kiln
  rm -rf $D && mkdir -p $D/specs
  strip -o $D/kiln build/bin/kiln && gzip -f $D/kiln
  cp build/lib/libkiln_runtime.so $D/
  for hd in 64 128; do
    for v in plain causal; do
      for bwd in "" --backward; do
        s=; [ -n "$bwd" ] && s=_bwd
        $K compile examples/$v.mlir --head-dim $hd $bwd -o $D/specs/${v}_hd$hd$s.cubin > /dev/null &
        $K compile examples/$v.mlir --head-dim $hd --dropout 0.1 $bwd -o $D/specs/${v}_hd${hd}_drop$s.cubin > /dev/null &
        $K compile examples/$v.mlir --head-dim $hd --dropout 0.1 --producer-bits $bwd \
          -o $D/specs/${v}_hd${hd}_drop_pb$s.cubin > /dev/null &
        wait
      done
      for share in 3 4; do
        $K compile examples/$v.mlir --head-dim $hd --dropout 0.1 --producer-bits-share $share \
          -o $D/specs/${v}_hd${hd}_drop_ps$share.cubin > /dev/null &
      done
      wait
    done
  done
  rm -f $D/specs/*.cubin
  ls $D/specs | wc -l
  exit 0
fi
. bench/device-env.sh > /dev/null
check() { # label args...
  echo "== $1"; shift
  timeout 45 $KILN run "$@" --check 2>&1 | grep -E "rel L2|PASS|FAIL|rror|differ"
}
{
  dropout_checks
  check "plain hd64 no-keys-by-queries" examples/plain.mlir --backend cuda --dropout 0.3 --backward --head-dim 64 \
    --no-keys-by-queries --seqlen 300 --heads 2
  for ex in plain causal; do
    check "$ex hd128 producer bits" examples/$ex.mlir --backend cuda --dropout 0.1 --backward --head-dim 128 \
      --producer-bits --seqlen 300 --seqlen-kv 700 --heads 2
  done
  for hd in 64 128; do
    for ex in plain causal; do
      check "$ex hd$hd producer share 3" examples/$ex.mlir --backend cuda --dropout 0.1 --backward --head-dim $hd \
        --producer-bits-share 3 --seqlen 2000 --seqlen-kv 900 --heads 16 --batch 3
    done
  done
  check "gqa4_decode" examples/gqa_decode.mlir --variant gqa4_decode --backend cuda --dropout 0.2 --heads 8 \
    --seqlen 1 --seqlen-kv 5000
} > "$OUT/checks.txt" 2>&1
echo "checks: $(grep -c '^PASS' "$OUT/checks.txt") PASS, $(grep -cE 'FAIL|rror' "$OUT/checks.txt") FAIL/error, $(grep -c '^==' "$OUT/checks.txt") cases"
grep -B4 -E "FAIL|rror" "$OUT/checks.txt" | head -20
for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool $KILN run examples/causal_softcap.mlir --backend cuda --dropout 0.2 \
    --backward --seqlen 200 --heads 2 --check > "$OUT/$tool.txt" 2>&1
  echo "$tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$tool.txt" | head -1) $(grep -c PASS "$OUT/$tool.txt") PASS"
done
timeout 300 python3 bench/bench_dropout.py --lib "$LIB" --specs .device/specs > "$OUT/bench-dropout.txt" 2>&1
echo "bench rc=$?"
tail -9 "$OUT/bench-dropout.txt"
