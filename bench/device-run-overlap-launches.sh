#!/usr/bin/env bash
# Programmatic dependent launch (tgpu-overlap-launches): each kernel starts
# while the stream's previous one finishes. One device call each:
#   check: the GPU decode suite (split and combine kernels back to back),
#          every example's forward + backward at D = 64 and 128 (three
#          kernels back to back), and compute-sanitizer on a split verify
#          step and causal's backward, all launched with the overlap;
#   bench: bench_decode.py (GPU time) with `_nopdl` (--no-overlap-launches)
#          beside the defaults, and probe_verify_splits.py (each kernel's
#          time per step) for both.
# On a .device/ from bench/prepare-decode.sh.
#   bash bench/device-run-overlap-launches.sh check|bench
set -u
. bench/device-env.sh
case ${1:-check} in
check)
  decode_suite 400
  check_examples pdl "64 128" > "$OUT/examples.txt" 2>&1
  summarize_checks "$OUT/examples.txt"
  sanitize "tree_verify Lq=32 splits=2" examples/tree_verify.mlir --backend cuda --seqlen 32 \
    --seqlen-kv 3000 --heads 8 --batch 2 --kv-splits 2
  sanitize "causal hd128 fwd+bwd" examples/causal.mlir --backend cuda --backward --head-dim 128 \
    --seqlen 333 --seqlen-kv 517 --heads 3 ;;
bench)
  timeout 330 python3 bench/bench_decode.py --lib "$LIB" --specs .device/specs --variants _nopdl \
    > "$OUT/bench_decode.txt" 2>&1
  echo "bench_decode rc=$?"
  grep -A20 "^ *shape" "$OUT/bench_decode.txt"
  timeout 150 python3 bench/probe_verify_splits.py --lib "$LIB" --specs .device/specs \
    --programs ,_nopdl --splits 0,2 2>&1 | grep -v Warn | tee "$OUT/probe-verify-splits.txt" ;;
esac
