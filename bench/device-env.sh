# Sourced by device scripts: unpacks the carried kiln binary, sets $OUT (the
# folder whose files come back), $KILN, $LIB (the runtime library) and the
# kernel cache (a script may name its own), and names the GPU.
# (Some older device scripts still spell this out themselves.)
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT" /tmp/kiln-bin
gunzip -c .device/kiln.gz > /tmp/kiln-bin/kiln && chmod +x /tmp/kiln-bin/kiln
KILN=/tmp/kiln-bin/kiln
LIB=$PWD/.device/libkiln_runtime.so
export KILN_CACHE_DIR=${KILN_CACHE_DIR:-/tmp/kiln-cache}
nvidia-smi -L
# check_examples LABEL "HDIMS" ARGS...: every example's forward + backward
# against float64 at each head dim (Lq = 333, Lk = 517; GQA with 8 heads),
# one "== example hdD LABEL" line and the verdicts per case.
check_examples() {
  local label=$1 hdims=$2 ex hd heads
  shift 2
  for ex in plain causal softcap causal_softcap sliding_window alibi document_mask gqa_causal; do
    heads=3; [ $ex = gqa_causal ] && heads=8
    for hd in $hdims; do
      echo "== $ex hd$hd $label"
      timeout 90 $KILN run examples/$ex.mlir --backend cuda --backward "$@" --head-dim $hd \
        --seqlen 333 --seqlen-kv 517 --heads $heads --check 2>&1 | grep -E "rel L2|PASS|FAIL|rror"
    done
  done
}
# run_check LABEL RUN-ARGS...: one "== LABEL" line, then the verdicts of
# `kiln run RUN-ARGS --check` (against float64).
run_check() {
  local label=$1
  shift
  echo "== $label"
  timeout 90 $KILN run "$@" --check 2>&1 | grep -E "rel L2|PASS|FAIL|rror"
}
# dropout_checks: the dropout forward + backward of every example on both
# backward schedules, plain and causal at D = 64 .. 256 in bf16 and fp16,
# and causal with Lq > Lk over many CTAs, against float64 with the same
# mask (run_check's lines).
dropout_checks() {
  local ex heads sched hd dt
  for ex in plain causal softcap causal_softcap sliding_window alibi document_mask gqa_causal; do
    heads=3; [ $ex = gqa_causal ] && heads=8
    for sched in two-kernel atomic; do
      run_check "$ex $sched" examples/$ex.mlir --backend cuda --dropout 0.2 --backward --bwd-schedule $sched \
        --seqlen 333 --seqlen-kv 517 --heads $heads
    done
  done
  for hd in 64 128 256; do
    for ex in plain causal; do
      for dt in bf16 fp16; do
        run_check "$ex hd$hd $dt" examples/$ex.mlir --backend cuda --dropout 0.1 --backward --head-dim $hd \
          --dtype $dt --seqlen 300 --seqlen-kv 700 --heads 2 --batch 2
      done
    done
  done
  run_check "causal hd128 Lq>Lk many CTAs" examples/causal.mlir --backend cuda --dropout 0.15 --backward \
    --head-dim 128 --seqlen 2000 --seqlen-kv 900 --heads 16 --batch 3
}
# decode_suite SECONDS: the GPU decode suite (test/Runtime/run-gpu-decode-suite.sh)
# within SECONDS, its log to $OUT/decode-suite.txt; prints its exit status,
# failures and summary.
decode_suite() {
  timeout "$1" bash test/Runtime/run-gpu-decode-suite.sh "$KILN" > "$OUT/decode-suite.txt" 2>&1
  echo "decode suite rc=$?"; grep -E "^FAIL|summary|failed:" "$OUT/decode-suite.txt"
}
# summarize_checks FILE: the PASS / FAIL counts of a check_examples-style log
# ("== case" lines, then the verdicts), and the lines around each failure.
summarize_checks() {
  echo "checks: $(grep -c PASS "$1") PASS, $(grep -cE 'FAIL|rror' "$1") FAIL/error, $(grep -c '^==' "$1") cases"
  grep -B3 -E "FAIL|rror" "$1" | head -30
}
# sanitize LABEL RUN-ARGS...: `kiln run RUN-ARGS --check` under memcheck,
# racecheck and synccheck, one summary line per tool.
sanitize() {
  local label=$1 tool
  shift
  for tool in memcheck racecheck synccheck; do
    echo -n "$tool $label: "
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $KILN run "$@" --check 2>&1 |
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL" | tr '\n' ' '; echo
  done
}
# bench_ablations TAG NAMES ARGS...: bench_attention.py with the NAMES specs
# (comma-separated ablation or opt-in names, from prepare-attention.sh)
# beside the defaults, ARGS its own (--hdims, --seqlens, --variants,
# --backward); JSON and log to $OUT/TAG.json and $OUT/TAG-bench.txt; prints
# the table, then each name's time over the default's per row
# (bench/ablation_ratios.py).
bench_ablations() {
  local tag=$1 names=$2
  shift 2
  python3 bench/bench_attention.py --lib "$LIB" --specs .device/specs --ablations "$names" \
    --rounds "${ROUNDS:-3}" --budget "${BUDGET:-330}" "$@" \
    --json "$OUT/$tag.json" > "$OUT/$tag-bench.txt" 2>&1
  echo "bench rc=$?"
  sed -n '/^TFLOP\/s of visible pairs/,$p' "$OUT/$tag-bench.txt"
  python3 bench/ablation_ratios.py "$OUT/$tag.json" "$names"
}
# check_atomic_backward LABEL HDIMS: the atomic backward's checks, into
# $OUT/checks.txt and $OUT/sanitize.txt: every example's forward + backward
# against float64 at HDIMS (Lq = 333: a partial last block), D = 256,
# causal and plain in fp16, with one query, with one Q block per loop
# (Lq = 64, 70), over many query blocks, varlen, the block-sparse document
# mask; then memcheck, racecheck and synccheck on causal softcap's backward
# at D = 64 and 128. Prints the counts and the sanitizers' verdicts.
check_atomic_backward() {
  local label=$1 hdims=$2 ex case
  {
    check_examples "$label" "$hdims"
    for ex in plain causal_softcap; do
      run_check "$ex hd256 $label" examples/$ex.mlir --backend cuda --backward --head-dim 256 --seqlen 333 --seqlen-kv 517 --heads 2
    done
    for case in "--dtype fp16" "--seqlen 1 --seqlen-kv 700" "--seqlen 64 --seqlen-kv 700" "--seqlen 2000 --heads 16 --batch 3" "--seqlen 70 --seqlen-kv 70"; do
      run_check "causal hd128 $label $case" examples/causal.mlir --backend cuda --backward --head-dim 128 $case
      run_check "plain hd64 $label $case" examples/plain.mlir --backend cuda --backward --head-dim 64 $case
    done
    run_check "varlen_causal hd128" examples/varlen_causal.mlir --backend cuda --backward --head-dim 128 --seqlens 3,100,513,0,250 --heads 4
    run_check "block_sparse_document hd128" examples/block_sparse_document.mlir --backend cuda --backward --head-dim 128
  } > "$OUT/checks.txt" 2>&1
  summarize_checks "$OUT/checks.txt"
  {
    sanitize "causal_softcap hd128 backward $label" examples/causal_softcap.mlir --backend cuda --backward --head-dim 128 --seqlen 333 --seqlen-kv 517 --heads 2
    sanitize "causal_softcap hd64 backward $label" examples/causal_softcap.mlir --backend cuda --backward --head-dim 64 --seqlen 333 --seqlen-kv 517 --heads 2
  } | tee "$OUT/sanitize.txt"
}
