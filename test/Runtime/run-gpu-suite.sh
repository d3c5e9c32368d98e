#!/usr/bin/env bash
# The GPU test suite: every case runs `kiln run --backend cuda --check`
# against the float64 reference (outputs poisoned first, fresh random inputs,
# fully masked rows must be exactly 0 / -inf, no NaN). Needs only the NVIDIA
# driver and CUDA 13's NVRTC on the host: no LLVM, no lit.
#
#   test/Runtime/run-gpu-suite.sh <path/to/kiln> [--quick] [libkiln_runtime.so]
#
# With the runtime library (and python3 with torch), it also checks that peak
# device memory grows linearly in N (test/Runtime/check_memory.py).
# Prints one line per case and a summary; exits 1 if any case fails.
set -u
KILN=${1:?usage: run-gpu-suite.sh <kiln> [--quick]}
QUICK=${2:-}
RUNTIME_LIB=${3:-}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
EX=$ROOT/examples
TL=$ROOT/test/Runtime/Inputs/causal_top_left.mlir
. "$ROOT/test/Runtime/suite-lib.sh"

seqs="1 17 128 1000 4096"
[ "$QUICK" = "--quick" ] && seqs="1 17 1000"
for dtype in bf16 fp16; do
  for hd in 64 128 256; do
    for n in $seqs; do
      b=2; h=3
      [ "$n" -ge 4096 ] && { b=1; h=2; }
      run "plain $dtype hd=$hd N=$n B=$b H=$h" "$EX/plain.mlir" --dtype $dtype --head-dim $hd --batch $b --heads $h --seqlen $n --seed $n
      run "causal-bottom-right $dtype hd=$hd N=$n" "$EX/causal.mlir" --dtype $dtype --head-dim $hd --batch $b --heads $h --seqlen $n --seed $((n + 1))
      run "causal-top-left $dtype hd=$hd N=$n" "$TL" --dtype $dtype --head-dim $hd --batch $b --heads $h --seqlen $n --seed $((n + 2))
    done
  done
done
if [ "$QUICK" != "--quick" ]; then
  for hd in 64 128; do
    run "plain bf16 hd=$hd N=16384" "$EX/plain.mlir" --head-dim $hd --seqlen 16384
    run "causal bf16 hd=$hd N=16384" "$EX/causal.mlir" --head-dim $hd --seqlen 16384
  done
fi
# Lq != Lk, both ways, with both alignments.
for pair in "100 1000" "1000 100" "1 4096" "4096 17"; do
  set -- $pair
  run "plain Lq=$1 Lk=$2" "$EX/plain.mlir" --seqlen $1 --seqlen-kv $2 --heads 2
  run "causal-bottom-right Lq=$1 Lk=$2" "$EX/causal.mlir" --seqlen $1 --seqlen-kv $2 --heads 2
  run "causal-top-left Lq=$1 Lk=$2" "$TL" --seqlen $1 --seqlen-kv $2 --heads 2
done
# B*H from 1 to 64.
run "plain B*H=1" "$EX/plain.mlir" --seqlen 300
run "plain B*H=64" "$EX/plain.mlir" --batch 4 --heads 16 --seqlen 256 --head-dim 128
run "causal B*H=64 fp16" "$EX/causal.mlir" --batch 8 --heads 8 --seqlen 200 --dtype fp16
# Non-contiguous layouts (rows padded by 8 elements).
run "plain padded rows" "$EX/plain.mlir" --seqlen 777 --heads 3 --pad 8 --head-dim 128
run "causal padded rows fp16" "$EX/causal.mlir" --seqlen 333 --seqlen-kv 500 --pad 8 --dtype fp16
# The DSL examples.
for ex in softcap causal_softcap sliding_window alibi document_mask gqa_causal; do
  heads=3; [ $ex = gqa_causal ] && heads=8
  for n in 17 1000; do
    run "$ex N=$n" "$EX/$ex.mlir" --seqlen $n --heads $heads --batch 2
  done
  run "$ex Lq=500 Lk=900 fp16" "$EX/$ex.mlir" --seqlen 500 --seqlen-kv 900 --heads $heads --dtype fp16
done
# Varlen packed batches: empty, one-row and long sequences, keys != queries.
run "varlen_causal 5 sequences" "$EX/varlen_causal.mlir" --seqlens 700,0,1,1300,64 --heads 3
run "varlen_causal Lk != Lq fp16" "$EX/varlen_causal.mlir" --seqlens 300,17 --seqlens-kv 900,40 --heads 2 --dtype fp16
run "block_sparse_document (lists from its mask)" "$EX/block_sparse_document.mlir" --seqlen 1500 --heads 3
run "causal block-sparse random 20% Lk != Lq" "$EX/causal.mlir" --block-sparse 128 --block-density 0.2 --seqlen 1000 --seqlen-kv 3000 --heads 2 --head-dim 128
run "gqa_causal block-sparse 64x256 fp16" "$EX/gqa_causal.mlir" --block-sparse 64,256 --block-density 0.5 --seqlen 777 --heads 8 --dtype fp16
run "causal varlen bottom-right GQA" "$EX/gqa_causal.mlir" --seqlens 333,1000,2 --seqlens-kv 500,1000,70 --heads 8
# Other schedules the pipeline can pick or ablate must be right too.
run "plain block-m 128 hd=256" "$EX/plain.mlir" --block-m 128 --head-dim 256 --seqlen 1000 --heads 2
run "causal block-m 128 Lq=700 Lk=1300" "$EX/causal.mlir" --block-m 128 --head-dim 128 --seqlen 700 --seqlen-kv 1300 --heads 2
run "sliding_window block-m 128 fp16" "$EX/sliding_window.mlir" --block-m 128 --seqlen 1500 --dtype fp16
run "alibi block-n 32" "$EX/alibi.mlir" --block-n 32 --seqlen 500 --heads 3
run "causal no-prefetch" "$EX/causal.mlir" --no-prefetch --seqlen 900 --heads 2
run "causal no-overlap-copies" "$EX/causal.mlir" --no-overlap-copies --seqlen 900 --heads 2
if [ -n "$RUNTIME_LIB" ]; then
  spec=$(mktemp -d)/plain.cubin
  if "$KILN" compile "$EX/plain.mlir" --head-dim 128 -o "$spec" > /dev/null &&
     out=$(python3 "$ROOT/test/Runtime/check_memory.py" "$RUNTIME_LIB" "$spec.json" 2>&1); then
    pass=$((pass + 1)); printf 'PASS  %s\n' "$out"
  else
    fail=$((fail + 1)); failed+=("memory linear in N"); printf 'FAIL  memory: %s\n' "$out"
  fi
fi
summary
