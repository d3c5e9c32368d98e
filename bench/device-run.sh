#!/usr/bin/env bash
# One device call: unpack the carried build, run the GPU suite, run the
# benchmark next to the peers. Details go to $OUT; a short table prints last.
#   bash bench/device-run.sh [quick|full] [bench-hdims] [bench-seqlens]
set -u
MODE=${1:-quick}
HDIMS=${2:-64,128}
SEQS=${3:-4096,16384}
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT" /tmp/kiln-bin
gunzip -c .device/kiln.gz > /tmp/kiln-bin/kiln && chmod +x /tmp/kiln-bin/kiln
[ -f .device/kiln-jit-example.gz ] && gunzip -c .device/kiln-jit-example.gz > /tmp/kiln-bin/kiln-jit-example && chmod +x /tmp/kiln-bin/kiln-jit-example
KILN=/tmp/kiln-bin/kiln
export KILN_CACHE_DIR=/tmp/kiln-cache
nvidia-smi -L
$KILN run examples/plain.mlir --backend cuda --seqlen 200 --heads 2 --check 2>&1 | tee "$OUT/smoke.txt"
# Cold and warm (cached) compile + load of one kernel.
rm -rf /tmp/kiln-cache
$KILN run examples/causal.mlir --backend cuda --seqlen 128 --head-dim 128 2>&1 | grep kernel | sed 's/^/cold: /'
$KILN run examples/causal.mlir --backend cuda --seqlen 128 --head-dim 128 2>&1 | grep kernel | sed 's/^/warm: /'
if [ -x /tmp/kiln-bin/kiln-jit-example ]; then
  /tmp/kiln-bin/kiln-jit-example examples/causal_softcap.mlir 2>&1 | tee "$OUT/jit.txt" | sed 's/^/jit: /'
fi
if [ "$MODE" = full ]; then
  # Memory errors and shared-memory races on a small shape set.
  {
    for args in "examples/plain.mlir --seqlen 17" "examples/causal.mlir --seqlen 100 --seqlen-kv 70" \
                "examples/alibi.mlir --seqlen 130 --heads 2" "examples/document_mask.mlir --seqlen 70" \
                "examples/sliding_window.mlir --seqlen 300 --head-dim 128 --dtype fp16"; do
      echo "== memcheck $args"
      timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $KILN run $args --backend cuda --check 2>&1 | tail -3
    done
    echo "== racecheck causal N=200"
    timeout 90 compute-sanitizer --tool racecheck --error-exitcode 9 $KILN run examples/causal.mlir --seqlen 200 --backend cuda --check 2>&1 | tail -3
  } > "$OUT/sanitizer.txt" 2>&1
  grep -E "^==|ERROR SUMMARY|PASS|FAIL|RACECHECK" "$OUT/sanitizer.txt"
fi
if [ "$MODE" != none ]; then
  suite=quick; [ "$MODE" = full ] && suite=""
  timeout 300 bash test/Runtime/run-gpu-suite.sh $KILN "${suite:+--$suite}" "$PWD/.device/libkiln_runtime.so" > "$OUT/suite.txt" 2>&1
  echo "suite rc=$?"; grep -E "^FAIL" -A8 "$OUT/suite.txt" | head -60; tail -4 "$OUT/suite.txt"
fi
timeout 200 python3 bench/bench_forward.py --lib .device/libkiln_runtime.so --specs .device/specs \
  --hdims "$HDIMS" --seqlens "$SEQS" --variants "${VARIANTS:-_nooverlap}" > "$OUT/bench.txt" 2>&1
echo "bench rc=$?"
tail -n 20 "$OUT/bench.txt"
