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
. bench/prepare-lib.sh
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
# Decoding's specs (bench/bench_decode.py, probe_verify_splits.py).
bash bench/prepare-decode.sh "$BUILD" || true # (its failures are in $D/failed)
if [ -e "$D/failed" ]; then
  echo "prepare-device: some specs failed to compile (above)" >&2
  exit 1
fi
du -sh "$D"
