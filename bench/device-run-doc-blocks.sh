#!/usr/bin/env bash
# One device call (2026-11-29): the document mask's block-sparse programs on
# blocks other than 128 x 128 (issue 9: the document mask at 1.22-1.35x
# FlexAttention, its masked steps the longest of any variant; with 8
# documents in N tokens most visited blocks straddle a document's diagonal
# or boundary, and narrower key blocks waste fewer of their elements). On the
# .device/ of
#   VARIANTS=document_mask DOC_BLOCKS="128x64 64x64" ABLATIONS=" " \
#     bash bench/prepare-attention.sh build "64 128"
#   check - the document mask's forward + backward against float64 on 128 x 64
#           and 64 x 64 blocks (kiln run builds the lists), at D = 64 and 128;
#   bench - bench_attention.py forward + backward, the document mask on
#           128 x 128 (its default), 128 x 64 and 64 x 64 blocks, each with
#           Kiln's generated list builder, next to FlexAttention.
#   bash bench/device-run-doc-blocks.sh check|bench|all [hdims] [seqlens]
set -u
MODE=${1:-all}
HDIMS=${2:-64,128}
SEQS=${3:-2048,4096,16384}
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = all ]; then
  {
    for hd in 64 128; do
      for bs in 128,64 64; do
        A="examples/document_mask.mlir --backend cuda --backward --head-dim $hd --block-sparse $bs"
        run_check "document_mask hd$hd blocks $bs" $A --heads 4 --seqlen 700
        run_check "document_mask hd$hd blocks $bs many CTAs" $A --heads 16 --batch 3 --seqlen 2000
      done
    done
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
fi
if [ "$MODE" = bench ] || [ "$MODE" = all ]; then
  python3 bench/bench_attention.py --lib "$LIB" --specs .device/specs --backward --rounds 3 \
    --budget "${BUDGET:-380}" --hdims "$HDIMS" --seqlens "$SEQS" --doc-blocks 128x64,64x64 \
    --variants document_mask,document_mask_128x64,document_mask_64x64 \
    --json "$OUT/doc-blocks.json" > "$OUT/doc-blocks-bench.txt" 2>&1
  echo "bench rc=$?"
  grep -E "^(budget|no spec|Traceback|[A-Za-z]*Error)" "$OUT/doc-blocks-bench.txt" | head
  sed -n '/^TFLOP\/s of visible pairs/,$p' "$OUT/doc-blocks-bench.txt"
fi
