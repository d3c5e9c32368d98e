#!/usr/bin/env bash
# One device call for the deterministic backward schedule
# (`--bwd-schedule deterministic`, the C API's "backward-deterministic",
# what torch.use_deterministic_algorithms(True) asks for: ordered dQ adds
# at D >= 128 where auto takes atomic, but for GQA; two kernels elsewhere),
# on the .device/ of
#   VARIANTS="causal causal_softcap alibi" ABLATIONS="det twokernel" \
#     ABLATION_HDIMS="128" bash bench/prepare-attention.sh build "128"
#   strip --strip-unneeded -o /tmp/libkiln.so build/lib/libkiln.so && gzip -9 -c /tmp/libkiln.so > .device/libkiln.so.gz
# Checks: forward + backward against float64 with kiln run failing unless
# the reruns are bit-equal (causal, causal softcap, ALiBi, plain at D = 128:
# ordered; plain and causal at D = 64, GQA causal and a sliding window at
# D = 128: two kernels), memcheck on causal's; python/tests/gpu_check.py
# (plain and causal under torch.use_deterministic_algorithms: three
# bit-equal runs);
# then bench_attention.py's `det` and `twokernel` beside the defaults.
#   bash bench/device-run-deterministic.sh [seqlens]
set -u
. bench/device-env.sh > /dev/null
SEQS=${1:-2048,4096,16384}
D="--bwd-schedule deterministic"
# run_check, keeping the schedule taken and the reruns' line.
run_check() {
  local label=$1
  shift
  echo "== $label"
  timeout 90 $KILN run "$@" --check 2>&1 | grep -E "rel L2|PASS|FAIL|rror|backward \(|reruns"
}
{
for ex in causal causal_softcap alibi plain sliding_window; do
  run_check "$ex hd128 det" examples/$ex.mlir --backend cuda --backward --head-dim 128 --seqlen 700 --seqlen-kv 900 --heads 3 $D
done
for ex in causal plain; do
  run_check "$ex hd64 det" examples/$ex.mlir --backend cuda --backward --head-dim 64 --seqlen 700 --seqlen-kv 900 --heads 3 $D
done
run_check "gqa_causal hd128 det" examples/gqa_causal.mlir --backend cuda --backward --head-dim 128 --seqlen 700 --heads 8 $D
run_check "causal hd128 det Lq>Lk" examples/causal.mlir --backend cuda --backward --head-dim 128 --seqlen 900 --seqlen-kv 300 $D
run_check "causal hd128 det many CTAs" examples/causal.mlir --backend cuda --backward --head-dim 128 --seqlen 2000 --heads 16 --batch 3 $D
} > $OUT/checks.txt 2>&1
summarize_checks $OUT/checks.txt
grep -hE "^== |^  backward \(" $OUT/checks.txt | sed 's/: .*//' | paste - -
echo -n "memcheck: "
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $KILN run examples/causal.mlir --backend cuda --backward --head-dim 128 --seqlen 333 --seqlen-kv 517 --heads 2 $D --check 2>&1 | grep -E "ERROR SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
mkdir -p /tmp/kiln-bin
gunzip -c .device/libkiln.so.gz > /tmp/kiln-bin/libkiln.so
export KILN_LIBRARY=/tmp/kiln-bin/libkiln.so
timeout 300 python3 -m pip install -q --no-build-isolation --no-deps ./python > "$OUT/pip.txt" 2>&1
echo "pip install rc=$?"; grep -iE "error" "$OUT/pip.txt" | head -5
timeout 200 python3 python/tests/gpu_check.py > "$OUT/gpu_check.txt" 2>&1
echo "gpu_check rc=$?"; grep -E "deterministic|FAIL" "$OUT/gpu_check.txt" | head -8
ROUNDS=${ROUNDS:-2} BUDGET=${BUDGET:-240} bench_ablations det det,twokernel --backward --hdims 128 --seqlens "$SEQS" --variants causal,causal_softcap,alibi 2>&1 | tail -14
