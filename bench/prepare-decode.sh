#!/usr/bin/env bash
# The specs of the decoding benchmarks (bench/bench_decode.py,
# bench/probe_verify_splits.py) into .device/specs, beside what is there:
# prepare-device.sh runs it; alone, it refreshes only these (with the kiln
# binary and runtime library it packs too).
#   bash bench/prepare-decode.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
D=.device
mkdir -p "$D/specs"
# (Failures already listed by a calling prepare-device.sh are not ours.)
failed_before=$(cat "$D/failed" 2>/dev/null || true)
failed_before=$(printf "%s" "$failed_before" | grep -c . || true)
if [ ! -e "$D/kiln.gz" ] || [ "$BUILD/bin/kiln" -nt "$D/kiln.gz" ]; then
  strip -o "$D/kiln" "$BUILD/bin/kiln" && gzip -f "$D/kiln"
fi
cp "$BUILD/lib/libkiln_runtime.so" "$D/"
K="$BUILD/bin/kiln"
. bench/prepare-lib.sh
compile plain_hd128 plain --head-dim 128 &
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
# The combine kernel's forms in every split run (`_bysplits`,
# --combine-by-splits: one query row per program; `_byrows`, above:
# --combine-by-rows) instead of each run's choice.
compile plain_hd128_bysplits plain --head-dim 128 --combine-by-splits &
compile gqa4_decode_hd128_bysplits gqa_decode --variant gqa4_decode --combine-by-splits &
compile gqa8_decode_hd128_bysplits gqa_decode --variant gqa8_decode --combine-by-splits &
wait
compile tree_verify_hd128_bysplits tree_verify --combine-by-splits &
compile tree_verify_hd128_byrows tree_verify --combine-by-rows &
wait
# Without the wide decode program (`_nowide`, --wide-decode-rows 0: every
# GQA step of at most 64 queries on the 64-row decode program).
compile gqa4_decode_hd128_nowide gqa_decode --variant gqa4_decode --wide-decode-rows 0 &
compile gqa8_decode_hd128_nowide gqa_decode --variant gqa8_decode --wide-decode-rows 0 &
wait
compile tree_verify_hd128_nowide tree_verify --wide-decode-rows 0 &
wait
# Every kernel launched after the previous one completes (`_nopdl`,
# --no-overlap-launches: no griddepcontrol, no programmatic stream
# serialization).
compile plain_hd128_nopdl plain --head-dim 128 --no-overlap-launches &
compile gqa4_decode_hd128_nopdl gqa_decode --variant gqa4_decode --no-overlap-launches &
compile gqa8_decode_hd128_nopdl gqa_decode --variant gqa8_decode --no-overlap-launches &
wait
compile tree_verify_hd128_nopdl tree_verify --no-overlap-launches &
compile tree_verify_mha_hd128_nopdl "$D/tree_verify_mha.mlir" --no-overlap-launches &
wait
failed_after=$(cat "$D/failed" 2>/dev/null || true)
if [ "$(printf "%s" "$failed_after" | grep -c . || true)" -gt "$failed_before" ]; then
  echo "prepare-decode: some specs failed to compile (above)" >&2
  exit 1
fi
