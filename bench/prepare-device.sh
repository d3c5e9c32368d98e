#!/usr/bin/env bash
# Assembles .device/ for the device scripts (device-run.sh,
# device-run-backward.sh, device-run-plans.sh): the stripped, gzipped kiln
# binaries, the runtime's shared library and the specs the benchmarks load,
# all compiled here (no GPU needed). `.device/` is ignored by git; the device
# tool carries it.
#   bash bench/prepare-device.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
D=.device
rm -rf "$D" && mkdir -p "$D/specs"
for b in kiln kiln-jit-example kiln-tma-check; do
  strip -o "$D/$b" "$BUILD/bin/$b" && gzip -f "$D/$b"
done
cp "$BUILD/lib/libkiln_runtime.so" "$D/"
# The Python package's library (device-run-plans.sh python): ~22 MB gzipped.
strip -o "$D/libkiln.so" "$BUILD/lib/libkiln.so" && gzip -f "$D/libkiln.so"
K="$BUILD/bin/kiln"
# Compiles run in the background, whose failures `wait` does not report:
# each failure leaves a mark, and the script fails at the end if any did.
compile() { # name example|file args...
  local name=$1 src=$2; shift 2
  [ -f "$src" ] || src=examples/$src.mlir
  if ! "$K" compile "$src" "$@" -o "$D/specs/$name.cubin" > /dev/null; then
    echo "prepare-device: could not compile $name" >&2
    touch "$D/failed"
  fi
  rm -f "$D/specs/$name".*cubin # the runtime compiles the spec's source itself
}
# The sm_90a forward with its ablations (mma.sync; cp.async by every warp
# into twin buffers instead of TMA from a producer warpgroup; cp.async into one
# K and one V buffer), 128-row tiles (`_m128`), consumer warpgroups
# taking turns (`_pingpong`, --ping-pong), one CTA per query block instead of
# persistent CTAs (`_nopersist`, --no-persistent), and the opt-in overlap of the
# softmax with P*V (`_pp`, `_ppm128` at 128 rows), at every benchmarked head
# dim.
for hd in 64 128 256; do
  for v in plain causal; do
    compile "${v}_hd$hd" $v --head-dim $hd &
    compile "${v}_hd$hd"_mma $v --head-dim $hd --no-warpgroup-mma &
    compile "${v}_hd$hd"_nows $v --head-dim $hd --no-warp-specialize &
    compile "${v}_hd$hd"_nodb $v --head-dim $hd --no-warp-specialize --no-double-buffer &
    compile "${v}_hd$hd"_pp $v --head-dim $hd --pipeline-products &
    compile "${v}_hd$hd"_m128 $v --head-dim $hd --block-m 128 &
    compile "${v}_hd$hd"_pingpong $v --head-dim $hd --ping-pong &
    compile "${v}_hd$hd"_nopersist $v --head-dim $hd --no-persistent &
    compile "${v}_hd$hd"_ppm128 $v --head-dim $hd --block-m 128 --pipeline-products &
    wait
  done
done
# The backward's schedules, and on sm_90a its mma.sync ablation (`_bwd_mma`),
# the dK/dV kernel on S = Q K^T with P and dS through shared memory
# (`_bwd_qk`, --no-keys-by-queries), cp.async copies by every warp instead
# of TMA from a producer warpgroup (`_bwd_nows`), each product waited for
# in turn (`_bwd_noov`, --no-overlap-products), at D = 256 dK and dV in one
# kernel (`_bwd_nosplit`, --no-split-dkdv)
# and at D = 64 128-row query blocks (`_bwd_m128`, sm_80's default there).
for hd in 64 128 256; do
  for v in plain causal; do
    compile "${v}_hd$hd"_bwd $v --head-dim $hd --backward &
    compile "${v}_hd$hd"_bwd_atomic $v --head-dim $hd --backward --bwd-schedule atomic &
    [ $hd != 256 ] && compile "${v}_hd$hd"_bwd_atomic128 $v --head-dim $hd --backward --bwd-schedule atomic --key-block 128 &
    compile "${v}_hd$hd"_bwd_mma $v --head-dim $hd --backward --no-warpgroup-mma &
    compile "${v}_hd$hd"_bwd_qk $v --head-dim $hd --backward --no-keys-by-queries &
    compile "${v}_hd$hd"_bwd_nows $v --head-dim $hd --backward --no-warp-specialize &
    compile "${v}_hd$hd"_bwd_noov $v --head-dim $hd --backward --no-overlap-products &
    [ $hd = 64 ] && compile "${v}_hd$hd"_bwd_m128 $v --head-dim $hd --backward --block-m 128 &
    [ $hd = 256 ] && compile "${v}_hd$hd"_bwd_nosplit $v --head-dim $hd --backward --no-split-dkdv &
    wait
  done
done
for hd in 64 128; do
  compile softcap_hd$hd softcap --head-dim $hd &
  compile softcap_hd$hd"_bwd" softcap --head-dim $hd --backward &
  compile softcap_hd$hd"_precise" softcap --head-dim $hd --no-fast-math &
  compile softcap_hd$hd"_precise_bwd" softcap --head-dim $hd --backward --no-fast-math &
  wait
  for v in alibi document_mask; do
    compile "${v}_hd$hd" $v --head-dim $hd &
    compile "${v}_hd$hd"_bwd $v --head-dim $hd --backward &
    wait
  done
done
# Decoding (bench/bench_decode.py): GQA 4:1 and 8:1 at hd 128 (MHA is
# plain_hd128), and the prefill forward without tile-split-kv (`_nosplitkv`,
# which keeps the decode program).
compile gqa4_decode_hd128 gqa_decode --variant gqa4_decode &
compile gqa8_decode_hd128 gqa_decode --variant gqa8_decode &
compile plain_hd128_nosplitkv plain --head-dim 128 --no-split-kv &
compile causal_hd128_nosplitkv causal --head-dim 128 --no-split-kv &
wait
# The same without the decode program (`_nodecode`, --decode-rows 0: decode
# steps on the prefill tiles).
compile gqa4_decode_hd128_nodecode gqa_decode --variant gqa4_decode --decode-rows 0 &
compile gqa8_decode_hd128_nodecode gqa_decode --variant gqa8_decode --decode-rows 0 &
compile plain_hd128_nodecode plain --head-dim 128 --decode-rows 0 &
wait
# GQA decoding without packing (`_nopack`, --no-gqa-pack: a decode program
# per query head, as before convert-attn-to-tile gqa-pack).
compile gqa4_decode_hd128_nopack gqa_decode --variant gqa4_decode --no-gqa-pack &
compile gqa8_decode_hd128_nopack gqa_decode --variant gqa8_decode --no-gqa-pack &
wait
# Paged KV caches (bench/bench_decode.py's `_p<page size>` columns): K and V
# in pools of 16-, 64- and 256-key pages read through a block table.
for ps in 16 64 256; do
  compile plain_hd128_p$ps plain --head-dim 128 --page-size $ps &
  compile gqa4_decode_hd128_p$ps gqa_decode --variant gqa4_decode --page-size $ps &
  compile gqa8_decode_hd128_p$ps gqa_decode --variant gqa8_decode --page-size $ps &
  wait
done
# Speculative verify with a tree mask (bench/bench_decode.py's tree rows).
compile tree_verify_hd128 tree_verify &
# The same verify for 32 heads with K and V of their own (`tree_verify_mha`,
# the example with gqa_group = 1): memory-bound at 64 drafts, where GQA 4:1's
# 256 FLOP per byte of K and V lies above the H100's and H200's ridge.
sed 's/gqa_group = 4/gqa_group = 1/' examples/tree_verify.mlir > "$D/tree_verify_mha.mlir"
grep -q "gqa_group = 1" "$D/tree_verify_mha.mlir"
compile tree_verify_mha_hd128 "$D/tree_verify_mha.mlir" &
# The split-KV combine kernel over blocks of query rows (`_byrows`,
# --combine-by-rows: one split per step).
compile plain_hd128_byrows plain --head-dim 128 --combine-by-rows &
compile gqa4_decode_hd128_byrows gqa_decode --variant gqa4_decode --combine-by-rows &
compile gqa8_decode_hd128_byrows gqa_decode --variant gqa8_decode --combine-by-rows &
wait
if [ -e "$D/failed" ]; then
  echo "prepare-device: some specs failed to compile (above)" >&2
  exit 1
fi
du -sh "$D"
