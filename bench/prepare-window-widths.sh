#!/usr/bin/env bash
# Adds to .device/ (after bench/prepare-attention.sh) the sliding window's
# forward specs at other widths, examples/sliding_window.mlir with its 128
# replaced, each width in .device/specs_w<W>/ with the default tiles and
# 64 x 64 tiles (`_m64n64`), for bench/device-run-window-widths.sh; and
# plain's forward with 64 x 64 tiles (`plain_hd<D>_m64n64`, a long unmasked
# loop on those tiles) in .device/specs.
#   bash bench/prepare-window-widths.sh [build-dir] ["widths"] ["head-dims"]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
K="$BUILD/bin/kiln"
for w in ${2:-256 512 1024}; do
  dir=.device/specs_w$w
  mkdir -p "$dir"
  sed "s/arith.constant 128 : index/arith.constant $w : index/" examples/sliding_window.mlir > .device/sliding_window_w$w.mlir
  for hd in ${3:-64 128}; do
    "$K" compile .device/sliding_window_w$w.mlir --head-dim $hd -o "$dir/sliding_window_hd$hd.cubin" > /dev/null &
    "$K" compile .device/sliding_window_w$w.mlir --head-dim $hd --block-m 64 --block-n 64 \
      -o "$dir/sliding_window_hd${hd}_m64n64.cubin" > /dev/null &
    wait
  done
  rm -f "$dir"/*.cubin
done
for hd in ${3:-64 128}; do
  "$K" compile examples/plain.mlir --head-dim $hd -o .device/specs/plain_hd$hd.cubin > /dev/null &
  "$K" compile examples/plain.mlir --head-dim $hd --block-m 64 --block-n 64 -o .device/specs/plain_hd${hd}_m64n64.cubin > /dev/null &
  wait
done
rm -f .device/specs/*.cubin
du -sh .device
