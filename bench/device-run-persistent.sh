#!/usr/bin/env bash
# One device call for persistent CTAs (issue 9, step d; the default on
# sm_90a, `--no-persistent` the ablation), after bench/prepare-device.sh (or
# .device/ with the kiln binaries, the runtime library and specs
# <v>_hd<D>[_nopersist].cubin.json):
#   - every example's sm_90a forward with --persistent at odd shapes, head
#     dims 64-256 in bf16 and fp16, Lq = 1, and the paths whose programs
#     number tiles differently (split KV, GQA decode, paged, varlen,
#     block-sparse, longest-first, many tiles per CTA) against float64;
#   - memcheck, racecheck and synccheck on a persistent run;
#   - the SASS of the persistent kernels (HGMMA, local memory);
#   - bench/bench_forward.py with the `_nopersist` specs beside the defaults.
#   - (many) those paths with tiles well above the CTAs, and the sanitizers
#     on a paged decode step of 512 tiles.
#   bash bench/device-run-persistent.sh [check|bench|all|many]
set -u
MODE=${1:-all}
KILN_CACHE_DIR=/tmp/kiln-cache-persistent
. bench/device-env.sh
pick='rel L2|PASS|FAIL|error|differ'
checks() {
  for ex in plain causal softcap causal_softcap sliding_window alibi document_mask gqa_causal; do
    heads=3; [ $ex = gqa_causal ] && heads=8
    echo "== $ex"
    $KILN run examples/$ex.mlir --backend cuda --persistent --seqlen 333 --seqlen-kv 517 --heads $heads \
      --check 2>&1 | grep -E "$pick"
  done
  for hd in 64 96 128 192 256; do
    for ex in plain causal; do
      for dt in bf16 fp16; do
        echo "== $ex hd$hd $dt"
        $KILN run examples/$ex.mlir --backend cuda --persistent --head-dim $hd --dtype $dt --seqlen 300 \
          --seqlen-kv 700 --heads 2 --batch 2 --check 2>&1 | grep -E "$pick"
      done
    done
  done
  local G=examples/gqa_decode.mlir
  for args in "examples/causal.mlir --seqlen 1 --seqlen-kv 900" \
      "examples/plain.mlir --heads 16 --batch 4 --seqlen 2000 --seqlen-kv 1500" \
      "examples/gqa_causal.mlir --heads 16 --batch 4 --seqlen 2000" \
      "examples/causal.mlir --heads 16 --batch 2 --seqlen 3000 --head-dim 64" \
      "examples/plain.mlir --heads 2 --seqlen 100 --seqlen-kv 6000 --kv-splits 5" \
      "$G --variant gqa4_decode --heads 32 --batch 3 --seqlen 1 --seqlen-kv 5000" \
      "$G --variant gqa4_decode --heads 32 --batch 3 --seqlen 1 --seqlen-kv 5000 --page-size 64" \
      "$G --variant gqa8_decode --heads 16 --batch 2 --seqlen 37 --seqlen-kv 2000 --page-size 128" \
      "examples/tree_verify.mlir --heads 32 --batch 3 --seqlen 8 --seqlen-kv 4000 --page-size 64" \
      "examples/varlen_causal.mlir --seqlens 3,100,513,0,250,1200 --heads 4" \
      "examples/plain.mlir --heads 4 --batch 2 --seqlen 700 --block-sparse 128 --block-density 0.3" \
      "examples/document_mask.mlir --heads 4 --seqlen 1000 --block-sparse 128"; do
    echo "== $args"
    $KILN run $args --backend cuda --persistent --check 2>&1 | grep -E "$pick"
  done
}
# The paths that number tiles otherwise, with tiles well above the 132
# CTAs an H100 holds, so that every CTA runs several (the counter, the
# parities, the ring positions carried, the per-tile reads of block tables,
# sequence offsets and block lists).
many() {
  local G=examples/gqa_decode.mlir
  for args in "examples/varlen_causal.mlir --seqlens 1500,100,2000,0,900 --heads 16" \
      "$G --variant gqa4_decode --heads 32 --batch 64 --seqlen 1 --seqlen-kv 2000 --page-size 64" \
      "$G --variant gqa4_decode --heads 32 --batch 64 --seqlen 1 --seqlen-kv 2000" \
      "examples/tree_verify.mlir --heads 32 --batch 48 --seqlen 8 --seqlen-kv 2000 --page-size 64" \
      "examples/plain.mlir --heads 64 --batch 4 --seqlen 100 --seqlen-kv 6000 --kv-splits 3" \
      "examples/plain.mlir --heads 16 --batch 4 --seqlen 1500 --block-sparse 128 --block-density 0.3" \
      "examples/document_mask.mlir --heads 16 --batch 2 --seqlen 2000 --block-sparse 128"; do
    echo "== $args"
    $KILN run $args --backend cuda --check 2>&1 | grep -E "$pick"
  done
}
sanitize_many() {
  for tool in memcheck racecheck synccheck; do
    echo -n "$tool (paged decode, 512 tiles): "
    timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $KILN run examples/gqa_decode.mlir \
      --variant gqa4_decode --heads 32 --batch 64 --seqlen 1 --seqlen-kv 1000 --page-size 64 --backend cuda \
      --check 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
  done
}
sanitize() {
  for tool in memcheck racecheck synccheck; do
    echo -n "$tool: "
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $KILN run examples/causal_softcap.mlir \
      --backend cuda --persistent --head-dim 128 --heads 2 --batch 2 --seqlen 700 --check 2>&1 \
      | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
  done
}
sass() {
  for c in $KILN_CACHE_DIR/*.cubin; do
    s=$(cuobjdump -sass $c)
    echo "$(echo "$s" | grep -m1 -oE 'Function : [a-z_0-9]+'): HGMMA $(echo "$s" | grep -c HGMMA)," \
      "LDL/STL $(echo "$s" | grep -cE 'LDL|STL')"
  done
}
if [ "$MODE" = many ]; then
  many > "$OUT/persistent-many.txt" 2>&1
  echo "many tiles: $(grep -c '^PASS' "$OUT/persistent-many.txt") PASS," \
    "$(grep -cE 'FAIL|error' "$OUT/persistent-many.txt") FAIL/error of $(grep -c '^==' "$OUT/persistent-many.txt")"
  grep -B3 -E "FAIL|error" "$OUT/persistent-many.txt" | head -20
  sanitize_many 2>&1 | tee "$OUT/persistent-many-sanitize.txt"
  exit 0
fi
if [ "$MODE" != bench ]; then
  checks > "$OUT/persistent-checks.txt" 2>&1
  echo "checks: $(grep -c '^PASS' "$OUT/persistent-checks.txt") PASS," \
    "$(grep -cE 'FAIL|error' "$OUT/persistent-checks.txt") FAIL/error of $(grep -c '^==' "$OUT/persistent-checks.txt")"
  grep -B3 -E "FAIL|error" "$OUT/persistent-checks.txt" | head -20
  sanitize 2>&1 | tee "$OUT/persistent-sanitize.txt"
  sass > "$OUT/persistent-sass.txt" 2>&1
  echo "sass: $(grep -c . "$OUT/persistent-sass.txt") kernels, $(grep -c 'HGMMA 0,' "$OUT/persistent-sass.txt") without HGMMA," \
    "$(grep -vc 'LDL/STL 0$' "$OUT/persistent-sass.txt") with local memory"
fi
if [ "$MODE" != check ]; then
  timeout 400 python3 bench/bench_forward.py --lib "$LIB" --specs .device/specs --hdims 64,128,256 \
    --seqlens 1024,4096,16384 --rounds 3 --variants _nopersist > "$OUT/persistent-bench.txt" 2>&1
  echo "bench_forward rc=$?"; tail -n 22 "$OUT/persistent-bench.txt"
fi
