#!/usr/bin/env bash
# One device call: the sliding window on its 64 x 64 tiles (attn-choose-tiles
# narrow-band-tiles) combined with what else changes a kernel's rows, against
# float64: dropout (forward + backward, both schedules), a varlen packed
# batch, a paged KV cache (prefill and decode), GQA 4:1 (a copy of the
# example with gqa_group = 4 in .device/, forward + backward, one query;
# since the rule leaves GQA out, on the head dim's tiles unless the specs
# were built before that),
# fp16 with Lq > Lk at D = 128; then memcheck, racecheck and synccheck on the
# GQA window's forward + backward.
#   sed 's/element_type = bf16}/element_type = bf16, gqa_group = 4}/' \
#     examples/sliding_window.mlir > .device/gqa_window.mlir
#   bash bench/device-run-narrow-band-combos.sh
set -u
. bench/device-env.sh
W="examples/sliding_window.mlir --backend cuda"
G=".device/gqa_window.mlir --backend cuda"
{
  for hd in 64 128; do
    for sched in two-kernel atomic; do
      run_check "window hd$hd dropout $sched" $W --head-dim $hd --dropout 0.1 --backward --bwd-schedule $sched --seqlen 333 --seqlen-kv 517 --heads 2
    done
    run_check "window hd$hd varlen" $W --head-dim $hd --backward --seqlens 3,100,513,0,250 --heads 4
    run_check "window hd$hd paged prefill" $W --head-dim $hd --page-size 64 --seqlen 200 --seqlen-kv 3000 --heads 4 --batch 2
    run_check "window hd$hd paged decode" $W --head-dim $hd --page-size 16 --seqlen 1 --seqlen-kv 3000 --heads 4 --batch 2
    run_check "gqa window hd$hd" $G --head-dim $hd --backward --seqlen 333 --seqlen-kv 517 --heads 8
    run_check "gqa window hd$hd one query" $G --head-dim $hd --seqlen 1 --seqlen-kv 2000 --heads 16
    run_check "gqa window hd$hd many" $G --head-dim $hd --seqlen 2000 --heads 16 --batch 2
  done
  run_check "window hd128 fp16 Lq>Lk" $W --head-dim 128 --dtype fp16 --backward --seqlen 900 --seqlen-kv 700 --heads 3
} > "$OUT/checks.txt" 2>&1
summarize_checks "$OUT/checks.txt"
sanitize "gqa window hd128 forward + backward" $G --head-dim 128 --backward --seqlen 333 --seqlen-kv 517 --heads 8 | tee "$OUT/sanitize.txt"
