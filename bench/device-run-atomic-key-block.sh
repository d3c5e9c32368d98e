#!/usr/bin/env bash
# One device call for the atomic backward at 128 keys per dK/dV CTA (dQ in
# column groups, `#tgpu.mma<warps = 8, col_groups = 2>`):
#   check - every example's atomic backward with --key-block 128 against
#           float64 at D = 64, 96, 128 (Lq = 333, Lk = 517), fp16, GQA,
#           persistent, Lq > Lk; the default backward of every example at
#           D = 64 and 128 (async-accumulate changes it too), the 64-key
#           atomic one at D = 64 and 128, --no-keys-by-queries at 128 (and
#           atomic at 64), --no-warp-specialize at 64 (the products' order
#           and async-accumulate reach them); memcheck,
#           racecheck and synccheck on both schedules;
#   bench - bench_backward.py with the default, the 64-key atomic schedule
#           and the 128-key one (specs <v>_hd<D>_bwd{,_atomic,_atomic128},
#           and the ablations _syncacc, _atomic128sync, _atomic128red if
#           present).
#   bash bench/device-run-atomic-key-block.sh check|bench|all [hdims] [seqlens]
set -u
MODE=${1:-all}
HDIMS=${2:-64,128}
SEQS=${3:-4096,16384}
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = all ]; then
  {
    check_examples "atomic key-block 128" "64 96 128" --bwd-schedule atomic --key-block 128
    check_examples two-kernel "64 128"
    check_examples "atomic (64 keys)" "64 128" --bwd-schedule atomic
    check_examples "no-keys-by-queries" "128" --no-keys-by-queries
    check_examples "atomic no-keys-by-queries" "64" --bwd-schedule atomic --no-keys-by-queries
    check_examples "no-warp-specialize" "64" --no-warp-specialize
    for extra in "--persistent-backward" "--dtype fp16" "--seqlen-kv 200" "--seqlen 1 --seqlen-kv 700"; do
      echo "== causal hd128 atomic key-block 128 $extra"
      timeout 90 $KILN run examples/causal.mlir --backend cuda --backward --bwd-schedule atomic --key-block 128 \
        --head-dim 128 --seqlen 1000 --heads 4 --check $extra 2>&1 | grep -E "rel L2|PASS|FAIL|rror"
    done
  } > "$OUT/checks.txt" 2>&1
  echo "checks: $(grep -c PASS "$OUT/checks.txt") PASS, $(grep -cE 'FAIL|rror' "$OUT/checks.txt") FAIL/error, $(grep -c '^==' "$OUT/checks.txt") cases"
  grep -B3 -E "FAIL|rror" "$OUT/checks.txt" | head -30
  for sched in "--bwd-schedule atomic --key-block 128" ""; do
    for tool in memcheck racecheck synccheck; do
      echo -n "$tool ${sched:-two-kernel}: "
      timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $KILN run examples/causal_softcap.mlir --backend cuda \
        --backward $sched --head-dim 128 --seqlen 300 --seqlen-kv 517 --heads 2 --check 2>&1 |
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
    done
  done | tee "$OUT/sanitize.txt"
fi
if [ "$MODE" = bench ] || [ "$MODE" = all ]; then
  timeout 420 python3 bench/bench_backward.py --lib "$LIB" --specs .device/specs \
    --hdims "$HDIMS" --seqlens "$SEQS" > "$OUT/bench_backward.txt" 2>&1
  echo "bench rc=$?"
  tail -n 12 "$OUT/bench_backward.txt"
fi
