#!/usr/bin/env bash
# Quick device probe of the warp-specialized forward (tgpu-warp-specialize):
# correctness of every example and head dim against float64, sanitizers, and
# TFLOP/s with and without the producer warpgroup at both tile heights.
#   bash bench/device-ws-probe.sh
set -u
. bench/device-env.sh
K=$KILN
{
  for ex in plain causal softcap causal_softcap sliding_window alibi document_mask gqa_causal; do
    heads=3; [ $ex = gqa_causal ] && heads=8
    echo "== $ex"; timeout 60 $K run examples/$ex.mlir --backend cuda --seqlen 333 --seqlen-kv 517 --heads $heads --check 2>&1 | grep -E "rel L2|PASS|FAIL|rror"
  done
  for hd in 64 96 128 192 256; do for ex in plain causal; do for shape in "--seqlen 1 --seqlen-kv 700" "--seqlen 517 --seqlen-kv 300" "--seqlen 1000"; do
    echo "== $ex hd$hd $shape"; timeout 60 $K run examples/$ex.mlir --backend cuda --head-dim $hd $shape --heads 2 --check 2>&1 | grep -E "rel L2|PASS|FAIL|rror"
  done; done; done
} > "$OUT/checks.txt" 2>&1
echo "checks: $(grep -c PASS "$OUT/checks.txt") PASS, $(grep -cE 'FAIL|rror' "$OUT/checks.txt") FAIL/error, $(grep -c '^==' "$OUT/checks.txt") cases"
grep -B2 -E "FAIL|rror" "$OUT/checks.txt" | head -20
for tool in memcheck racecheck synccheck; do
  echo -n "$tool: "; timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $K run examples/causal.mlir --backend cuda --seqlen 300 --seqlen-kv 517 --heads 2 --check 2>&1 | grep -E "ERROR SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
done
echo "variant hd bm ws TFLOP/s"
for ex in plain causal; do for hd in 64 128 256; do for bm in 128 192; do
  [ $hd = 256 ] && [ $bm = 192 ] && continue
  for ws in "" "--no-warp-specialize"; do
    r=$(timeout 60 $K run examples/$ex.mlir --backend cuda --head-dim $hd --block-m $bm $ws --seqlen 16384 --heads 16 --repeats 30 2>&1 | grep -oE "[0-9.]+ TFLOP/s" | head -1)
    echo "$ex $hd $bm ${ws:-ws} $r"
  done
done; done; done | tee "$OUT/timing.txt"
