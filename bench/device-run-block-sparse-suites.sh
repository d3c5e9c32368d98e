#!/usr/bin/env bash
# One device call after bench/device-run-block-sparse.sh's .device/ (plus
# libkiln.so.gz): the GPU suites' block-sparse entries (forward and
# backward) and python/tests/gpu_check.py (the package on CUDA tensors,
# block_sparse_attention with FlexAttention's BlockMask among its checks).
set -u
OUT=${OUT:-/tmp/kiln-out}; mkdir -p /tmp/kiln-bin
gunzip -c .device/kiln.gz > /tmp/kiln-bin/kiln && chmod +x /tmp/kiln-bin/kiln
gunzip -c .device/libkiln.so.gz > /tmp/kiln-bin/libkiln.so
export KILN=/tmp/kiln-bin/kiln KILN_CACHE_DIR=/tmp/kiln-cache EX=examples
. test/Runtime/suite-lib.sh
{
grep -E '^run "(block_sparse|causal block-sparse|gqa_causal block-sparse)' test/Runtime/run-gpu-suite.sh
grep -E '^run "bwd (block_sparse|alibi block-sparse)' test/Runtime/run-gpu-backward-suite.sh
} > /tmp/entries.sh
. /tmp/entries.sh > $OUT/suite-block-sparse.txt 2>&1; summary >> $OUT/suite-block-sparse.txt
export KILN_LIBRARY=/tmp/kiln-bin/libkiln.so
python3 -m pip install -q --no-build-isolation --no-deps ./python > $OUT/pip.txt 2>&1 || tail -20 $OUT/pip.txt
timeout 400 python3 python/tests/gpu_check.py > $OUT/gpu-check.txt 2>&1
cat $OUT/suite-block-sparse.txt; grep -E "PASS|FAIL|block_sparse" $OUT/gpu-check.txt | tail -30
