#!/usr/bin/env bash
# Assembles .device/ for bench/device-run-attention.sh (bench/bench_attention.py,
# the benchmark of issues 9 and 10): the runtime's shared library, the kiln
# binary (for the checks) and, compiled here (no GPU needed), the forward and
# backward specs of every benchmarked variant at D = 64, 128 and 256, the
# document mask's block-sparse programs and list builder, and at D = 128 the
# ablations: each spec compiled with one schedule decision switched off.
#   bash bench/prepare-attention.sh [build-dir] [head-dims]
# Environment: VARIANTS (the benchmarked variants, default all eight),
# ABLATIONS (the ablation names to compile, default all; " " for none),
# ABLATION_HDIMS (default 128), DOC_BLOCKS (the document mask's block-sparse
# programs on other blocks too, "QBxKB ...", default none).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
HDIMS=${2:-64 128 256}
D=.device
rm -rf "$D" && mkdir -p "$D/specs"
strip -o "$D/kiln" "$BUILD/bin/kiln" && gzip -f "$D/kiln"
cp "$BUILD/lib/libkiln_runtime.so" "$D/"
K="$BUILD/bin/kiln"
# (compile: bench/prepare-lib.sh; failed specs are listed in $D/failed and
# the benchmark leaves those rows out.)
. bench/prepare-lib.sh
VARIANTS=${VARIANTS:-plain causal softcap causal_softcap sliding_window alibi document_mask gqa_causal}
for hd in $HDIMS; do
  for v in $VARIANTS; do
    compile "${v}_hd$hd" $v --head-dim $hd &
    compile "${v}_hd$hd"_bwd $v --head-dim $hd --backward &
    wait
  done
  # The document mask as the benchmark runs it: block-sparse over lists that
  # the generated builder makes from the mask (beside the dense kernel above).
  case " $VARIANTS " in *" document_mask "*) ;; *) continue ;; esac
  compile document_mask_hd${hd}_bs128 document_mask --head-dim $hd --block-sparse 128 &
  compile document_mask_hd${hd}_bs128_bwd document_mask --head-dim $hd --block-sparse 128 --backward &
  compile document_mask_hd${hd}_bs128_build document_mask --head-dim $hd --block-sparse 128 --build-block-mask &
  wait
  # Other blocks (DOC_BLOCKS="128x64 64x64": bench_attention.py --doc-blocks).
  for blocks in ${DOC_BLOCKS:-}; do
    qb=${blocks%x*} kb=${blocks#*x}
    bs=bs${qb}x${kb}; [ "$qb" = "$kb" ] && bs=bs$qb
    compile document_mask_hd${hd}_$bs document_mask --head-dim $hd --block-sparse $qb,$kb &
    compile document_mask_hd${hd}_${bs}_bwd document_mask --head-dim $hd --block-sparse $qb,$kb --backward &
    compile document_mask_hd${hd}_${bs}_build document_mask --head-dim $hd --block-sparse $qb,$kb --build-block-mask &
    wait
  done
done
# Ablations at D = 128 (or $ABLATION_HDIMS), named as bench_attention.py's
# --ablations takes them: <variant>_hd<D>_<name> (forward) and
# <variant>_hd<D>_<name>_bwd (backward).
ablate() { # variant name fwd|bwd|both flags...
  local v=$1 name=$2 which=$3; shift 3
  if [ -n "${ABLATIONS+set}" ]; then
    case " $ABLATIONS " in *" $name "*) ;; *) return 0 ;; esac
  fi
  for hd in ${ABLATION_HDIMS:-128}; do
    [ $which != bwd ] && compile "${v}_hd${hd}_$name" $v --head-dim $hd "$@" &
    [ $which != fwd ] && compile "${v}_hd${hd}_${name}_bwd" $v --head-dim $hd --backward "$@" &
    wait
  done
}
for v in plain causal; do
  ablate $v mma both --no-warpgroup-mma          # mma.sync instead of wgmma
  ablate $v nows both --no-warp-specialize       # cp.async by every warp instead of a TMA producer
  ablate $v noov both --no-overlap-products      # each product waited for in turn
  ablate $v nosplit both --no-split              # one masked loop instead of full and partial blocks
  ablate $v nopersist fwd --no-persistent        # one CTA per query block
  ablate $v oneq fwd --no-double-tile-buffers    # one copy of Q per persistent CTA
  ablate $v twokernel bwd --bwd-schedule two-kernel # dQ in its own kernel, no atomics
  ablate $v nopdl both --no-overlap-launches     # each kernel only after the previous one completes
  ablate $v nokq bwd --no-keys-by-queries        # dK/dV kernel on S = Q K^T
  ablate $v noasync bwd --no-async-accumulate    # dV and dK waited for where issued
  ablate $v notmab bwd --no-tma-stores          # dK, dV (and a bf16 dQ) by per-lane stores
done
ablate causal noshort fwd --short-rows 0         # no 128-row program for short masked rows
ablate causal s64 fwd --short-rows 64          # a 64-row short program (two CTAs per SM) instead
for v in plain softcap alibi; do                 # the last partial key block in a loop of its own
  ablate $v nobranch fwd --no-branch-masked-steps
done
ablate plain branchbwd bwd --branch-masked-backward-steps # opt-in: partial Q steps in a branch
for v in softcap causal_softcap; do             # opt-in schedules for a softmax as long as the products:
  ablate $v pp fwd --pipeline-products          # the next step's Q K^T under this step's softmax
  ablate $v pingpong fwd --ping-pong            # the consumer warpgroups taking turns
done
for v in softcap causal_softcap; do             # a running row maximum for the capped scores
  ablate $v nostatic fwd --no-static-max        # instead of the cap as every row's maximum
done
ablate softcap precise both --no-fast-math       # precise tanhf in the score_mod
ablate causal_softcap precise both --no-fast-math
ablate alibi nosplitpos both --no-split-position-differences # kv - q per element
ablate gqa_causal nogroup bwd --no-group-steps   # dK/dV loops over the group's heads, no producer
for v in alibi softcap plain; do                 # the mods' arithmetic in its written order
  ablate $v noreassoc both --no-reassociate-low-rank
done
ablate alibi norowterms both --no-row-terms-after-max # the row's terms added per element
ablate alibi nohoist both --no-hoist-invariant-reads  # the slope read in every KV step
ablate alibi bwdrewrites bwd --backward-mod-rewrites-min-head-dim 0 # both in the backward below D = 128 too
for v in plain causal softcap alibi sliding_window; do # maxima of the scaled scores
  ablate $v noscalemax fwd --no-scale-after-max
done
for v in plain causal softcap causal_softcap; do # opt-in: the reference maximum in steps of 2^8
  ablate $v lazy fwd --lazy-rescale
  ablate $v lazyskip fwd --lazy-rescale --skip-unit-scales # and warps skip factors of 1
  ablate $v skip fwd --skip-unit-scales
done
for v in causal causal_softcap sliding_window gqa_causal; do # mask compares per element as written
  ablate $v nocb fwd --no-column-bounds
done
for v in causal causal_softcap gqa_causal; do # one-sided bounds (causal) compared as written everywhere
  ablate $v noos both --one-sided-bounds-elements 0
done
for v in plain causal sliding_window alibi; do   # output tiles stored by every lane
  ablate $v notma fwd --no-tma-stores
done
for v in plain causal softcap causal_softcap; do # the output staged nowhere where the 192-row prefill kernel has no room
  ablate $v noq fwd --no-stage-in-q              # (per-lane stores) instead of in the tile's own copy of Q
done
for v in plain causal; do                        # deeper TMA rings (tgpu-warp-specialize stages)
  ablate $v r3 both --ring-stages 3
  ablate $v r4 both --ring-stages 4
done
for v in plain causal softcap alibi gqa_causal; do # the backward's LSE and D loaded where used
  ablate $v nola bwd --no-load-ahead
done
for v in plain causal softcap alibi sliding_window gqa_causal; do # the LSE and D loaded by the consumers, not the producer
  ablate $v norv bwd --no-ring-vectors
done
for v in plain causal sliding_window; do # a third CTA per SM where the registers allow
  ablate $v c3 bwd --max-ctas-per-sm 3
done
for v in plain causal softcap gqa_causal; do # dQ's accumulator row-major, TMA tensor reductions
  ablate $v rowmajor bwd --no-core-order
done
for v in plain causal softcap alibi; do # each step's dQ share fenced and added in its own step
  ablate $v nodefer bwd --no-defer-flush
done
for v in plain causal softcap alibi gqa_causal; do # each step's dQ share added by the consumer warps, through one buffer
  ablate $v noprod bwd --no-producer-reductions
done
for v in softcap alibi; do                       # dQ in its own kernel, no atomics (as plain's and causal's above)
  ablate $v twokernel bwd --bwd-schedule two-kernel
done
for v in plain causal softcap sliding_window gqa_causal; do # the 128-key atomic schedule where it is not the default
  ablate $v atomic128 bwd --bwd-schedule atomic --key-block 128
done
for v in plain causal softcap alibi gqa_causal; do # the two-kernel schedule at 64 keys per dK/dV CTA (its D = 128 default: 128)
  ablate $v tk64 bwd --bwd-schedule two-kernel --key-block 64
done
ablate gqa_causal twokernel bwd --bwd-schedule two-kernel # the two-kernel schedule (GQA's default below D = 64 and where not fed)
for v in plain causal softcap alibi; do # dQ adds in key-block order (deterministic atomic schedule)
  ablate $v ordered bwd --ordered-dq
done
ablate causal orderedeager bwd --ordered-dq --no-deferred-turns # causal's turns passed on right after each add
for v in plain causal softcap causal_softcap alibi gqa_causal; do # the deterministic program (ordered dQ adds where they measured faster, two kernels elsewhere)
  ablate $v det bwd --bwd-schedule deterministic
done
for v in softcap causal_softcap alibi; do # a mod's dS factor multiplied as written, across dP's wait
  ablate $v nocbw bwd --no-combine-before-waits
  ablate $v twokernel bwd --bwd-schedule two-kernel
  ablate $v twokernelnocbw bwd --bwd-schedule two-kernel --no-combine-before-waits
done
ablate gqa_causal nolf both --no-longest-first   # query blocks in grid order, not the grid's longest first
for v in causal causal_softcap alibi; do # query blocks in grid order, not longest first
  ablate $v nowc fwd --no-wave-chunks             # in chunks of about a wave
done
for v in plain causal; do  # the dK/dV kernel's steps at 128 queries instead of 64 (D = 64:
  ablate $v m128 bwd --block-m 128 # plain without spills, causal 192 bytes)
done
ablate plain q64 bwd --block-m 64  # 64 queries where attn.atomic_query_block gives 128 (plain, D = 64)
for v in causal gqa_causal; do   # the dK/dV kernel's key blocks in grid order, not
  ablate $v nobwdlf bwd --no-backward-longest-first # longest first in chunks of about a wave
done
# Tile shapes beside the chosen ones (attn-choose-tiles' rule against a sweep).
# A narrow band's tiles (the sliding window: 129 keys per row): the head
# dim's tiles instead of 64 x 64 (attn-choose-tiles narrow-band-tiles), and
# two other shapes beside them.
ablate sliding_window nonarrow fwd --no-narrow-band-tiles
ablate sliding_window m64 fwd --block-m 64
ablate sliding_window m128n64 fwd --block-m 128 --block-n 64
for v in plain causal; do
  ablate $v n96 fwd --block-n 96                 # 96-key steps
  ablate $v n112 fwd --block-n 112               # 112-key steps
  ablate $v n160 fwd --block-n 160               # 160-key steps
  ablate $v m128n176 fwd --block-m 128 --block-n 176 # two consumer warpgroups, 176-key steps
done
[ -e "$D/failed" ] && echo "prepare-attention: $(wc -l < "$D/failed") specs failed (rows left out)" >&2
ls "$D/specs" | wc -l
du -sh "$D"
