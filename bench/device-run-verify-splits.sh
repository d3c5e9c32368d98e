#!/usr/bin/env bash
# One device call: bench/probe_verify_splits.py on the GQA tree-verify rows
# (8 / 32 / 64 drafts): the default decode program, 128-row decode blocks
# (`_d128`: --decode-rows 128 --block-m 192) and 64-key blocks (`_n64`:
# --block-n 64), each at the runtime's split count and at 1-4 splits, with
# each kernel's time per step. On a .device/ holding those specs
# (tree_verify_hd128{,_d128,_n64}.cubin.json).
set -u
. bench/device-env.sh
timeout 400 python3 bench/probe_verify_splits.py --lib "$LIB" --specs .device/specs "$@" 2>&1 \
  | grep -v Warn | tee "$OUT/probe-verify-splits.txt"
