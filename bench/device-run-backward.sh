#!/usr/bin/env bash
# One device call for the backward pass: unpack the carried build, then
#   check  - smoke run, JIT example (forward + backward), compute-sanitizer
#            memcheck/racecheck on backward shapes, the quick backward suite;
#   suite  - the full backward suite (test/Runtime/run-gpu-backward-suite.sh);
#   bench  - fwd+bwd next to the peers (bench/bench_backward.py).
# Details go to $OUT; a short summary prints last.
#   bash bench/device-run-backward.sh check|suite|bench [bench-hdims] [bench-seqlens]
set -u
MODE=${1:-check}
HDIMS=${2:-64,128}
SEQS=${3:-4096,16384}
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT" /tmp/kiln-bin
for b in kiln kiln-jit-example; do
  [ -f .device/$b.gz ] && gunzip -c .device/$b.gz > /tmp/kiln-bin/$b && chmod +x /tmp/kiln-bin/$b
done
KILN=/tmp/kiln-bin/kiln
export KILN_CACHE_DIR=/tmp/kiln-cache
nvidia-smi -L
case "$MODE" in
check)
  $KILN run examples/causal_softcap.mlir --backend cuda --backward --seqlen 300 --heads 2 --check 2>&1 | tee "$OUT/smoke.txt"
  [ -x /tmp/kiln-bin/kiln-jit-example ] &&
    /tmp/kiln-bin/kiln-jit-example examples/causal_softcap.mlir 2>&1 | tee "$OUT/jit.txt" | sed 's/^/jit: /'
  {
    for args in "examples/plain.mlir --seqlen 17" "examples/causal.mlir --seqlen 100 --seqlen-kv 70" \
                "examples/alibi.mlir --seqlen 130 --heads 2 --bwd-schedule atomic" \
                "examples/document_mask.mlir --seqlen 70 --head-dim 128" \
                "examples/gqa_causal.mlir --seqlen 90 --heads 8 --bwd-schedule atomic"; do
      echo "== memcheck $args"
      timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $KILN run $args --backward --backend cuda --check 2>&1 | tail -3
    done
    for sched in two-kernel atomic; do
      echo "== racecheck causal N=200 $sched"
      timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $KILN run examples/causal.mlir --seqlen 200 --backward --bwd-schedule $sched --backend cuda --check 2>&1 | tail -3
    done
  } > "$OUT/sanitizer.txt" 2>&1
  grep -E "^==|ERROR SUMMARY|PASS|FAIL|RACECHECK|error" "$OUT/sanitizer.txt"
  timeout 300 bash test/Runtime/run-gpu-backward-suite.sh $KILN --quick > "$OUT/suite.txt" 2>&1
  echo "suite rc=$?"; grep -E "^FAIL" -A10 "$OUT/suite.txt" | head -80; tail -4 "$OUT/suite.txt"
  ;;
suite)
  timeout "${SUITE_TIMEOUT:-560}" bash test/Runtime/run-gpu-backward-suite.sh $KILN > "$OUT/suite.txt" 2>&1
  echo "suite rc=$?"; grep -E "^FAIL" -A10 "$OUT/suite.txt" | head -80; tail -4 "$OUT/suite.txt"
  ;;
bench)
  # Per-kernel register use and spills, for the performance notes.
  timeout 400 python3 bench/bench_backward.py --lib .device/libkiln_runtime.so --specs .device/specs \
    --hdims "$HDIMS" --seqlens "$SEQS" > "$OUT/bench_backward.txt" 2>&1
  echo "bench rc=$?"
  tail -n 14 "$OUT/bench_backward.txt"
  ;;
esac
