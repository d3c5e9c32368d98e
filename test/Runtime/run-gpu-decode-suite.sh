#!/usr/bin/env bash
# The GPU suite of split-KV decoding (tile-split-kv): every variant with a few
# query rows against longer caches, at the plan's own kv_splits and at forced
# ones (1 = unsplit, more splits than blocks: empty splits), in bf16 and fp16,
# head dims 64 to 256, MHA and GQA, against the float64 reference, as
# run-gpu-suite.sh checks (fully masked rows exactly 0 / -inf, no NaN).
#
#   test/Runtime/run-gpu-decode-suite.sh <path/to/kiln>
set -u
KILN=${1:?usage: run-gpu-decode-suite.sh <kiln>}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
EX=$ROOT/examples
TL=$ROOT/test/Runtime/Inputs/causal_top_left.mlir
. "$ROOT/test/Runtime/suite-lib.sh"

# (Lq, Lk) pairs: one token, a verify step, a prefix longer than the cache.
# Lq <= 64 runs the decode program (64-row blocks), Lq = 65 the prefill one.
for pair in "1 1" "1 777" "1 32768" "8 4096" "64 5000" "65 3000" "300 100"; do
  set -- $pair
  for splits in "" 1 3 200; do
    s=${splits:+--kv-splits $splits}
    run "plain Lq=$1 Lk=$2 splits=${splits:-plan}" "$EX/plain.mlir" --seqlen $1 --seqlen-kv $2 --heads 4 --head-dim 128 $s
    run "causal-bottom-right Lq=$1 Lk=$2 splits=${splits:-plan}" "$EX/causal.mlir" --seqlen $1 --seqlen-kv $2 --heads 3 $s
    run "gqa4_decode Lq=$1 Lk=$2 splits=${splits:-plan}" "$EX/gqa_decode.mlir" --variant gqa4_decode --seqlen $1 --seqlen-kv $2 --heads 8 --batch 2 $s
  done
done
for dtype in bf16 fp16; do
  for hd in 64 96 128 192 256; do
    run "plain $dtype hd=$hd Lq=1 Lk=3000" "$EX/plain.mlir" --dtype $dtype --head-dim $hd --seqlen 1 --seqlen-kv 3000 --heads 2 --batch 3
    run "causal-top-left $dtype hd=$hd Lq=5 Lk=3000 splits=4" "$TL" --dtype $dtype --head-dim $hd --seqlen 5 --seqlen-kv 3000 --heads 2 --kv-splits 4
  done
done
# The DSL examples: mods, masks and captures under a split.
for ex in softcap causal_softcap sliding_window alibi document_mask gqa_causal; do
  heads=3; [ $ex = gqa_causal ] && heads=8
  run "$ex Lq=1 Lk=5000" "$EX/$ex.mlir" --seqlen 1 --seqlen-kv 5000 --heads $heads --batch 2
  run "$ex Lq=16 Lk=2000 splits=6 fp16" "$EX/$ex.mlir" --seqlen 16 --seqlen-kv 2000 --heads $heads --kv-splits 6 --dtype fp16
done
run "gqa8_decode B=1 H=64 Lq=1 Lk=131072" "$EX/gqa_decode.mlir" --variant gqa8_decode --heads 64 --seqlen 1 --seqlen-kv 131072
# GQA packing (the decode program's rows are a KV group's query heads):
# mods that read the query head, 8:1 with 32-row blocks (four queries per
# block), Lq * G over one block, hd 64 and 256, fp16, and the ablation.
HM=$ROOT/test/Numerics/Inputs/gqa-head-mods.mlir
run "gqa head mods Lq=1 Lk=3000" "$HM" --seqlen 1 --seqlen-kv 3000 --heads 16 --batch 2
run "gqa head mods Lq=20 Lk=900 splits=3" "$HM" --seqlen 20 --seqlen-kv 900 --heads 8 --kv-splits 3
run "gqa8_decode decode-rows 32 Lq=7 Lk=5000" "$EX/gqa_decode.mlir" --variant gqa8_decode --decode-rows 32 --seqlen 7 --seqlen-kv 5000 --heads 32 --batch 2
run "gqa4_decode fp16 hd=64 Lq=13 Lk=4000" "$EX/gqa_decode.mlir" --variant gqa4_decode --dtype fp16 --head-dim 64 --seqlen 13 --seqlen-kv 4000 --heads 8
run "gqa4_decode hd=256 Lq=2 Lk=3000" "$EX/gqa_decode.mlir" --variant gqa4_decode --head-dim 256 --seqlen 2 --seqlen-kv 3000 --heads 8
run "gqa4_decode no-gqa-pack Lq=3 Lk=3000" "$EX/gqa_decode.mlir" --variant gqa4_decode --no-gqa-pack --seqlen 3 --seqlen-kv 3000 --heads 8
# The combine kernel: many splits over several of its steps, its ablation;
# the tree-mask verify step (examples/tree_verify.mlir: captured ancestor
# bits and cache lengths).
run "plain Lq=3 Lk=20000 splits=70" "$EX/plain.mlir" --seqlen 3 --seqlen-kv 20000 --heads 4 --batch 3 --kv-splits 70
run "causal combine-by-rows Lq=7 Lk=5000 splits=9" "$EX/causal.mlir" --combine-by-rows --seqlen 7 --seqlen-kv 5000 --heads 2 --batch 2 --kv-splits 9
# The run's choice between the combine kernel's two forms: by rows for many
# query rows over few splits (a 32-draft verify, 2 splits; D = 96 and 64 in
# fp16), and each form forced where the choice takes the other.
run "tree_verify Lq=32 Lk=8192 B=8 H=32 splits=2 (by rows)" "$EX/tree_verify.mlir" --seqlen 32 --seqlen-kv 8192 --heads 32 --batch 8 --kv-splits 2
run "gqa4_decode hd=96 Lq=20 Lk=3000 splits=2 (by rows)" "$EX/gqa_decode.mlir" --variant gqa4_decode --head-dim 96 --seqlen 20 --seqlen-kv 3000 --heads 8 --batch 2 --kv-splits 2
run "plain combine-by-rows fp16 hd=64 Lq=50 Lk=3000 splits=4" "$EX/plain.mlir" --combine-by-rows --dtype fp16 --head-dim 64 --seqlen 50 --seqlen-kv 3000 --heads 4 --kv-splits 4
run "causal combine-by-splits Lq=40 Lk=3000 splits=3" "$EX/causal.mlir" --combine-by-splits --seqlen 40 --seqlen-kv 3000 --heads 4 --batch 2 --kv-splits 3
# The wide decode program (GQA packing, Lq * group > 64: 128 packed rows,
# two consumer warpgroups) on both sides of its threshold, unsplit and split,
# at D = 64 and 256 and in fp16, and its ablation.
run "gqa4_decode Lq=16 Lk=4000 (64 packed rows: decode)" "$EX/gqa_decode.mlir" --variant gqa4_decode --seqlen 16 --seqlen-kv 4000 --heads 8 --batch 2
run "gqa4_decode Lq=17 Lk=4000 (68 packed rows: wide)" "$EX/gqa_decode.mlir" --variant gqa4_decode --seqlen 17 --seqlen-kv 4000 --heads 8 --batch 2
run "gqa8_decode Lq=50 Lk=6000 splits=3 wide" "$EX/gqa_decode.mlir" --variant gqa8_decode --seqlen 50 --seqlen-kv 6000 --heads 16 --kv-splits 3
run "gqa4_decode hd=64 fp16 Lq=33 Lk=3000 wide" "$EX/gqa_decode.mlir" --variant gqa4_decode --head-dim 64 --dtype fp16 --seqlen 33 --seqlen-kv 3000 --heads 8
run "gqa4_decode hd=256 Lq=40 Lk=3000 splits=2 wide" "$EX/gqa_decode.mlir" --variant gqa4_decode --head-dim 256 --seqlen 40 --seqlen-kv 3000 --heads 8 --kv-splits 2
run "gqa_causal Lq=64 Lk=2000 wide" "$EX/gqa_causal.mlir" --seqlen 64 --seqlen-kv 2000 --heads 8 --batch 2
run "tree_verify wide-decode-rows 0 Lq=32 Lk=3000" "$EX/tree_verify.mlir" --wide-decode-rows 0 --seqlen 32 --seqlen-kv 3000 --heads 8
run "tree_verify Lq=8 Lk=4000" "$EX/tree_verify.mlir" --seqlen 8 --seqlen-kv 4000 --heads 8 --batch 2
run "tree_verify Lq=64 Lk=3000 splits=5" "$EX/tree_verify.mlir" --seqlen 64 --seqlen-kv 3000 --heads 8 --kv-splits 5
run "tree_verify Lq=33 Lk=200 fp16 hd=64" "$EX/tree_verify.mlir" --seqlen 33 --seqlen-kv 200 --heads 4 --dtype fp16 --head-dim 64
run "plain no-split-kv Lq=1 Lk=4096" "$EX/plain.mlir" --no-split-kv --seqlen 1 --seqlen-kv 4096 --heads 2
run "causal decode-rows 0 Lq=3 Lk=4096" "$EX/causal.mlir" --decode-rows 0 --seqlen 3 --seqlen-kv 4096 --heads 2 --head-dim 128
run "causal decode-rows 32 Lq=20 Lk=2000" "$EX/causal.mlir" --decode-rows 32 --seqlen 20 --seqlen-kv 2000 --heads 2 --head-dim 128
summary
