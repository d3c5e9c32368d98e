#!/usr/bin/env bash
# One device call for tgpu-bulk-reductions (the atomic backward's dQ adds by
# bulk reductions from shared memory):
#   check - every example's atomic backward against float64 where the pass
#           applies (D = 64) and beside it (D = 96, 128: declined), GQA, the
#           persistent and cp.async variants, the ablation; memcheck,
#           racecheck and synccheck on the staged kernel.
# The benchmark is bench/device-run-backward.sh bench, with the specs
# <v>_hd<D>_bwd_atomic and _bwd_atomicred (--no-bulk-reductions) beside the
# default's.
#   bash bench/device-run-bulk-reductions.sh [check]
set -u
MODE=${1:-check}
. bench/device-env.sh
case "$MODE" in
check)
  {
    check_examples atomic "64 96 128" --bwd-schedule atomic
    for extra in "--persistent-backward" "--no-warp-specialize" "--no-bulk-reductions" "--seqlen-kv 200"; do
      echo "== causal hd64 atomic $extra"
      timeout 90 $KILN run examples/causal.mlir --backend cuda --backward --bwd-schedule atomic --head-dim 64 \
        --seqlen 1000 --heads 4 --check $extra 2>&1 | grep -E "rel L2|PASS|FAIL|rror"
    done
  } > "$OUT/checks.txt" 2>&1
  echo "checks: $(grep -c PASS "$OUT/checks.txt") PASS, $(grep -cE 'FAIL|rror' "$OUT/checks.txt") FAIL/error, $(grep -c '^==' "$OUT/checks.txt") cases"
  grep -B3 -E "FAIL|rror" "$OUT/checks.txt" | head -30
  for tool in memcheck racecheck synccheck; do
    echo -n "$tool: "
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $KILN run examples/causal_softcap.mlir --backend cuda \
      --backward --bwd-schedule atomic --head-dim 64 --seqlen 300 --seqlen-kv 517 --heads 2 --check 2>&1 |
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
  done | tee "$OUT/sanitize.txt"
  ;;
esac
