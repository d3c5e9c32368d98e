#!/usr/bin/env bash
# One device call for gradients of captured tensors (issue 12,
# `--capture-gradients`): ALiBi's slopes and a relative-position bias table
# with a per-head temperature (test/Numerics/Inputs/bias-table.mlir), both
# backward schedules and orientations, bf16 and fp16, against float64
# central differences; memcheck; and the backward's time with and without
# the captures' gradients (`kiln run --repeats`). CG=--deterministic-capture-gradients
# runs the checks with the fixed-point sums (whose reruns `--check` also
# compares bit for bit) and times all three. Needs .device/kiln.gz.
#   OUT=/tmp/out bash bench/device-run-capture-gradients.sh
OUT=${OUT:-/tmp/kiln-out}
set -u
mkdir -p /tmp/kiln-bin $OUT; gunzip -c .device/kiln.gz > /tmp/kiln-bin/kiln && chmod +x /tmp/kiln-bin/kiln
K=/tmp/kiln-bin/kiln; export KILN_CACHE_DIR=/tmp/kiln-cache
CG=${CG:---capture-gradients}
{
for sched in two-kernel atomic; do for ex in examples/alibi.mlir test/Numerics/Inputs/bias-table.mlir; do for dt in bf16 fp16; do
  echo "== $ex $sched $dt"; $K run $ex --backend cuda --backward $CG --bwd-schedule $sched --dtype $dt --heads 4 --batch 2 --seqlen 333 --seqlen-kv 517 --check 2>&1 | grep -E "rel L2|PASS|FAIL|error|differ|reruns"
done; done; done
echo "== bias-table --no-keys-by-queries"; $K run test/Numerics/Inputs/bias-table.mlir --backend cuda --backward $CG --no-keys-by-queries --heads 2 --seqlen 300 --check 2>&1 | grep -E "grad|PASS|FAIL|error"
echo "== alibi D=128 GQA-free, dropout too"; $K run examples/alibi.mlir --backend cuda --backward $CG --dropout 0.1 --head-dim 128 --heads 2 --seqlen 257 --check 2>&1 | grep -E "grad|PASS|FAIL|error"
} > $OUT/cg-checks.txt 2>&1
echo "checks: $(grep -c '^PASS' $OUT/cg-checks.txt) PASS, $(grep -c 'FAIL\|error' $OUT/cg-checks.txt) FAIL/error"; grep -E "==|grad_" $OUT/cg-checks.txt | head -40
compute-sanitizer --tool memcheck $K run test/Numerics/Inputs/bias-table.mlir --backend cuda --backward $CG --heads 2 --seqlen 200 --check 2>&1 | grep -E "ERROR SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
for cg in "" --capture-gradients --deterministic-capture-gradients; do for ex in examples/alibi.mlir test/Numerics/Inputs/bias-table.mlir; do
  echo "== timing $ex $cg"; $K run $ex --backend cuda --backward $cg --head-dim 128 --heads 16 --batch 4 --seqlen 4096 --repeats 20 2>&1 | grep -E "timed .* backward"
done; done
