#!/usr/bin/env bash
# The GPU backward suite: every case runs the forward, then the backward
# kernels on a random dO (`kiln run --backward --backend cuda --check`), and
# compares O, dQ, dK and dV with the float64 reference (relative L2 error of
# each at most 1e-2, no NaN). Every backward runs three times: the
# two-kernel schedule must be bit-identical across them (the driver fails
# the case otherwise). Needs only the NVIDIA driver and NVRTC.
#
#   test/Runtime/run-gpu-backward-suite.sh <path/to/kiln> [--quick]
#
# Prints one line per case (errors of O/dQ/dK/dV) and a summary; exits 1 if
# any case fails.
set -u
KILN=${1:?usage: run-gpu-backward-suite.sh <kiln> [--quick]}
QUICK=${2:-}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
EX=$ROOT/examples
TL=$ROOT/test/Runtime/Inputs/causal_top_left.mlir
. "$ROOT/test/Runtime/suite-lib.sh"

seqs="1 17 128 1000"
[ "$QUICK" = "--quick" ] && seqs="17 1000"
for dtype in bf16 fp16; do
  for hd in 64 128 256; do
    for n in $seqs; do
      run "bwd plain $dtype hd=$hd N=$n" "$EX/plain.mlir" --backward --dtype $dtype --head-dim $hd --batch 2 --heads 3 --seqlen $n --seed $n
      run "bwd causal-bottom-right $dtype hd=$hd N=$n" "$EX/causal.mlir" --backward --dtype $dtype --head-dim $hd --batch 2 --heads 3 --seqlen $n --seed $((n + 1))
      run "bwd causal-top-left $dtype hd=$hd N=$n atomic" "$TL" --backward --bwd-schedule atomic --dtype $dtype --head-dim $hd --batch 2 --heads 3 --seqlen $n --seed $((n + 2))
    done
  done
done
if [ "$QUICK" != "--quick" ]; then
  for hd in 64 128; do
    for sched in two-kernel atomic; do
      run "bwd plain hd=$hd N=4096 $sched" "$EX/plain.mlir" --backward --bwd-schedule $sched --head-dim $hd --seqlen 4096 --heads 2
      run "bwd causal hd=$hd N=4096 $sched" "$EX/causal.mlir" --backward --bwd-schedule $sched --head-dim $hd --seqlen 4096 --heads 2
    done
  done
fi
# Lq != Lk both ways, both alignments, both schedules.
for pair in "100 1000" "1000 100" "1 700" "700 17"; do
  set -- $pair
  for sched in two-kernel atomic; do
    run "bwd plain Lq=$1 Lk=$2 $sched" "$EX/plain.mlir" --backward --bwd-schedule $sched --seqlen $1 --seqlen-kv $2 --heads 2
    run "bwd causal-bottom-right Lq=$1 Lk=$2 $sched" "$EX/causal.mlir" --backward --bwd-schedule $sched --seqlen $1 --seqlen-kv $2 --heads 2
    run "bwd causal-top-left Lq=$1 Lk=$2 $sched" "$TL" --backward --bwd-schedule $sched --seqlen $1 --seqlen-kv $2 --heads 2
  done
done
# B*H up to 64, non-contiguous rows.
run "bwd plain B*H=64 hd=128" "$EX/plain.mlir" --backward --batch 4 --heads 16 --seqlen 256 --head-dim 128
run "bwd block_sparse_document" "$EX/block_sparse_document.mlir" --backward --seqlen 1500 --heads 3
run "bwd block_sparse_document atomic random 30%" "$EX/block_sparse_document.mlir" --backward --bwd-schedule atomic --block-density 0.3 --seqlen 1000 --seqlen-kv 1300 --heads 2
run "bwd alibi block-sparse capture gradients" "$EX/alibi.mlir" --backward --block-sparse 64 --capture-gradients --seqlen 500 --heads 2
run "bwd varlen_causal" "$EX/varlen_causal.mlir" --backward --seqlens 700,0,1,300 --heads 3
run "bwd varlen_causal atomic Lk != Lq" "$EX/varlen_causal.mlir" --backward --bwd-schedule atomic --seqlens 200,50 --seqlens-kv 90,400 --heads 2
run "bwd causal padded rows fp16" "$EX/causal.mlir" --backward --seqlen 333 --seqlen-kv 500 --pad 8 --dtype fp16
run "bwd plain padded rows hd=128 atomic" "$EX/plain.mlir" --backward --bwd-schedule atomic --seqlen 777 --heads 3 --pad 8 --head-dim 128
# Every DSL example (score_mod gradients, captures, mask_mod, GQA), both
# schedules.
for ex in softcap causal_softcap sliding_window alibi document_mask gqa_causal; do
  heads=3; [ $ex = gqa_causal ] && heads=8
  for sched in two-kernel atomic; do
    run "bwd $ex N=1000 $sched" "$EX/$ex.mlir" --backward --bwd-schedule $sched --seqlen 1000 --heads $heads --batch 2
  done
  run "bwd $ex Lq=500 Lk=900 fp16 hd=128" "$EX/$ex.mlir" --backward --seqlen 500 --seqlen-kv 900 --heads $heads --dtype fp16 --head-dim 128
done
summary
