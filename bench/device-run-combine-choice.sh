#!/usr/bin/env bash
# The split-KV combine kernel's two forms and the run's choice between them
# (tile-split-kv combine-rows-steps), and the wide decode program for GQA
# steps of many packed rows (convert-attn-to-tile wide-decode-rows), in one
# device call each:
#   check: the GPU decode suite (test/Runtime/run-gpu-decode-suite.sh) and
#          compute-sanitizer memcheck on a by-rows and a by-splits run;
#   bench: bench_decode.py (dense, paged and tree-verify rows, GPU time)
#          with `_bysplits` (--combine-by-splits) and `_nowide` (no wide
#          decode program: --wide-decode-rows 0) beside the defaults, and
#          probe_verify_splits.py (each kernel's time per step).
# On a .device/ from bench/prepare-decode.sh.
#   bash bench/device-run-combine-choice.sh check|bench
set -u
. bench/device-env.sh
case ${1:-check} in
check)
  decode_suite 420
  for tool in memcheck racecheck synccheck; do
    for form in "" --combine-by-splits; do
      echo -n "$tool tree_verify Lq=32 splits=2 ${form:-(choice: by rows)}: "
      timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $KILN run examples/tree_verify.mlir \
        --backend cuda --seqlen 32 --seqlen-kv 3000 --heads 8 --batch 2 --kv-splits 2 $form --check 2>&1 |
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
    done
  done ;;
bench)
  timeout 330 python3 bench/bench_decode.py --lib "$LIB" --specs .device/specs --variants _bysplits,_nowide \
    > "$OUT/bench_decode.txt" 2>&1
  echo "bench_decode rc=$?"
  grep -A20 "^ *shape" "$OUT/bench_decode.txt"
  timeout 150 python3 bench/probe_verify_splits.py --lib "$LIB" --specs .device/specs \
    --programs ,_bysplits,_nowide --splits 0,1,2 2>&1 | grep -v Warn | tee "$OUT/probe-verify-splits.txt"
  echo -n "racecheck tree_verify Lq=32 splits=2 (wide decode): "
  timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 $KILN run examples/tree_verify.mlir \
    --backend cuda --seqlen 32 --seqlen-kv 3000 --heads 8 --batch 2 --kv-splits 2 --check 2>&1 |
    grep -E "RACECHECK SUMMARY|PASS|FAIL" | tr '\n' ' '; echo ;;
esac
