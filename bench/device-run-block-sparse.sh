#!/usr/bin/env bash
# One device call for block-sparse attention (issue 12), after a .device/
# with kiln.gz, libkiln_runtime.so and specs/ (bench/bench_block_sparse.py):
#   - every example's block-sparse forward and backward (both schedules) on
#     the GPU against float64, with lists from its own mask and random
#     lists; D = 64 / 128 / 256, fp16, GQA, dropout, the cp.async schedule
#     (--no-warp-specialize), mask blocks larger than the tiles;
#   - memcheck, racecheck and synccheck on a block-sparse forward + backward;
#   - SASS of the block-sparse kernels (HGMMA, local memory);
#   - timing: bench/bench_block_sparse.py.
# Details go to $OUT; a short summary prints last.
set -u
. bench/device-env.sh
pick='rel L2|PASS|FAIL|error|differ|block-sparse'
{
  for ex in plain causal softcap causal_softcap sliding_window alibi document_mask gqa_causal; do
    heads=3; [ $ex = gqa_causal ] && heads=8
    for lists in "" "--block-density 0.3 --bwd-schedule atomic"; do
      echo "== $ex $lists"
      $KILN run examples/$ex.mlir --backend cuda --block-sparse 128 $lists --seqlen 1000 --seqlen-kv 1100 \
        --heads $heads --head-dim 128 --backward --check 2>&1 | grep -E "$pick"
    done
  done
  for opts in "--head-dim 64" "--head-dim 256 --block-sparse 64" "--dtype fp16" "--no-warp-specialize" \
      "--dropout 0.2" "--block-sparse 256,128 --block-density 0.5" "--block-sparse 64,256 --block-density 0.5" \
      "--batch 2 --seqlen 4096 --block-density 0.1"; do
    echo "== causal $opts"
    $KILN run examples/causal.mlir --backend cuda --block-sparse 128 --seqlen 700 --heads 2 --head-dim 128 \
      --backward --check $opts 2>&1 | grep -E "$pick"
  done
  for ex in causal sliding_window document_mask tree_verify block_sparse_document; do
    echo "== $ex --build-block-mask"
    $KILN run examples/$ex.mlir --backend cuda --block-sparse 128,64 --seqlen 1000 --seqlen-kv 1300 --heads 4 \
      --batch 2 --head-dim 128 --build-block-mask 2>&1 | grep -E "built|PASS|FAIL|error"
  done
} > "$OUT/block-sparse-check.txt" 2>&1

{
  for tool in memcheck racecheck synccheck; do
    echo "== $tool"
    compute-sanitizer --tool $tool --error-exitcode 9 $KILN run examples/document_mask.mlir --backend cuda \
      --block-sparse 128 --block-density 0.4 --seqlen 600 --seqlen-kv 700 --heads 2 --head-dim 128 --backward \
      --check 2>&1 \
      | tail -3
    echo "rc=$?"
  done
} > "$OUT/block-sparse-sanitize.txt" 2>&1

{
  for f in .device/specs/*_bs128*.cubin.json; do
    base=${f%.cubin.json}
    for c in "$base".*.cubin; do
      sass=$(cuobjdump -sass "$c")
      echo "$(basename "$c"): HGMMA $(echo "$sass" | grep -c HGMMA), LDL/STL $(echo "$sass" | grep -cE 'LDL|STL')"
    done
  done
} > "$OUT/block-sparse-sass.txt" 2>&1

OUT=$OUT python3 bench/bench_block_sparse.py --lib .device/libkiln_runtime.so --specs .device/specs \
  > "$OUT/block-sparse-bench.txt" 2>&1

echo "---- summary"
echo "built lists: $(grep -c "as expected" "$OUT/block-sparse-check.txt") of 5 as expected"
echo "checks: $(grep -c "^PASS$" "$OUT/block-sparse-check.txt") forward (and builder), $(grep -c "PASS (backward)" "$OUT/block-sparse-check.txt") backward PASS lines, $(grep -c -E 'FAIL|error' "$OUT/block-sparse-check.txt") FAIL/error"
grep -E "FAIL|error" "$OUT/block-sparse-check.txt" | head -5
grep -E "rel L2" "$OUT/block-sparse-check.txt" | sed -E 's/.*rel L2 err ([0-9.e+-]+).*/\1/' | sort -g | tail -1 | sed 's/^/worst rel L2: /'
grep -E "==|ERROR SUMMARY|rc=" "$OUT/block-sparse-sanitize.txt"
cat "$OUT/block-sparse-sass.txt"
tail -20 "$OUT/block-sparse-bench.txt"
