#!/usr/bin/env bash
# One device call for convert-attn-to-tile static-max (2026-11-29): the
# capped variants against float64 on the GPU (softcap and causal softcap
# forward + backward at D = 64, 128 and 256, fp16, split KV, scores at the
# bottom of the capped range with rows that see no key), compute-sanitizer on
# softcap's D = 128 forward, then bench_attention.py's forward for plain,
# softcap and causal softcap at D = 64 and 128 with the `nostatic` ablation
# (--no-static-max) and the opt-in `pp` / `pingpong` schedules beside the
# defaults. On the .device/ of
#   VARIANTS="plain softcap causal_softcap" ABLATIONS="nostatic pp pingpong" \
#     ABLATION_HDIMS="64 128" bash bench/prepare-attention.sh build "64 128"
set -u
. bench/device-env.sh
{
  for v in softcap causal_softcap; do
    for hd in 64 128 256; do
      run_check "$v hd$hd" examples/$v.mlir --backend cuda --backward --head-dim $hd --heads 3 \
        --seqlen 333 --seqlen-kv 517
    done
  done
  run_check "softcap fp16" examples/softcap.mlir --backend cuda --dtype fp16 --backward --seqlen 333
  run_check "softcap split" examples/softcap.mlir --backend cuda --head-dim 128 --batch 2 --heads 3 \
    --seqlen 2 --seqlen-kv 5000 --kv-splits 5
  run_check "low-capped Lq>Lk" test/Numerics/Inputs/low-capped-scores.mlir --backend cuda --backward \
    --heads 2 --seqlen 300 --seqlen-kv 100
  run_check "low-capped decode split" test/Numerics/Inputs/low-capped-scores.mlir --backend cuda \
    --head-dim 128 --heads 4 --seqlen 1 --seqlen-kv 3000 --kv-splits 3
  sanitize "softcap hd128" examples/softcap.mlir --backend cuda --head-dim 128 --heads 2 --seqlen 333 \
    --seqlen-kv 517
} 2>&1 | tee "$OUT/static-max-checks.txt"
echo "checks: $(grep -c '^PASS' "$OUT/static-max-checks.txt") PASS, $(grep -c FAIL "$OUT/static-max-checks.txt") FAIL"
BACKWARD=0 BUDGET=${BUDGET:-300} bash bench/device-run-attention.sh static "64,128" 4096,16384 \
  plain,softcap,causal_softcap nostatic,pp,pingpong
python3 bench/ablation_ratios.py "$OUT/attention-static.json" nostatic,pp,pingpong
