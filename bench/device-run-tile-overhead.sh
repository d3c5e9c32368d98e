#!/usr/bin/env bash
# One device call on the forward's cost per tile (issue 9: short sequences):
#   check  the persistent paths with many tiles (device-run-persistent.sh
#          many; racecheck and synccheck on a causal forward of 256 tiles),
#          the persistent backward at D = 64 and 128, the quick forward GPU
#          suite, every example's forward + backward at D = 64 / 128 / 256
#          against float64, memcheck and racecheck on a forward + backward
#          whose last query block is partial;
#   bench  bench/bench_forward.py at N = 1024 ... 16k with the spec suffixes
#          in $VARIANTS beside the defaults, and bench/bench_backward.py
#          (D = 64, 128) with the `_bwd*` specs present;
#   ncu    Nsight Compute's per-instruction stall samples of the plain D = 128
#          forward at N = 1024 (the most tiles per FLOP), per flag set given
#          ($NCU_KERNEL and $NCU_ARGS name another kernel and problem).
# (BWD=0 skips the backward.)
#   VARIANTS=_m128 bash bench/device-run-tile-overhead.sh [check|bench|ncu|all] ["FLAGS" ...]
set -u
MODE=${1:-all}
shift || true
. bench/device-env.sh
has() { [ "$MODE" = all ] || [ "$MODE" = "$1" ]; }
if has check; then
  # Persistent kernels with many tiles per CTA, so that both copies of Q
  # serve several tiles: the paths that number tiles otherwise, and the
  # sanitizers on a paged decode step of 512 tiles and a causal forward of
  # 256 tiles.
  bash bench/device-run-persistent.sh many
  for tool in racecheck synccheck; do
    timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $KILN run examples/causal.mlir \
      --backend cuda --seqlen 1500 --heads 16 --batch 2 --head-dim 64 --check > "$OUT/$tool-tiles.txt" 2>&1
    echo "$tool (causal, 256 tiles) rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$tool-tiles.txt" | head -1)"
  done
  # The persistent backward (opt-in) with two copies of K and V where they
  # keep two CTAs per SM (D = 64) and one where they would not (D = 128).
  for hd in 64 128; do
    echo "persistent backward D=$hd: $($KILN run examples/causal.mlir --backend cuda --backward \
      --persistent-backward --head-dim $hd --seqlen 1500 --heads 16 --batch 2 --check 2>&1 | grep -cE '^PASS')/1 PASS"
  done
  timeout 240 bash test/Runtime/run-gpu-suite.sh $KILN --quick > "$OUT/suite.txt" 2>&1
  echo "suite rc=$?"; grep -E "^FAIL" -A8 "$OUT/suite.txt" | head -40; tail -2 "$OUT/suite.txt"
  check_examples default "64 128 256" > "$OUT/checks.txt" 2>&1
  echo "checks: $(grep -c PASS "$OUT/checks.txt") PASS, $(grep -c FAIL "$OUT/checks.txt") FAIL"
  grep -B3 FAIL "$OUT/checks.txt" | head -20
  for tool in memcheck racecheck; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $KILN run examples/causal.mlir \
      --backend cuda --backward --seqlen 333 --seqlen-kv 517 --heads 3 --check > "$OUT/$tool.txt" 2>&1
    echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$tool.txt" | head -1)"
  done
fi
if has bench; then
  timeout 360 python3 bench/bench_forward.py --lib "$LIB" --specs .device/specs \
    --hdims "${HDIMS:-64,128,256}" --seqlens "${SEQS:-1024,2048,4096,16384}" \
    --variants "${VARIANTS:-_m128}" --rounds "${ROUNDS:-3}" > "$OUT/bench.txt" 2>&1
  echo "bench rc=$?"
  if [ "${BWD:-1}" = 1 ]; then
    timeout 200 python3 bench/bench_backward.py --lib "$LIB" --specs .device/specs \
      --hdims 64,128 --seqlens "${BWD_SEQS:-1024,2048,4096}" > "$OUT/bench-backward.txt" 2>&1
    echo "bench backward rc=$?"
  fi
fi
if has ncu; then
  [ $# -eq 0 ] && set -- ""
  timeout 240 bash bench/device-ncu.sh --source "${NCU_KERNEL:-plain_fwd\$}" \
    "${NCU_ARGS:-examples/plain.mlir --head-dim 128 --seqlen 1024 --heads 16 --batch 16}" "$@" 2>&1 | tail -40
fi
if has bench; then
  [ "${BWD:-1}" = 1 ] && tail -n 14 "$OUT/bench-backward.txt"
  tail -n 26 "$OUT/bench.txt"
fi
