#!/usr/bin/env bash
# One device call for the dropout with 8-bit uniforms (one Philox call per 16
# elements, shared by lane pairs in both the forward's and the dK/dV kernel's
# tiles), on a .device/ with kiln.gz, libkiln_runtime.so and specs/ of
#   bash bench/device-run-dropout-bytes.sh prepare   (here, no GPU)
# plain and causal at D = 64, 128: <v>_hd<D>[_drop][_bwd] (--dropout 0.1),
# and _drop8[_bwd]: with PROTOTYPE=1 the _drop specs rewritten by
# bench/prototype_dropout_bytes.py, else compiled with --dropout-bits 8; with
# TILES=1 also the forwards _drop8_m192 (--block-m 192) and, at D = 64,
# _drop8_m192n128 (--block-n 128 too): three consumer warpgroups. On
# the device: bench/bench_dropout.py (TFLOP/s beside no dropout and
# FlashAttention-2; the forward's bits of 256 rows against
# python/kiln/dropout.py, 16- and 8-bit, bit for bit), then, where the
# compiler has the option, forward + backward with 8-bit uniforms against
# float64 and the sanitizers.
#   bash bench/device-run-dropout-bytes.sh [prepare]
set -u
if [ "${1:-}" = prepare ]; then
  set -e
  D=.device K=build/bin/kiln
  rm -rf $D && mkdir -p $D/specs
  strip -o $D/kiln build/bin/kiln && gzip -f $D/kiln
  cp build/lib/libkiln_runtime.so $D/
  . bench/prepare-lib.sh
  for hd in 64 128; do
    for v in plain causal; do
      for s in "" _bwd; do
        bwd=; [ -n "$s" ] && bwd=--backward
        compile ${v}_hd$hd$s $v --head-dim $hd $bwd &
        compile ${v}_hd${hd}_drop$s $v --head-dim $hd --dropout 0.1 $bwd &
        [ "${PROTOTYPE:-0}" = 1 ] || compile ${v}_hd${hd}_drop8$s $v --head-dim $hd --dropout 0.1 --dropout-bits 8 $bwd &
        if [ "${TILES:-0}" = 1 ] && [ -z "$s" ]; then
          compile ${v}_hd${hd}_drop8_m192 $v --head-dim $hd --dropout 0.1 --dropout-bits 8 --block-m 192 &
          [ $hd = 64 ] && compile ${v}_hd${hd}_drop8_m192n128 $v --head-dim $hd --dropout 0.1 --dropout-bits 8 \
            --block-m 192 --block-n 128 &
        fi
        wait
        if [ "${PROTOTYPE:-0}" = 1 ]; then
          python3 bench/prototype_dropout_bytes.py $D/specs/${v}_hd${hd}_drop$s.cubin.json \
            $D/specs/${v}_hd${hd}_drop8$s.cubin.json 0.1
        fi
      done
    done
  done
  [ ! -f $D/failed ] || { cat $D/failed; exit 1; }
  ls $D/specs | wc -l
  exit 0
fi
. bench/device-env.sh > /dev/null
timeout 400 python3 bench/bench_dropout.py --lib "$LIB" --specs .device/specs > "$OUT/bench-dropout.txt" 2>&1
echo "bench rc=$?"
if $KILN run examples/plain.mlir --help 2>&1 | grep -q -- --dropout-bits; then
  {
    for hd in 64 128 256; do
      for ex in plain causal; do
        run_check "$ex hd$hd bytes" examples/$ex.mlir --backend cuda --dropout 0.1 --dropout-bits 8 --backward \
          --head-dim $hd --seqlen 333 --seqlen-kv 517 --heads 2
      done
    done
    run_check "plain hd128 bytes 2000x900" examples/plain.mlir --backend cuda --dropout 0.2 --dropout-bits 8 --backward \
      --head-dim 128 --seqlen 2000 --seqlen-kv 900 --heads 16 --batch 3
    run_check "causal hd64 bytes fp16 Lq>Lk" examples/causal.mlir --backend cuda --dropout 0.3 --dropout-bits 8 \
      --backward --head-dim 64 --seqlen 700 --seqlen-kv 300 --heads 4 --dtype fp16
    run_check "causal hd64 bytes mma.sync" examples/causal.mlir --backend cuda --no-warpgroup-mma --dropout 0.3 \
      --dropout-bits 8 --backward --head-dim 64 --seqlen 300 --seqlen-kv 500 --heads 2
    run_check "softcap hd128 bytes two-kernel" examples/softcap.mlir --backend cuda --dropout 0.1 --dropout-bits 8 \
      --backward --head-dim 128 --seqlen 300 --heads 2 --bwd-schedule two-kernel
    run_check "gqa4_decode bytes" examples/gqa_decode.mlir --variant gqa4_decode --backend cuda --dropout 0.2 \
      --dropout-bits 8 --heads 8 --seqlen 1 --seqlen-kv 5000
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  sanitize "causal dropout bytes" examples/causal.mlir --backend cuda --dropout 0.2 --dropout-bits 8 --backward \
    --seqlen 200 --heads 2 > "$OUT/sanitize.txt" 2>&1
  tail -4 "$OUT/sanitize.txt"
fi
tail -9 "$OUT/bench-dropout.txt"
