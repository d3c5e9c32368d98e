#!/usr/bin/env bash
# One device call on a narrow band's tiles (issue 9: the sliding window at
# D = 64, 1.2-1.4x FlexAttention against the 1.5x asked), on the .device/ of
# `VARIANTS=sliding_window ABLATIONS="nonarrow m64 m128n64" ABLATION_HDIMS="64 128"
# bash bench/prepare-attention.sh build "64 128"`: the window's forward +
# backward on its tiles (attn-choose-tiles narrow-band-tiles: 64 x 64 at
# D = 64 and 128) and on the ablation's against float64 (partial blocks
# both ways, fp16, many tiles, Lq > Lk, one query, split KV, D = 256),
# memcheck / racecheck / synccheck; bench_attention.py's forward with the
# ablation and two other tile shapes beside the default; Nsight Compute on
# the D = 64 prefill kernel, default and ablation.
#   bash bench/device-run-window-tiles.sh [check|bench|all] [seqlens]
set -u
MODE=${1:-all}
SEQS=${2:-2048,4096,16384}
. bench/device-env.sh
W="examples/sliding_window.mlir --backend cuda"
if [ "$MODE" != bench ]; then
{
  for flags in "" "--no-narrow-band-tiles"; do
    for hd in 64 128 256; do
      run_check "window hd$hd $flags" $W --backward --head-dim $hd --seqlen 333 --seqlen-kv 517 --heads 2 $flags
      run_check "window hd$hd $flags Lq>Lk" $W --backward --head-dim $hd --seqlen 517 --seqlen-kv 333 --heads 2 $flags
    done
    run_check "window hd64 $flags many" $W --head-dim 64 --seqlen 2000 --heads 16 --batch 3 $flags
    run_check "window hd128 $flags fp16" $W --backward --head-dim 128 --seqlen 700 --seqlen-kv 900 --dtype fp16 $flags
    run_check "window hd64 $flags one query" $W --head-dim 64 --seqlen 1 --seqlen-kv 3000 --heads 4 $flags
    run_check "window hd128 $flags 3 splits" $W --head-dim 128 --seqlen 200 --seqlen-kv 3000 --kv-splits 3 $flags
  done
} > "$OUT/checks.txt" 2>&1
summarize_checks "$OUT/checks.txt"
sanitize "window hd64 forward + backward" $W --backward --head-dim 64 --seqlen 333 --seqlen-kv 517 --heads 2 | tee "$OUT/sanitize.txt"
fi
[ "$MODE" = check ] && exit 0
ROUNDS=3 BUDGET=240 bench_ablations window-tiles nonarrow,m64,m128n64 --hdims 64,128 --seqlens "$SEQS" --variants sliding_window
