#!/usr/bin/env bash
# One device call for persistent backward kernels (`--persistent-backward`,
# opt-in), after .device/ holds the kiln binary, the runtime library and the
# specs <v>_hd<D>.cubin.json, <v>_hd<D>_bwd[_persist|_kb128p].cubin.json
# (kiln compile --backward [--persistent-backward [--key-block 128]]) for
# plain and causal at D = 64 and 128:
#   - every example's backward (two-kernel, atomic, 128 keys per dK/dV CTA),
#     causal at D = 64/128/256 with many tiles per CTA, and varlen, all
#     persistent, against float64; racecheck and synccheck;
#   - bench/bench_backward.py with the `_persist` and `_kb128p` columns.
#   bash bench/device-run-backward-persistent.sh
set -u
OUT=${OUT:-/tmp/kiln-out}
mkdir -p /tmp/kiln-bin $OUT; gunzip -c .device/kiln.gz > /tmp/kiln-bin/kiln && chmod +x /tmp/kiln-bin/kiln
K=/tmp/kiln-bin/kiln; export KILN_CACHE_DIR=/tmp/kc
{
for ex in plain causal softcap causal_softcap sliding_window alibi document_mask gqa_causal; do
  heads=3; [ $ex = gqa_causal ] && heads=8
  for extra in "" "--bwd-schedule atomic" "--key-block 128"; do
    echo "== $ex $extra"
    $K run examples/$ex.mlir --backend cuda --backward --persistent-backward $extra --seqlen 333 --seqlen-kv 517 --heads $heads --check 2>&1 | grep -E "rel L2|PASS|FAIL|error|differ"
  done
done
for hd in 64 128 256; do echo "== causal hd$hd B4 H16 N2000"; $K run examples/causal.mlir --backend cuda --backward --persistent-backward --head-dim $hd --heads 16 --batch 4 --seqlen 2000 --check 2>&1 | grep -E "rel L2|PASS|FAIL|error|differ"; done
echo "== varlen"; $K run examples/varlen_causal.mlir --backend cuda --backward --persistent-backward --seqlens 3,100,513,0,250 --heads 4 --check 2>&1 | grep -E "PASS|FAIL|error"
} > $OUT/bwd-persist-checks.txt 2>&1
echo "checks: $(grep -c '^PASS' $OUT/bwd-persist-checks.txt) PASS, $(grep -cE 'FAIL|error' $OUT/bwd-persist-checks.txt) FAIL/error of $(grep -c '^==' $OUT/bwd-persist-checks.txt)"
grep -B3 -E "FAIL|error" $OUT/bwd-persist-checks.txt | head -12
echo -n "racecheck: "; timeout 150 compute-sanitizer --tool racecheck $K run examples/causal_softcap.mlir --backend cuda --backward --persistent-backward --heads 2 --batch 2 --seqlen 700 --check 2>&1 | grep -E "RACECHECK SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
echo -n "synccheck: "; timeout 150 compute-sanitizer --tool synccheck $K run examples/causal_softcap.mlir --backend cuda --backward --persistent-backward --heads 2 --batch 2 --seqlen 700 --check 2>&1 | grep -E "ERROR SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
timeout 300 python3 bench/bench_backward.py --lib $PWD/.device/libkiln_runtime.so --specs .device/specs --hdims 64,128 --seqlens 4096,16384 > $OUT/bwd-persist-bench.txt 2>&1; echo "bench rc=$?"; tail -n 10 $OUT/bwd-persist-bench.txt
