#!/usr/bin/env bash
# One device call for P packed before the products' fence (tgpu-warpgroup-mma
# pack-lhs-first, the default; `--no-pack-lhs-first` the ablation), after
# .device/ holds the kiln binary, the runtime library and the specs
# <v>_hd<D>{,_latepack,_pp,_pplate,_ppm128,_ppm128late}.cubin.json and
# <v>_hd<D>_bwd{,_latepack}.cubin.json:
#   - (check) every example forward and backward against float64 with the
#     default packing, and at 128 rows pipelined; racecheck and synccheck on
#     a pipelined run; HGMMA, local memory and WARPGROUP.ARRIVE per kernel;
#   - (bench) bench_forward.py and bench_backward.py with the ablations
#     beside the defaults.
#   [VARIANTS=_a,_b] bash bench/device-run-pack-lhs.sh [check|bench|all]
set -u
MODE=${1:-all}
KILN_CACHE_DIR=/tmp/kiln-cache-pack-lhs
. bench/device-env.sh
pick='rel L2|PASS|FAIL|error|differ'
checks() {
  for ex in plain causal softcap causal_softcap sliding_window alibi document_mask gqa_causal; do
    heads=3; [ $ex = gqa_causal ] && heads=8
    for flags in "" "--pipeline-products --block-m 128"; do
      echo "== $ex $flags"
      $KILN run examples/$ex.mlir --backend cuda $flags --seqlen 333 --seqlen-kv 517 --heads $heads \
        --check 2>&1 | grep -E "$pick"
    done
    echo "== $ex backward"
    $KILN run examples/$ex.mlir --backend cuda --seqlen 333 --heads $heads --backward --check 2>&1 \
      | grep -E "$pick"
  done
  for hd in 64 96 128 192 256; do
    echo "== causal hd$hd fp16 forward + backward"
    $KILN run examples/causal.mlir --backend cuda --head-dim $hd --dtype fp16 --seqlen 300 --heads 2 \
      --batch 2 --backward --check 2>&1 | grep -E "$pick"
  done
}
sanitize() {
  for tool in racecheck synccheck; do
    echo -n "$tool (pipelined, 128 rows): "
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $KILN run examples/causal_softcap.mlir \
      --backend cuda --pipeline-products --block-m 128 --head-dim 128 --heads 2 --batch 2 --seqlen 700 \
      --check 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
  done
}
sass() {
  for c in $KILN_CACHE_DIR/*.cubin; do
    s=$(cuobjdump -sass $c)
    echo "$(echo "$s" | grep -m1 -oE 'Function : [a-z_0-9]+'): HGMMA $(echo "$s" | grep -c HGMMA)," \
      "WARPGROUP.ARRIVE $(echo "$s" | grep -c 'WARPGROUP.ARRIVE'), LDL/STL $(echo "$s" | grep -cE 'LDL|STL')"
  done
}
if [ "$MODE" != bench ]; then
  checks > "$OUT/pack-lhs-checks.txt" 2>&1
  echo "checks: $(grep -c '^PASS' "$OUT/pack-lhs-checks.txt") PASS," \
    "$(grep -cE 'FAIL|error' "$OUT/pack-lhs-checks.txt") FAIL/error of $(grep -c '^==' "$OUT/pack-lhs-checks.txt")"
  grep -B3 -E "FAIL|error" "$OUT/pack-lhs-checks.txt" | head -20
  sanitize 2>&1 | tee "$OUT/pack-lhs-sanitize.txt"
  sass > "$OUT/pack-lhs-sass.txt" 2>&1
  echo "sass: $(grep -c . "$OUT/pack-lhs-sass.txt") kernels, $(grep -c 'HGMMA 0,' "$OUT/pack-lhs-sass.txt") without HGMMA," \
    "$(grep -vc 'LDL/STL 0$' "$OUT/pack-lhs-sass.txt") with local memory"
fi
if [ "$MODE" != check ]; then
  timeout 330 python3 bench/bench_forward.py --lib "$LIB" --specs .device/specs --hdims 64,128,256 \
    --seqlens 1024,4096,16384 --rounds 3 --variants "${VARIANTS:-_latepack,_pp,_pplate,_ppm128,_ppm128late}" \
    > "$OUT/pack-lhs-bench.txt" 2>&1
  echo "bench_forward rc=$?"; tail -n 22 "$OUT/pack-lhs-bench.txt"
  timeout 150 python3 bench/bench_backward.py --lib "$LIB" --specs .device/specs --hdims 64,128 \
    --seqlens 4096,16384 > "$OUT/pack-lhs-backward.txt" 2>&1
  echo "bench_backward rc=$?"; tail -n 10 "$OUT/pack-lhs-backward.txt"
fi
