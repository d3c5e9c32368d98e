#!/usr/bin/env bash
# One device call for the innermost stride printed as the literal 1 (every
# tensor contiguous in its last dimension, checked by the runtime; the
# kernels' address arithmetic folds). The change is in the emitted sources,
# so the `strided` specs are the same variants compiled by the parent
# commit's kiln, beside the defaults in one process:
#   VARIANTS="plain causal softcap alibi" ABLATIONS="noq" ABLATION_HDIMS="64 128" \
#     bash bench/prepare-attention.sh build "64 128"
#   then, with the parent's kiln as OLD_KILN (what the `strided` specs are):
#     OLD_KILN=... bash bench/device-run-unit-stride.sh prepare
#   (the `noq` specs, --no-stage-in-q, are the next commit's ablation: the
#   same call measures both).
#   check - the atomic backward's checks (bench/device-env.sh
#           check_atomic_backward), then the decode paths whose views read
#           strides (GQA, paged, tree verify, split KV, varlen, block
#           lists) and rows padded past the head dim (--pad 8);
#   bench - bench_attention.py (forward and forward + backward) with the
#           `strided` and `noq` specs beside the defaults.
#   bash bench/device-run-unit-stride.sh prepare|check|bench|both [seqlens] [variants] [hdims]
# Environment: CHECK_HDIMS (default "64 128"), BUDGET (the bench's).
set -u
MODE=$1
SEQS=${2:-2048,4096,16384}
VARS=${3:-plain,causal,softcap,alibi}
HDIMS=${4:-64,128}
if [ "$MODE" = prepare ]; then # on the build machine
  VARIANTS=${VARIANTS:-plain causal softcap alibi}
  for hd in ${HDIMS//,/ }; do
    for v in $VARIANTS; do
      for which in "" _bwd; do
        flag=; [ -n "$which" ] && flag=--backward
        "$OLD_KILN" compile examples/$v.mlir --head-dim $hd $flag -o .device/specs/${v}_hd${hd}_strided$which.cubin \
          > /dev/null || echo "could not compile ${v}_hd${hd}_strided$which" >&2
        rm -f .device/specs/${v}_hd${hd}_strided$which.*cubin
      done
    done
  done
  ls .device/specs | grep -c strided
  exit 0
fi
. bench/device-env.sh
if [ "$MODE" = check ] || [ "$MODE" = both ]; then
  check_atomic_backward unit "${CHECK_HDIMS:-64 128}"
  G=examples/gqa_decode.mlir
  for args in "examples/causal.mlir --seqlen 1 --seqlen-kv 900" \
      "examples/plain.mlir --heads 2 --seqlen 100 --seqlen-kv 6000 --kv-splits 5" \
      "$G --variant gqa4_decode --heads 32 --batch 3 --seqlen 1 --seqlen-kv 5000" \
      "$G --variant gqa4_decode --heads 32 --batch 3 --seqlen 1 --seqlen-kv 5000 --page-size 64" \
      "$G --variant gqa8_decode --heads 16 --batch 2 --seqlen 37 --seqlen-kv 2000 --page-size 128" \
      "examples/tree_verify.mlir --heads 32 --batch 3 --seqlen 8 --seqlen-kv 4000 --page-size 64" \
      "examples/varlen_causal.mlir --seqlens 3,100,513,0,250,1200 --heads 4" \
      "examples/plain.mlir --heads 4 --batch 2 --seqlen 700 --block-sparse 128 --block-density 0.3" \
      "examples/causal.mlir --backward --seqlen 333 --seqlen-kv 517 --heads 3 --pad 8" \
      "examples/alibi.mlir --backward --head-dim 64 --seqlen 333 --seqlen-kv 517 --heads 3 --pad 8" \
      "examples/plain.mlir --backward --head-dim 128 --seqlen 2000 --heads 16 --batch 3" \
      "examples/softcap.mlir --backward --head-dim 128 --seqlen 2000 --seqlen-kv 1500 --heads 16 --batch 3" \
      "examples/causal_softcap.mlir --head-dim 128 --seqlen 4000 --heads 8 --batch 2 --dtype fp16"; do
    run_check "$args" $args --backend cuda
  done > "$OUT/decode-checks.txt" 2>&1
  summarize_checks "$OUT/decode-checks.txt"
  # The 192-row prefill kernel at D = 128 staging in the tile's copy of Q,
  # with several tiles per CTA (the copy refilled two tiles later).
  sanitize "plain hd128 forward, 176 tiles" examples/plain.mlir --backend cuda --head-dim 128 --seqlen 2000 \
    --heads 8 --batch 2 | tee "$OUT/sanitize-q.txt"
fi
if [ "$MODE" = bench ] || [ "$MODE" = both ]; then
  bench_ablations unit strided,noq --backward --hdims "$HDIMS" --seqlens "$SEQS" --variants "$VARS"
fi
