#!/usr/bin/env bash
# One device call: the sliding window's forward at widths 256 .. 1024 with
# the default tiles and with 64 x 64 tiles, and plain's with 64 x 64 tiles,
# each beside the default in one process (bench_attention.py, every row
# checked against FlexAttention), to place attn-choose-tiles' narrow-band
# rule; on the .device/ of bench/prepare-attention.sh and
# bench/prepare-window-widths.sh.
#   bash bench/device-run-window-widths.sh ["widths"] [seqlens]
set -u
. bench/device-env.sh
run_check "window 512 hd64 64x64" .device/sliding_window_w512.mlir --backend cuda --head-dim 64 --seqlen 1333 --seqlen-kv 1517 --heads 2 --block-m 64 --block-n 64 2>/dev/null
for w in ${1:-256 512 1024}; do
  echo "== window $w"
  # (bench_ablations' own --specs comes first; these override it.)
  ROUNDS=3 BUDGET=120 bench_ablations w$w m64n64 --specs .device/specs_w$w --window $w \
    --hdims 64,128 --seqlens "${2:-4096}" --variants sliding_window
done
ROUNDS=3 BUDGET=120 bench_ablations plain-m64n64 m64n64 --hdims 64,128 --seqlens 4096,16384 --variants plain
