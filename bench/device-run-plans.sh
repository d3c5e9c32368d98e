#!/usr/bin/env bash
# One device call for the launch-plan runtime (every kernel launched from its
# spec's plan): unpack .device/ (bench/prepare-device.sh), then
#   check - the runtime's TMA tensor maps (kiln-tma-check), forward and
#           backward of every example checked against float64,
#           the JIT example, the PyTorch autograd example with captures,
#           malformed inputs refused, compute-sanitizer on the workspace path,
#           and the quick forward and backward suites;
#   bench - ALiBi and the document mask through the C API next to
#           FlexAttention (bench/bench_mods.py), and plain / causal next to
#           SDPA (bench/bench_forward.py) to see that nothing slowed down;
#   mods  - bench/bench_mods.py alone, hd 128;
#   bwd   - forward+backward, both schedules, next to SDPA
#           (bench/bench_backward.py);
#   hopper - the sm_90a forward schedule: every example's forward at odd
#           shapes, head dims 64/96/128/192/256 and fp16 against float64,
#           the quick forward suite, memcheck/racecheck/synccheck on it, the
#           SASS of the kernels (HGMMA count, local memory), and plain /
#           causal next to SDPA with the mma.sync, cp.async (no producer
#           warpgroup), single-buffer and one-CTA-per-tile ablations and the
#           opt-in pipelined products (`_mma`, `_nows`, `_nodb`,
#           `_nopersist`, `_pp` specs);
#   hopper-bwd - the sm_90a backward: every example's forward+backward
#           (both schedules) and plain / causal at head dims
#           64/96/128/192/256 in bf16 and fp16 against float64, the quick
#           backward suite, memcheck/racecheck/synccheck on it and the SASS
#           of its kernels;
#   hopper-bwd-bench - forward+backward next to SDPA at hd 64/128/256 with
#           the mma.sync ablation (`_bwd_mma` specs);
#   decode - split-KV decoding: the decode suite, sanitizers on a split
#           run, bench/bench_decode.py, and the prefill forward with and
#           without tile-split-kv (`_nosplitkv` specs);
#   decode-bench - bench/bench_decode.py alone, and its plot
#           (bench/plot_decode.py);
#   decode-suite - the decode suite alone;
#   gqa-pack - GQA packing: sanitizers on a packed split decode, the SASS
#           of its kernels, bench/bench_decode.py with the `_nopack` ablation;
#   combine - the split-KV combine kernel: split runs of many and few
#           splits (and the `--combine-by-rows` ablation) against float64,
#           sanitizers on a split run, Nsight Compute's time of the split and
#           combine kernels, and bench/bench_decode.py with the `_byrows`
#           and `_nopack` ablations;
#   decode-check - the forward's checks after split-KV and the decode
#           program: examples and head dims against float64, sanitizers,
#           SASS, the quick forward suite;
#   paged - paged KV caches: decode, verify and prefill with K and V in
#           pools of pages (page sizes 7 .. 256, TMA and cp.async copies,
#           split and unsplit, tree-masked verify) against float64,
#           memcheck/racecheck/synccheck on paged split runs, the SASS of the
#           paged decode kernel, and bench/bench_decode.py with the paged
#           columns (`_p16`, `_p64`, `_p256` specs);
#   python - the Python package on the GPU (python/tests/gpu_check.py:
#           CUDA tensors vs float64, a training step vs SDPA, torch.compile,
#           flex_attention, host overhead per call) and the compile-time
#           benchmark (cold, warm lookup, warm load);
#   host  - the same without the compile-time benchmark.
# Details go to $OUT; a short summary prints last.
#   bash bench/device-run-plans.sh check|bench|mods|bwd|hopper|hopper-bwd|hopper-bwd-bench|decode|decode-bench|decode-suite|decode-check|gqa-pack|combine|paged|python|host
set -u
MODE=${1:-check}
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT" /tmp/kiln-bin
for b in kiln kiln-jit-example kiln-tma-check; do
  gunzip -c .device/$b.gz > /tmp/kiln-bin/$b && chmod +x /tmp/kiln-bin/$b
done
KILN=/tmp/kiln-bin/kiln
LIB=$PWD/.device/libkiln_runtime.so
S=.device/specs
export KILN_CACHE_DIR=/tmp/kiln-cache
nvidia-smi -L
# Per cubin in the cache (one per kernel): HGMMA, HMMA and local-memory
# instruction counts into $OUT/sass.txt, and a one-line summary.
sass_summary() {
  {
    for c in $KILN_CACHE_DIR/*.cubin; do
      sass=$(cuobjdump -sass $c)
      echo "$(basename $c) $(echo "$sass" | grep -m1 -oE 'Function : [a-z_0-9]+'): HGMMA $(echo "$sass" | grep -c HGMMA)," \
        "HMMA $(echo "$sass" | grep -c HMMA), LDL/STL $(echo "$sass" | grep -cE 'LDL|STL')"
    done
  } > "$OUT/sass.txt" 2>&1
  # Combine, preprocess and convert kernels have no product.
  echo "sass: $(wc -l < "$OUT/sass.txt") cubins, $(grep -c 'HGMMA 0' "$OUT/sass.txt") without HGMMA" \
    "($(grep 'HGMMA 0' "$OUT/sass.txt" | grep -vcE '_combine|_preprocess|_convert') of them products)," \
    "$(grep -vc 'LDL/STL 0$' "$OUT/sass.txt") with local memory"
}
# Every example's forward and backward, both schedules, against float64.
examples_backward() {
  for ex in plain causal softcap causal_softcap sliding_window alibi document_mask gqa_causal; do
    heads=3; [ $ex = gqa_causal ] && heads=8
    for sched in two-kernel atomic; do
      echo "== $ex $sched"
      $KILN run examples/$ex.mlir --backend cuda --backward --bwd-schedule $sched --seqlen 333 \
        --seqlen-kv 517 --heads $heads --check 2>&1 | grep -E "rel L2|PASS|FAIL|error|differ"
    done
  done
}
# Every example's sm_90a forward at odd shapes, plain / causal at D = 64-256
# in bf16 and fp16, and Lq = 1, against float64.
examples_forward() {
  for ex in plain causal softcap causal_softcap sliding_window alibi document_mask gqa_causal; do
    heads=3; [ $ex = gqa_causal ] && heads=8
    echo "== $ex"
    $KILN run examples/$ex.mlir --backend cuda --seqlen 333 --seqlen-kv 517 --heads $heads --check 2>&1 \
      | grep -E "rel L2|PASS|FAIL|error|differ"
  done
  for hd in 64 96 128 192 256; do
    for ex in plain causal; do
      for dt in bf16 fp16; do
        echo "== $ex hd$hd $dt"
        $KILN run examples/$ex.mlir --backend cuda --head-dim $hd --dtype $dt --seqlen 300 --seqlen-kv 700 \
          --heads 2 --batch 2 --check 2>&1 | grep -E "rel L2|PASS|FAIL|error|differ"
      done
    done
  done
  echo "== causal Lq=1"
  $KILN run examples/causal.mlir --backend cuda --seqlen 1 --seqlen-kv 900 --check 2>&1 | grep -E "rel L2|PASS|FAIL|error"
}
# The sm_90a forward's checks: every example and head dim against float64,
# the sanitizers, the SASS of every kernel compiled, the quick forward suite.
forward_checks() {
  examples_forward > "$OUT/examples.txt" 2>&1
  echo "examples: $(grep -c '^PASS' "$OUT/examples.txt") PASS, $(grep -cE 'FAIL|error' "$OUT/examples.txt") FAIL/error"
  grep -B3 -E "FAIL|error" "$OUT/examples.txt" | head -20
  for tool in memcheck racecheck synccheck; do
    echo -n "$tool: "
    timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $KILN run examples/causal_softcap.mlir \
      --backend cuda --head-dim 128 --seqlen 200 --check 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
  done
  sass_summary
  timeout 250 bash test/Runtime/run-gpu-suite.sh $KILN --quick "$LIB" > "$OUT/suite.txt" 2>&1
  echo "forward suite rc=$?: $(tail -1 "$OUT/suite.txt")"; grep -E "^FAIL" -A6 "$OUT/suite.txt" | head -30
}
case "$MODE" in
check)
  /tmp/kiln-bin/kiln-tma-check 2>&1 | tee "$OUT/tma.txt" | tail -4
  {
    examples_backward
    # The fast-math ablation's error: the same softcap runs with precise tanhf.
    for ex in softcap causal_softcap; do
      echo "== $ex precise (--no-fast-math)"
      $KILN run examples/$ex.mlir --backend cuda --backward --no-fast-math --seqlen 333 \
        --seqlen-kv 517 --heads 3 --check 2>&1 | grep -E "rel L2|PASS|FAIL|error|differ"
    done
  } > "$OUT/examples.txt" 2>&1
  echo "examples: $(grep -c '^PASS' "$OUT/examples.txt") PASS lines, $(grep -cE 'FAIL|error' "$OUT/examples.txt") FAIL/error lines"
  grep -B3 -E "FAIL|error" "$OUT/examples.txt" | head -20
  /tmp/kiln-bin/kiln-jit-example examples/causal_softcap.mlir 2>&1 | tee "$OUT/jit.txt" | tail -3 | sed 's/^/jit: /'
  for v in plain causal alibi document_mask; do
    echo -n "torch $v: "
    python3 examples/torch_autograd.py --lib "$LIB" --forward $S/${v}_hd64.cubin.json \
      --backward $S/${v}_hd64_bwd.cubin.json --seqlen 700 2>&1 | tr '\n' ' '; echo
  done | tee "$OUT/torch.txt"
  # Refusals through the plan: wrong heads for GQA, misaligned rows.
  $KILN run examples/gqa_causal.mlir --backend cuda --heads 6 --seqlen 64 2>&1 | tail -1
  $KILN run examples/plain.mlir --backend cuda --pad 3 --seqlen 64 2>&1 | tail -1
  {
    echo "== memcheck alibi backward atomic (workspaces)"
    timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $KILN run examples/alibi.mlir --backend cuda \
      --backward --bwd-schedule atomic --seqlen 130 --heads 2 --check 2>&1 | tail -2
    echo "== memcheck document_mask forward + backward"
    timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $KILN run examples/document_mask.mlir \
      --backend cuda --backward --seqlen 70 --check 2>&1 | tail -2
  } > "$OUT/sanitizer.txt" 2>&1
  grep -E "^==|ERROR SUMMARY|PASS|FAIL" "$OUT/sanitizer.txt"
  timeout 200 bash test/Runtime/run-gpu-suite.sh $KILN --quick "$LIB" > "$OUT/suite.txt" 2>&1
  echo "forward suite rc=$?: $(tail -1 "$OUT/suite.txt")"; grep -E "^FAIL" -A6 "$OUT/suite.txt" | head -30
  timeout 200 bash test/Runtime/run-gpu-backward-suite.sh $KILN --quick > "$OUT/bwd-suite.txt" 2>&1
  echo "backward suite rc=$?: $(tail -1 "$OUT/bwd-suite.txt")"; grep -E "^FAIL" -A6 "$OUT/bwd-suite.txt" | head -30
  ;;
bench)
  timeout 330 python3 bench/bench_mods.py --lib "$LIB" --specs $S --hdims 64,128 --seqlens 4096,16384 \
    > "$OUT/bench_mods.txt" 2>&1
  echo "bench_mods rc=$?"; tail -n 7 "$OUT/bench_mods.txt"
  timeout 200 python3 bench/bench_forward.py --lib "$LIB" --specs $S --hdims 64,128 --seqlens 4096,16384 \
    --variants "" > "$OUT/bench.txt" 2>&1
  echo "bench_forward rc=$?"; tail -n 10 "$OUT/bench.txt"
  ;;
mods)
  timeout 400 python3 bench/bench_mods.py --lib "$LIB" --specs $S --hdims 128 --seqlens 4096,16384 \
    > "$OUT/bench_mods.txt" 2>&1
  echo "bench_mods rc=$?"; tail -n 9 "$OUT/bench_mods.txt"
  ;;
bwd)
  timeout 400 python3 bench/bench_backward.py --lib "$LIB" --specs $S --hdims 64,128 --seqlens 4096,16384 \
    > "$OUT/bench_backward.txt" 2>&1
  echo "bench_backward rc=$?"; tail -n 10 "$OUT/bench_backward.txt"
  ;;
hopper)
  forward_checks
  timeout 320 python3 bench/bench_forward.py --lib "$LIB" --specs $S --hdims 64,128,256 --seqlens 4096,16384 --rounds 2 \
    --variants _mma,_nows,_nodb,_nopersist,_pingpong,_pp > "$OUT/bench.txt" 2>&1
  echo "bench_forward rc=$?"; tail -n 16 "$OUT/bench.txt"
  ;;
hopper-bwd)
  {
    examples_backward
    for hd in 64 96 128 192 256; do
      for ex in plain causal; do
        for dt in bf16 fp16; do
          echo "== $ex hd$hd $dt"
          $KILN run examples/$ex.mlir --backend cuda --backward --head-dim $hd --dtype $dt --seqlen 300 \
            --seqlen-kv 700 --heads 2 --batch 2 --check 2>&1 | grep -E "rel L2|PASS|FAIL|error|differ"
        done
      done
    done
    echo "== causal Lq=1 backward"
    $KILN run examples/causal.mlir --backend cuda --backward --seqlen 1 --seqlen-kv 900 --check 2>&1 \
      | grep -E "rel L2|PASS|FAIL|error"
  } > "$OUT/examples.txt" 2>&1
  echo "examples: $(grep -c '^PASS' "$OUT/examples.txt") PASS, $(grep -cE 'FAIL|error' "$OUT/examples.txt") FAIL/error"
  grep -B3 -E "FAIL|error" "$OUT/examples.txt" | head -20
  for tool in memcheck racecheck synccheck; do
    for sched in two-kernel atomic; do
      echo -n "$tool $sched: "
      timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $KILN run examples/causal_softcap.mlir \
        --backend cuda --backward --bwd-schedule $sched --head-dim 128 --seqlen 200 --check 2>&1 \
        | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
    done
  done
  sass_summary
  timeout 200 bash test/Runtime/run-gpu-backward-suite.sh $KILN --quick > "$OUT/bwd-suite.txt" 2>&1
  echo "backward suite rc=$?: $(tail -1 "$OUT/bwd-suite.txt")"; grep -E "^FAIL" -A6 "$OUT/bwd-suite.txt" | head -30
  ;;
decode)
  # Split-KV decoding: the decode suite, the sanitizers on a split run
  # (split kernel with its producer warpgroup, then the combine kernel),
  # decode bandwidth next to SDPA, and the prefill forward with and without
  # tile-split-kv (`_nosplitkv`): the split machinery must not slow it.
  timeout 330 bash test/Runtime/run-gpu-decode-suite.sh $KILN > "$OUT/decode-suite.txt" 2>&1
  echo "decode suite rc=$?: $(tail -1 "$OUT/decode-suite.txt")"; grep -E "^FAIL" -A6 "$OUT/decode-suite.txt" | head -30
  for tool in memcheck racecheck synccheck; do
    echo -n "$tool split: "
    timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $KILN run examples/gqa_decode.mlir \
      --variant gqa4_decode --backend cuda --heads 8 --seqlen 4 --seqlen-kv 3000 --kv-splits 5 --check 2>&1 \
      | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
  done
  echo "memory: $(python3 test/Runtime/check_memory.py "$LIB" $S/plain_hd64.cubin.json 2>&1)"
  timeout 200 python3 bench/bench_decode.py --lib "$LIB" --specs $S > "$OUT/bench_decode.txt" 2>&1
  echo "bench_decode rc=$?"; tail -n 9 "$OUT/bench_decode.txt"
  timeout 100 python3 bench/bench_forward.py --lib "$LIB" --specs $S --hdims 128 --seqlens 4096 --rounds 2 \
    --variants _nosplitkv > "$OUT/bench_forward.txt" 2>&1
  echo "bench_forward rc=$?"; tail -n 6 "$OUT/bench_forward.txt"
  ;;
decode-suite)
  # The decode suite alone (with the GQA packing cases), under one call's
  # limit.
  timeout 560 bash test/Runtime/run-gpu-decode-suite.sh $KILN > "$OUT/decode-suite.txt" 2>&1
  echo "decode suite rc=$?: $(tail -1 "$OUT/decode-suite.txt")"; grep -E "^FAIL" -A6 "$OUT/decode-suite.txt" | head -30
  ;;
gqa-pack)
  # GQA packing: sanitizers on a packed, split decode (TMA box over the
  # group's heads, packed partial stores, the combine kernel) with mods
  # reading the head; the SASS of the packed decode kernel; the decode
  # benchmark with the `_nopack` ablation.
  for tool in memcheck racecheck synccheck; do
    echo -n "$tool packed split: "
    timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $KILN run test/Numerics/Inputs/gqa-head-mods.mlir \
      --backend cuda --heads 8 --seqlen 5 --seqlen-kv 3000 --kv-splits 5 --check 2>&1 \
      | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
  done
  sass_summary
  grep -E "fwd_decode" "$OUT/sass.txt" | head -8
  timeout 200 python3 bench/bench_decode.py --lib "$LIB" --specs $S > "$OUT/bench_decode.txt" 2>&1
  echo "bench_decode rc=$?"; tail -n 10 "$OUT/bench_decode.txt"
  ;;
combine)
  GQA=examples/gqa_decode.mlir
  {
  for args in "examples/plain.mlir --heads 32 --seqlen 1 --seqlen-kv 32768" \
      "examples/plain.mlir --heads 4 --batch 3 --seqlen 2 --seqlen-kv 20000 --kv-splits 70" \
      "examples/causal.mlir --heads 2 --batch 2 --seqlen 7 --seqlen-kv 5000 --kv-splits 128" \
      "examples/causal.mlir --heads 2 --batch 2 --seqlen 7 --seqlen-kv 5000 --kv-splits 9 --combine-by-rows" \
      "$GQA --variant gqa4_decode --heads 32 --seqlen 1 --seqlen-kv 32768" \
      "$GQA --variant gqa8_decode --heads 64 --seqlen 1 --seqlen-kv 131072" \
      "$GQA --variant gqa4_decode --heads 32 --batch 8 --seqlen 8 --seqlen-kv 8192 --kv-splits 3" \
      "$GQA --variant gqa8_decode --heads 16 --seqlen 3 --seqlen-kv 3000 --head-dim 64 --dtype fp16 --kv-splits 40" \
      "examples/softcap.mlir --heads 2 --seqlen 1 --seqlen-kv 9000 --head-dim 256 --kv-splits 33"; do
    echo "== $args"; timeout 60 $KILN run $args --backend cuda --check 2>&1 | grep -E "output:|lse:|PASS|FAIL|error"
  done
  } > "$OUT/combine-checks.txt" 2>&1
  echo "combine checks: $(grep -c PASS "$OUT/combine-checks.txt") PASS, $(grep -c FAIL "$OUT/combine-checks.txt") FAIL"
  grep -B3 FAIL "$OUT/combine-checks.txt" | head
  for tool in memcheck racecheck synccheck; do
    echo -n "$tool split: "
    timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $KILN run $GQA --variant gqa4_decode \
      --backend cuda --heads 8 --batch 2 --seqlen 3 --seqlen-kv 3000 --kv-splits 37 --check 2>&1 \
      | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
  done
  for args in "examples/plain.mlir --heads 32" "$GQA --variant gqa4_decode --heads 32"; do
    for abl in "" --combine-by-rows; do
      timeout 120 ncu --metrics gpu__time_duration.sum $KILN run $args $abl --backend cuda --seqlen 1 \
        --seqlen-kv 32768 > "$OUT/ncu.txt" 2>&1
      echo "ncu ${args##* } $abl: $(grep -E '^  [a-z0-9_]+_fwd|gpu__time_duration' "$OUT/ncu.txt" \
        | awk '/_fwd/{k=$1} /gpu__time/{printf "%s %s %s; ", k, $NF, $(NF-1)}')"
    done
  done
  timeout 240 python3 bench/bench_decode.py --lib "$LIB" --specs $S --variants _byrows,_nopack \
    > "$OUT/bench_decode.txt" 2>&1
  echo "bench_decode rc=$?"; tail -n 12 "$OUT/bench_decode.txt"
  ;;
decode-bench)
  timeout 300 python3 bench/bench_decode.py --lib "$LIB" --specs $S > "$OUT/bench_decode.txt" 2>&1
  echo "bench_decode rc=$?"; tail -n 12 "$OUT/bench_decode.txt"
  python3 bench/plot_decode.py "$OUT/decode.json" "$OUT/decode.png" > /dev/null
  ;;
decode-check)
  # The forward after split-KV and the decode program (prefill shapes: the
  # prefill kernel; Lq = 1: the decode kernel, split).
  forward_checks
  ;;
paged)
  GQA=examples/gqa_decode.mlir
  {
  for args in "$GQA --variant gqa4_decode --heads 32 --batch 3 --seqlen 1 --seqlen-kv 5000 --page-size 16" \
      "$GQA --variant gqa4_decode --heads 32 --batch 3 --seqlen 1 --seqlen-kv 5000 --page-size 64" \
      "$GQA --variant gqa8_decode --heads 64 --batch 2 --seqlen 1 --seqlen-kv 9000 --page-size 256" \
      "$GQA --variant gqa4_decode --heads 32 --batch 3 --seqlen 1 --seqlen-kv 5000 --page-size 7" \
      "$GQA --variant gqa4_decode --heads 32 --batch 3 --seqlen 1 --seqlen-kv 5000 --page-size 32 --no-warp-specialize" \
      "$GQA --variant gqa4_decode --heads 8 --batch 4 --seqlen 8 --seqlen-kv 3000 --page-size 16" \
      "$GQA --variant gqa8_decode --heads 16 --batch 2 --seqlen 37 --seqlen-kv 2000 --page-size 128" \
      "$GQA --variant gqa4_decode --heads 8 --batch 2 --seqlen 1 --seqlen-kv 100000 --page-size 16" \
      "$GQA --variant gqa4_decode --heads 8 --batch 2 --seqlen 1 --seqlen-kv 3000 --page-size 16 --kv-splits 1" \
      "$GQA --variant gqa4_decode --heads 8 --batch 2 --seqlen 1 --seqlen-kv 3000 --page-size 16 --no-gqa-pack" \
      "examples/plain.mlir --head-dim 128 --heads 32 --batch 2 --seqlen 1 --seqlen-kv 20000 --page-size 16" \
      "examples/plain.mlir --head-dim 64 --heads 4 --batch 2 --seqlen 1 --seqlen-kv 3000 --page-size 32" \
      "examples/causal.mlir --head-dim 128 --heads 4 --batch 2 --seqlen 300 --seqlen-kv 1000 --page-size 16" \
      "examples/causal.mlir --head-dim 64 --heads 4 --batch 2 --seqlen 1000 --seqlen-kv 1000 --page-size 256" \
      "examples/softcap.mlir --head-dim 128 --heads 4 --batch 2 --seqlen 1 --seqlen-kv 4000 --page-size 64" \
      "examples/tree_verify.mlir --heads 32 --batch 3 --seqlen 64 --seqlen-kv 4000 --page-size 16" \
      "examples/tree_verify.mlir --heads 32 --batch 3 --seqlen 8 --seqlen-kv 4000 --page-size 64"; do
    echo "== $args"
    timeout 60 $KILN run $args --backend cuda --check 2>&1 | grep -E "error|output:|PASS|FAIL"
  done
  } > "$OUT/paged-checks.txt" 2>&1
  echo "paged checks: $(grep -c '^PASS' "$OUT/paged-checks.txt") PASS, $(grep -c '^FAIL' "$OUT/paged-checks.txt") FAIL," \
    "$(grep -c 'error' "$OUT/paged-checks.txt") errors of $(grep -c '^==' "$OUT/paged-checks.txt")"
  grep -E "error|FAIL" -B3 "$OUT/paged-checks.txt" | head -20
  for tool in memcheck racecheck synccheck; do
    echo -n "$tool paged split: "
    timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $KILN run $GQA --variant gqa4_decode \
      --backend cuda --heads 8 --batch 3 --seqlen 5 --seqlen-kv 3000 --page-size 16 --kv-splits 5 --check 2>&1 \
      | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
  done
  sass_summary
  grep -E "fwd_decode" "$OUT/sass.txt" | head -4
  timeout 300 python3 bench/bench_decode.py --lib "$LIB" --specs $S --variants "" > "$OUT/bench_decode.txt" 2>&1
  echo "bench_decode rc=$?"; tail -n 12 "$OUT/bench_decode.txt"
  ;;
python|host)
  gunzip -c .device/libkiln.so.gz > /tmp/kiln-bin/libkiln.so
  export KILN_LIBRARY=/tmp/kiln-bin/libkiln.so
  # The package with its C++ ops (kiln._C), built against this machine's
  # torch; KILN_LIBRARY is the library it ships and loads.
  timeout 300 python3 -m pip install -q --no-build-isolation --no-deps ./python > "$OUT/pip.txt" 2>&1
  echo "pip install rc=$?"; grep -iE "error" "$OUT/pip.txt" | head -5
  timeout 300 python3 python/tests/gpu_check.py > "$OUT/gpu_check.txt" 2>&1
  echo "gpu_check rc=$?"; grep -vE "^(W[0-9]|  warnings|    )" "$OUT/gpu_check.txt" | tail -n 16
  timeout 120 python3 bench/bench_host_overhead.py > "$OUT/host_overhead.txt" 2>&1
  echo "bench_host_overhead rc=$?"; head -n 12 "$OUT/host_overhead.txt"
  [ "$MODE" = host ] && exit 0
  timeout 420 python3 bench/bench_compile.py --kiln $KILN --lib /tmp/kiln-bin/libkiln.so --warm "$LIB" --repeats 2 \
    > "$OUT/bench_compile.txt" 2>&1
  echo "bench_compile rc=$?"; tail -n 14 "$OUT/bench_compile.txt"
  ;;
hopper-bwd-bench)
  timeout 450 python3 bench/bench_backward.py --lib "$LIB" --specs $S --hdims 64,128,256 --seqlens 4096,16384 \
    > "$OUT/bench_backward.txt" 2>&1
  echo "bench_backward rc=$?"; tail -n 14 "$OUT/bench_backward.txt"
  ;;
esac
