#!/usr/bin/env bash
# One device call: every example's forward + backward against float64 at
# D = 64 and 128 (check_examples: Lq 333, Lk 517), after a change to a
# device-library primitive that the backward's preprocess uses too
# (kiln::load of register tiles, pair loads), and the decode suite's verify
# cases. On a .device/ with the kiln binary.
set -u
. bench/device-env.sh
check_examples final "64 128" > "$OUT/final-checks.txt" 2>&1
summarize_checks "$OUT/final-checks.txt"
for lq in 8 32 64; do
  run_check "tree_verify Lq=$lq B=2 H=8 backward" examples/tree_verify.mlir --backend cuda --seqlen $lq \
    --seqlen-kv 3000 --heads 8 --batch 2 --backward
done | tee -a "$OUT/final-checks.txt"
sanitize "causal hd128 backward Lq=333 Lk=517" examples/causal.mlir --backend cuda --backward --head-dim 128 \
  --seqlen 333 --seqlen-kv 517 --heads 3 | tee -a "$OUT/final-checks.txt"
