#!/usr/bin/env bash
# One device call for tgpu-load-ahead (the backward's per-step LSE and D
# loaded a step ahead), on the .device/ of
# `VARIANTS="plain causal softcap alibi gqa_causal"
#  ABLATIONS="nola" ABLATION_HDIMS=64 bash bench/prepare-attention.sh build 64`:
#   check - every example's forward + backward against float64 at D = 64
#           and 96 (Lq = 333: the last step's load ahead reads past the
#           queries), fp16, Lq = 1, many query blocks; memcheck, racecheck,
#           synccheck on a causal backward;
#   bench - bench_attention.py (forward + backward) with the `nola` specs
#           (--no-load-ahead) beside the defaults.
#   bash bench/device-run-load-ahead.sh check|bench [seqlens] [variants]
set -u
MODE=$1
SEQS=${2:-4096,16384}
VARS=${3:-plain,causal,softcap,alibi,gqa_causal}
. bench/device-env.sh
if [ "$MODE" = check ]; then
  {
    check_examples load-ahead "64 96"
    for case in "--dtype fp16" "--seqlen 1 --seqlen-kv 700" "--seqlen 2000 --heads 16 --batch 3"; do
      echo "== causal hd64 $case"
      timeout 90 $KILN run examples/causal.mlir --backend cuda --backward --head-dim 64 $case --check 2>&1 | grep -E "rel L2|PASS|FAIL|rror"
    done
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  sanitize "causal hd64 backward" examples/causal.mlir --backend cuda --backward --head-dim 64 --seqlen 333 --seqlen-kv 517 --heads 2 | tee "$OUT/sanitize.txt"
fi
if [ "$MODE" = bench ]; then
  python3 bench/bench_attention.py --lib "$LIB" --specs .device/specs --backward --hdims 64 \
    --seqlens "$SEQS" --variants "$VARS" --ablations nola --rounds "${ROUNDS:-3}" --budget "${BUDGET:-330}" \
    --json "$OUT/load-ahead.json" > "$OUT/load-ahead-bench.txt" 2>&1
  echo "bench rc=$?"
  sed -n '/^TFLOP\/s of visible pairs/,$p' "$OUT/load-ahead-bench.txt"
  python3 - "$OUT/load-ahead.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
print("--no-load-ahead / default time: forward + backward, backward alone (above 1: loading ahead pays)")
for r in rows:
    if "kiln_nola_fb_ms" in r:
        # (the ablation is the backward's: both share the default forward)
        b, bn = r["kiln_fb_ms"] - r["kiln_fwd_ms"], r["kiln_nola_fb_ms"] - r["kiln_fwd_ms"]
        print(f"{r['variant']:>15} hd{r['hdim']:<3} N{r['N']:<6} {r['kiln_nola_fb_ms'] / r['kiln_fb_ms']:5.3f} {bn / b:5.3f}")
PY
fi
