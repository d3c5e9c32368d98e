#!/usr/bin/env bash
# One device call for programmatic dependent launch: decode (split + combine)
# and backward (preprocess, dQ, dK/dV) checks against float64, the
# sanitizers, and bench_decode.py with KILN_DEPENDENT_LAUNCH=0 (the ablation)
# and 1. Needs .device/ with kiln.gz, libkiln_runtime.so and specs/
# (plain_hd128, gqa4_decode_hd128, gqa8_decode_hd128, tree_verify_hd128).
OUT=${OUT:-/tmp/kiln-out}; mkdir -p $OUT
mkdir -p /tmp/kiln-bin; gunzip -c .device/kiln.gz > /tmp/kiln-bin/kiln && chmod +x /tmp/kiln-bin/kiln; export KILN_CACHE_DIR=/tmp/kiln-cache; K=/tmp/kiln-bin/kiln
{ for ex in plain causal gqa_causal alibi; do echo "== $ex decode"; $K run examples/$ex.mlir --backend cuda --seqlen 1 --seqlen-kv 20000 --heads 8 --batch 2 --check 2>&1 | grep -E "^PASS|FAIL|error|splits"; echo "== $ex bwd"; $K run examples/$ex.mlir --backend cuda --backward --seqlen 333 --seqlen-kv 517 --heads 4 --batch 2 --check 2>&1 | grep -E "^PASS|FAIL|error|differ"; done
  echo "== gqa_decode"; $K run examples/gqa_decode.mlir --variant gqa4_decode --backend cuda --seqlen 1 --seqlen-kv 30000 --batch 3 --check 2>&1 | grep -E "^PASS|FAIL|error"
  echo "== tree"; $K run examples/tree_verify.mlir --backend cuda --seqlen 20 --seqlen-kv 3000 --heads 8 --check 2>&1 | grep -E "^PASS|FAIL|error"
  echo "== det cg"; $K run examples/alibi.mlir --backend cuda --backward --deterministic-capture-gradients --seqlen 300 --heads 4 --check 2>&1 | grep -E "^PASS|FAIL|error|reruns"
} > $OUT/checks.txt 2>&1; echo "checks: $(grep -c '^PASS' $OUT/checks.txt) PASS, $(grep -c 'FAIL\|error' $OUT/checks.txt) FAIL"
for tool in racecheck synccheck memcheck; do compute-sanitizer --tool $tool $K run examples/gqa_decode.mlir --variant gqa4_decode --backend cuda --seqlen 1 --seqlen-kv 8000 --batch 2 --check 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tr '\n' ' '; compute-sanitizer --tool $tool $K run examples/causal.mlir --backend cuda --backward --seqlen 200 --heads 2 --check 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tr '\n' ' '; echo " $tool"; done
for pdl in 0 1; do KILN_DEPENDENT_LAUNCH=$pdl OUT=$OUT timeout 200 python3 bench/bench_decode.py --lib .device/libkiln_runtime.so --specs .device/specs > $OUT/decode_pdl$pdl.txt 2>&1; echo "== PDL=$pdl"; tail -n 14 $OUT/decode_pdl$pdl.txt | cut -c1-160; done
