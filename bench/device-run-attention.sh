#!/usr/bin/env bash
# One device call of bench/bench_attention.py (issues 9 and 10's benchmark)
# on the .device/ that bench/prepare-attention.sh assembled: Kiln next to
# SDPA's FlashAttention-2 and cuDNN and FlexAttention, forward + backward,
# every row checked against FlexAttention (or FA2) in the same run. The JSON
# goes to $OUT/attention-<tag>.json for bench/report_attention.py; the table
# prints last.
#   bash bench/device-run-attention.sh TAG HDIMS [SEQLENS] [VARIANTS] [ABLATIONS]
# BACKWARD=0 times the forward only; BUDGET (seconds) bounds the rows.
set -u
TAG=$1 HDIMS=$2
SEQS=${3:-1024,2048,4096,8192,16384}
VARS=${4:-plain,causal,softcap,causal_softcap,sliding_window,alibi,document_mask,gqa_causal}
ABL=${5:-}
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT"
export KILN_CACHE_DIR=/tmp/kiln-cache
nvidia-smi -L
python3 bench/bench_attention.py --lib .device/libkiln_runtime.so --specs .device/specs $([ "${BACKWARD:-1}" = 1 ] && echo --backward) \
  --hdims "$HDIMS" --seqlens "$SEQS" --variants "$VARS" --ablations "$ABL" --budget "${BUDGET:-480}" \
  --json "$OUT/attention-$TAG.json" > "$OUT/attention-$TAG.txt" 2>&1
rc=$?
echo "bench rc=$rc"
grep -q "^TFLOP/s of visible pairs" "$OUT/attention-$TAG.txt" || tail -20 "$OUT/attention-$TAG.txt"
grep -E "^(budget|no spec)" "$OUT/attention-$TAG.txt" | head
sed -n '/^TFLOP\/s of visible pairs/,$p' "$OUT/attention-$TAG.txt"
