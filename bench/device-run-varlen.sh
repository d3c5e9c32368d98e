#!/usr/bin/env bash
# One device call for varlen packed batches (issue 12), after a .device/
# with kiln.gz and libkiln_runtime.so (bench/prepare-device.sh):
#   - every example's forward + backward on a packed batch of sequences of
#     mixed lengths (0 and 1 among them, keys != queries), both backward
#     schedules, against float64; D = 128 / 256, fp16, GQA, dropout,
#     capture gradients, the cp.async schedule (--no-warp-specialize);
#   - memcheck, racecheck and synccheck on a varlen forward + backward;
#   - timing: 16 sequences of mixed lengths in one launch against the sum of
#     the same kernels run on each sequence alone (the padding-free ideal),
#     forward and backward, plain and causal, D = 128, 16 heads.
# Details go to $OUT; a short summary prints last.
set -u
. bench/device-env.sh
LENS=100,37,0,256,1,513,64,129
LENS_KV=70,40,3,256,9,513,200,129
pick='rel L2|PASS|FAIL|error|differ'
{
  for ex in plain causal softcap causal_softcap sliding_window alibi gqa_causal; do
    heads=3; [ $ex = gqa_causal ] && heads=8
    for sched in two-kernel atomic; do
      echo "== $ex $sched"
      $KILN run examples/$ex.mlir --backend cuda --seqlens $LENS --seqlens-kv $LENS_KV --heads $heads \
        --backward --bwd-schedule $sched --check 2>&1 | grep -E "$pick"
    done
  done
  for opts in "--head-dim 128" "--head-dim 256" "--head-dim 128 --dtype fp16" "--no-warp-specialize" \
      "--dropout 0.2" "--head-dim 128 --no-keys-by-queries"; do
    echo "== causal $opts"
    $KILN run examples/causal.mlir --backend cuda --seqlens $LENS --seqlens-kv $LENS_KV --heads 2 --backward \
      --check $opts 2>&1 | grep -E "$pick"
  done
  for page in 16 64; do
    echo "== gqa_decode varlen over ${page}-key pages (chunked prefill)"
    $KILN run examples/gqa_decode.mlir --variant gqa4_decode --backend cuda --seqlens 70,1,0,200,333 \
      --seqlens-kv 300,5,64,150,2000 --page-size $page --heads 8 --check 2>&1 | grep -E "$pick"
  done
  echo "== alibi --capture-gradients"
  $KILN run examples/alibi.mlir --backend cuda --seqlens $LENS --heads 4 --backward --capture-gradients \
    --check 2>&1 | grep -E "$pick"
} > "$OUT/varlen-check.txt" 2>&1

{
  for tool in memcheck racecheck synccheck; do
    echo "== $tool"
    compute-sanitizer --tool $tool --error-exitcode 9 $KILN run examples/causal.mlir --backend cuda \
      --seqlens 70,0,129,1 --seqlens-kv 64,5,129,300 --heads 2 --backward --check 2>&1 | tail -3
    echo "rc=$?"
  done
} > "$OUT/varlen-sanitize.txt" 2>&1

# Timing: 16 mixed lengths (16,384 tokens in all).
BENCH_LENS=(3000 257 1024 64 2048 511 1500 900 4096 128 700 33 1200 1207 96 1500)
joined=$(IFS=,; echo "${BENCH_LENS[*]}")
ms() { grep -E "$1" | head -1 | sed -E 's/.*: ([0-9.]+) ms.*/\1/'; }
{
  for ex in plain causal; do
    packed=$($KILN run examples/$ex.mlir --backend cuda --head-dim 128 --heads 16 --seqlens "$joined" \
      --backward --repeats 20 2>&1)
    echo "$packed" > "$OUT/varlen-$ex-packed.txt"
    fwd=$(echo "$packed" | ms "timed .* launches"); bwd=$(echo "$packed" | ms "backward.*timed|timed.*backward")
    sumf=0; sumb=0
    for L in "${BENCH_LENS[@]}"; do
      one=$($KILN run examples/$ex.mlir --backend cuda --head-dim 128 --heads 16 --seqlen $L --backward \
        --repeats 20 2>&1)
      echo "$one" >> "$OUT/varlen-$ex-each.txt"
      f=$(echo "$one" | ms "timed .* launches"); b=$(echo "$one" | ms "backward.*timed|timed.*backward")
      sumf=$(python3 -c "print($sumf + $f)"); sumb=$(python3 -c "print($sumb + ${b:-0})")
    done
    python3 -c "print(f'$ex: forward packed {float($fwd):.3f} ms, sum of 16 alone {float($sumf):.3f} ms, ratio {float($sumf)/float($fwd):.2f}; backward packed {float(\"${bwd:-0}\"):.3f} ms, sum {float($sumb):.3f} ms')"
  done
} > "$OUT/varlen-bench.txt" 2>&1

echo "---- summary"
echo "checks: $(grep -c PASS "$OUT/varlen-check.txt") PASS lines, $(grep -c -E 'FAIL|error' "$OUT/varlen-check.txt") FAIL/error"
grep -E "FAIL|error" "$OUT/varlen-check.txt" | head -5
grep -E "rel L2" "$OUT/varlen-check.txt" | sed -E 's/.*rel L2 err ([0-9.e+-]+).*/\1/' | sort -g | tail -1 | sed 's/^/worst rel L2: /'
grep -E "==|ERROR SUMMARY|rc=" "$OUT/varlen-sanitize.txt"
cat "$OUT/varlen-bench.txt"
