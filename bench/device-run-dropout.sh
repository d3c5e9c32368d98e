#!/usr/bin/env bash
# One device call for dropout (issue 12), after bench/prepare-device.sh or a
# .device/ with kiln.gz, libkiln_runtime.so and specs/ (plain and causal at
# D = 64, 128: <v>_hd<D>[_drop][_bwd], the _drop ones compiled with
# --dropout 0.1):
#   - every example's forward + backward with dropout (both schedules, the
#     dK/dV kernel's two orientations, key-block 128), plain / causal at
#     D = 64 .. 256 in bf16 and fp16, a GQA decode step, against float64
#     with the same mask;
#   - memcheck, racecheck and synccheck on a dropout forward + backward;
#   - the SASS of the dropout kernels (local memory) and their registers;
#   - bench/bench_dropout.py: TFLOP/s with and without dropout next to
#     SDPA's FlashAttention-2 with and without it, the mask's mean and drop
#     rate, and its bits against python/kiln/dropout.py;
#   - with FORWARD=1, bench/bench_forward.py on the forwards without dropout
#     next to their `_nooverlap` specs (--no-overlap-products), to see what
#     tgpu-overlap-products' wait at first use does to them.
# Details go to $OUT; a short summary prints last.
set -u
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT" /tmp/kiln-bin
gunzip -c .device/kiln.gz > /tmp/kiln-bin/kiln && chmod +x /tmp/kiln-bin/kiln
KILN=/tmp/kiln-bin/kiln
LIB=$PWD/.device/libkiln_runtime.so
export KILN_CACHE_DIR=/tmp/kiln-cache
nvidia-smi -L
{
  for ex in plain causal softcap causal_softcap sliding_window alibi document_mask gqa_causal; do
    heads=3; [ $ex = gqa_causal ] && heads=8
    for sched in two-kernel atomic; do
      echo "== $ex $sched"
      $KILN run examples/$ex.mlir --backend cuda --dropout 0.2 --backward --bwd-schedule $sched --seqlen 333 \
        --seqlen-kv 517 --heads $heads --check 2>&1 | grep -E "rel L2|PASS|FAIL|error|differ"
    done
  done
  for opt in --no-keys-by-queries "--key-block 128"; do
    echo "== causal_softcap $opt"
    $KILN run examples/causal_softcap.mlir --backend cuda --dropout 0.3 --backward $opt --seqlen 300 --heads 2 \
      --check 2>&1 | grep -E "rel L2|PASS|FAIL|error|differ"
  done
  for hd in 64 96 128 192 256; do
    for ex in plain causal; do
      for dt in bf16 fp16; do
        echo "== $ex hd$hd $dt"
        $KILN run examples/$ex.mlir --backend cuda --dropout 0.1 --backward --head-dim $hd --dtype $dt \
          --seqlen 300 --seqlen-kv 700 --heads 2 --batch 2 --check 2>&1 | grep -E "rel L2|PASS|FAIL|error|differ"
      done
    done
  done
  echo "== gqa4_decode"
  $KILN run examples/gqa_decode.mlir --variant gqa4_decode --backend cuda --dropout 0.2 --heads 8 --seqlen 1 \
    --seqlen-kv 5000 --check 2>&1 | grep -E "rel L2|PASS|FAIL|error"
} > "$OUT/dropout-checks.txt" 2>&1
echo "checks: $(grep -c '^PASS' "$OUT/dropout-checks.txt") PASS, $(grep -c 'FAIL\|error' "$OUT/dropout-checks.txt") FAIL/error"
for tool in memcheck racecheck synccheck; do
  compute-sanitizer --tool $tool $KILN run examples/causal_softcap.mlir --backend cuda --dropout 0.2 --backward \
    --seqlen 200 --heads 2 --check > "$OUT/dropout-$tool.txt" 2>&1
  echo "$tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/dropout-$tool.txt" | head -1)"
done
rm -rf /tmp/kiln-sass && mkdir -p /tmp/kiln-sass
for prog in "" --backward; do
  $KILN compile examples/causal.mlir --head-dim 128 --dropout 0.1 $prog -o /tmp/kiln-sass/d.cubin > /dev/null
  $KILN compile examples/causal.mlir --head-dim 128 $prog -o /tmp/kiln-sass/n.cubin > /dev/null
  for c in /tmp/kiln-sass/[dn].*.cubin; do
    sass=$(cuobjdump -sass $c)
    echo "$(basename $c): $(cuobjdump -res-usage $c 2>&1 | grep -oE 'REG:[0-9]+' | head -1)," \
      "HGMMA $(echo "$sass" | grep -c HGMMA), LDL/STL $(echo "$sass" | grep -cE 'LDL|STL')," \
      "IMAD.HI $(echo "$sass" | grep -cE 'IMAD.HI|IMAD.WIDE'), instructions $(echo "$sass" | grep -cE '^\s+/\*[0-9a-f]{4}\*/')"
  done >> "$OUT/dropout-sass.txt"
  rm -f /tmp/kiln-sass/*.cubin
done
cat "$OUT/dropout-sass.txt"
python3 bench/bench_dropout.py --lib "$LIB" --specs .device/specs > "$OUT/bench-dropout.txt" 2>&1
tail -9 "$OUT/bench-dropout.txt"
if [ "${FORWARD:-0}" = 1 ]; then
  python3 bench/bench_forward.py --lib "$LIB" --specs .device/specs --hdims 64,128 --seqlens 4096,16384 \
    --variants _nooverlap --rounds 3 > "$OUT/bench-forward.txt" 2>&1
  tail -9 "$OUT/bench-forward.txt"
fi
