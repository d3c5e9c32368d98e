//===- RunOptions.cpp - the `kiln run` command line -----------------------===//

#include "compiler/Driver/RunOptions.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <map>

namespace kiln::driver {

SymbolValues kvSplitsOverride(const RunOptions &o) {
  if (o.kvSplits > 0)
    return {{"kv_splits", o.kvSplits}};
  return {};
}

const char *runUsage() {
  return R"(usage: kiln run <variant.mlir> [options]
  --backend cpu|cuda        where to run (default cpu)
  --variant NAME            which attn.attention to run when the file has several
  --batch B --heads H       problem sizes (default 1, 1)
  --seqlen N                query length (default 128)
  --seqlen-kv M             key/value length (default: N)
  --head-dim D              qk head dim (default: the variant's); also v's when
                            the variant's two dims are equal
  --head-dim-v DV           v head dim
  --dtype bf16|fp16         element type (default: the variant's)
  --dropout P               the variant with dropout_p = P (a fresh seed and
                            offset per run; the reference applies the same
                            mask)
  --dropout-bits 16|8       the width of the dropout's uniforms (dropout_bits;
                            8: half the Philox calls, p rounded to a multiple
                            of 1/256)
  --pad P                   P extra elements after each row (non-contiguous layout)
  --seqlens L0,L1,...       varlen: one packed batch of sequences of these
                            query lengths (FlashAttention's cu_seqlens layout;
                            0 allowed); --batch and --seqlen are implied
  --seqlens-kv M0,M1,...    varlen: their key lengths (default: --seqlens)
  --varlen                  the varlen layout without --seqlens (kiln compile;
                            kiln run: --batch sequences of --seqlen rows)
  --block-sparse QB[,KB]    the variant block-sparse in blocks of QB
                            queries x KB keys (default KB = QB): the lists of
                            partial and full KV blocks are made from its mask
  --build-block-mask        block-sparse: run the generated program that builds
                            the lists from the mask (instead of attention) and
                            compare them with the driver's
  --block-density P         block-sparse: lists of random blocks instead, each
                            block listed with probability P (partial or full)
  --page-size P             forward: K and V in a paged KV cache of P keys per
                            page (block table, ragged per-sequence lengths up
                            to the KV length, pages in shuffled order)
  --check                   compare with the float64 reference, exit 1 on mismatch
  --backward                also run the backward kernels on a random dO and, with
                            --check, compare dQ, dK, dV; cuda: also checks that
                            the two-kernel schedule is bit-identical across
                            runs and times the backward with --repeats
  --bwd-schedule S          auto (default: on sm_90a the atomic schedule at 128
                            keys per dK/dV CTA where it measured faster: D =
                            64 and 128, not GQA without group steps or over
                            block-sparse lists, varlen, windows or
                            deterministic capture gradients;
                            two-kernel elsewhere, at 128 keys per dK/dV CTA
                            at D = 128 with the producer and keys by
                            queries, but for varlen, windows, split dK/dV
                            and block masks of other than 128-key blocks),
                            two-kernel (deterministic: the same bits in every
                            run), atomic (one kernel, atomic dQ) or
                            deterministic (the same bits in every run, the
                            faster way: atomic with --ordered-dq at
                            D >= 128 where auto takes atomic, but for GQA;
                            two-kernel elsewhere)
  --keys-by-queries         backward: the dK/dV kernel on S^T = K Q^T, P^T and
  --no-keys-by-queries      dS^T from registers, or on S = Q K^T with P and dS
                            through shared memory (default: keys by queries
                            where a TMA producer takes the kernel, sm_90a)
  --key-block K             backward: keys per dK/dV program (default 0: BN,
                            or the schedule's choice above; 64 the ablation
                            of the two-kernel schedule's 128 at D = 128);
                            128 on sm_90a (keys by queries): two consumer
                            warpgroups share each Q and dO tile (atomic: and
                            split each dQ share by columns)
  --capture-gradients       backward: also the gradients of the float captures
                            the score_mod reads (checked against float64
                            central differences)
  --deterministic-capture-gradients
                            backward: capture gradients bit for bit equal in
                            every run (fixed-point sums; cuda --check also
                            compares two runs)
  --ordered-dq              backward: the atomic schedule's dQ shares added in
                            a fixed order, bit for bit equal in every run
                            (cuda --check also compares two runs; not for
                            windows, block-sparse lists or varlen)
  --split-dkdv              backward: dK and dV in two kernels, each
  --no-split-dkdv           recomputing S, or in one (default: two on sm_90a
                            where Dqk + Dv > 256, one elsewhere)
  --tolerance T             relative L2 error allowed (default 1e-2)
  --seed S                  random inputs' seed (default 0)
  --block-m BM --block-n BN tile sizes (cpu default 64, 64; cuda: chosen for the
                            head dim and shared memory, 16 query rows per warp)
  --no-split                one masked loop per kernel instead of unmasked full
                            blocks and masked partial ones, forward and backward
                            (ablation of the block split)
  --no-group-steps          backward: GQA's dK/dV kernel loops over the group's
                            heads around its Q blocks' loops (ablation: no
                            producer warpgroup for it)
  --no-split-kv             forward: no KV split across programs for small grids
                            (ablation of tile-split-kv)
  --kv-splits S             forward: run with S KV splits instead of the plan's
                            run-time choice (S = 1: unsplit)
  --decode-rows R           forward: also build a kernel of R-row query blocks,
                            run when Lq <= R (default 64; 0: none, ablation)
  --wide-decode-rows R      forward, GQA packing: also build a decode kernel of
                            R packed rows (query heads x queries), run instead
                            when Lq * group > decode rows (default 128; 0:
                            none, the ablation)
  --wide-decode-keys K      forward, GQA packing: the wide decode kernel's
                            keys per KV step (default 0: the variant's block-n)
  --short-rows R            forward, masked variants: also build a kernel of
  --short-keys K            R-row query blocks (when below the chosen ones),
                            run when Lk <= K instead of the prefill kernel
                            (default 128 and 4096; --short-rows 0: none,
                            the ablation)
  --no-gqa-pack             forward, GQA: one decode program per query head
                            instead of per KV group (ablation)
  --no-visible-below        forward: evaluate a mask_mod `kv < X || ...` (X per
                            program, e.g. a verify step's cache length) on
                            every block, not only above X (ablation)
  --no-branch-masked-steps  forward: the last partial key block in a loop of
                            its own instead of the full loop's branch
                            (ablation)
  --no-static-max           forward: the running row maximum even where a
                            score_mod's results are bounded (soft-capping)
                            (ablation)
  --no-narrow-band-tiles    forward, cuda: the head dim's tiles for a narrow
                            diagonal band (a sliding window) instead of
                            64 x 64 tiles, two CTAs per SM (ablation)
  --branch-masked-backward-steps
                            backward: the dK/dV kernel's partial Q steps in
                            its full loop, masked in a branch (a third less
                            compile time, 1-5% slower; opt-in)
  --no-split-position-differences
                            mods convert kv - q to float per element instead
                            of kv and q per column and row (ablation)
  --no-reassociate-low-rank cuda: the mods' arithmetic in its written order
                            instead of per-row and per-column terms combined
                            first (tile-reassociate-low-rank; ablation)
  --reassociate-low-rank    cpu: run tile-reassociate-low-rank too (off by
                            default there), to check its arithmetic
  --no-row-terms-after-max  with that rewrite: a score's per-row terms added
                            to every element instead of to the rows' maxima
                            (tile-row-terms-after-max; ablation)
  --no-hoist-invariant-reads
                            both back ends: a mod's capture reads at the
                            program's indices left in every KV step
                            (tile-hoist-invariant-reads; ablation)
  --backward-mod-rewrites-min-head-dim D
                            cuda backward: tile-row-terms-after-max and
                            tile-hoist-invariant-reads only on kernels with
                            at least D query columns (default 128: both
                            measured slower in ALiBi's D = 64 backward)
  --no-scale-after-max      both back ends: the rows' maxima of the scaled
                            scores instead of before the softmax's positive
                            constant scale (one multiply per element more,
                            the same maxima; tile-scale-after-max; ablation)
  --no-column-bounds        both back ends: a mask's position compares per
                            element as written instead of one test of the
                            column index against per-row bounds
                            (tile-column-bounds; ablation)
  --one-sided-bounds-elements E
                            both back ends: compares bounded on one side
                            (causal's diagonal and partial block) merged
                            into one per-row bound in KV loops carrying at
                            most E f32 accumulator elements (default 16384,
                            128 x 128; 0: never, the ablation)
  --lazy-rescale            both back ends, forward: the softmax's reference
                            maximum moves only when a step's maximum exceeds
                            it by more than 8 (log2 units: a factor of 2^8),
                            instead of in every step
                            (tile-lazy-rescale; opt-in)
  --skip-unit-scales        cuda forward: a warp whose rows' correction
                            factors are all 1 skips rescaling its
                            accumulator (tgpu-skip-unit-scales; opt-in)
  --combine-by-rows         forward, split KV: the combine kernel over blocks
                            of 64 query rows, one split per step, in every
                            run (ablation)
  --combine-by-splits       forward, split KV: the combine kernel over one
                            query row and blocks of 16 splits in every run
                            (ablation; by default a run with many query rows
                            and few splits merges by rows)
  --no-overlap-copies       cuda: stage K and V one after the other (ablation)
  --no-prefetch             cuda: no load of the next step's K under P*V (ablation)
  --no-fast-math            cuda: precise tanhf / expf in the mods (ablation)
  --no-philox-lane-pairs    cuda: the dK/dV kernel's dropout bits at one
                            Philox call per 4 elements in each lane instead
                            of one per 8 shared by lane pairs (ablation)
  --no-warpgroup-mma        cuda sm_90a: mma.sync instead of wgmma (ablation)
  --no-double-buffer        cuda sm_90a: one K and one V buffer, K of the next
                            step prefetched under P*V (ablation)
  --no-warp-specialize      cuda sm_90a: cp.async copies by every warp instead
                            of TMA from a producer warpgroup (ablation)
  --ping-pong               cuda sm_90a: consumer warpgroups take turns issuing
                            their products
  --no-persistent           cuda sm_90a forward: one CTA per query block
  --persistent              instead of one per slot of the GPU, each drawing
                            query blocks from a counter while the producer
                            loads the next one during the epilogue (ablation;
                            default persistent)
  --no-double-tile-buffers  cuda sm_90a, persistent: one copy of Q, loaded for
                            the next tile once the consumers are past their
                            last step (ablation; default two used by turns
                            where the shared memory holds them)
  --ring-stages S           cuda sm_90a: the most stages per TMA ring (default
                            2; more only where the shared memory holds them
                            at the same CTAs per multiprocessor)
  --max-ctas-per-sm C       cuda sm_90a: the most CTAs per multiprocessor of a
                            kernel with one consumer warpgroup (default 2;
                            more only where the registers hold its steps'
                            tiles; measured no faster overall)
  --no-ring-vectors         cuda sm_90a backward: each step's LSE and D loaded
                            by the consumers instead of copied by the
                            producer beside Q (tgpu-warp-specialize
                            ring-vectors; ablation)
  --producer-bits           cuda sm_90a: the dropout's keep bits drawn by
                            the producer warpgroup into shared memory
                            instead of by each consumer thread
                            (tgpu-warp-specialize producer-bits; measured
                            slower, opt-in)
  --producer-bits-share S   cuda sm_90a: with --producer-bits (implied), the
                            producer draws the first S eighths (1 to 8,
                            default 8) of each consumer thread's keep bits,
                            the consumers the rest
  --no-load-ahead           cuda sm_90a backward: each step's LSE and D loaded
                            where used instead of a step ahead
                            (tgpu-load-ahead; ablation)
  --persistent-backward     cuda sm_90a: the backward's kernels persistent too
                            (opt-in)
  --no-longest-first        cuda forward: every causal kernel's query blocks
                            in grid order (GQA's instead of the longest of
                            the whole grid first, the others' instead of
                            the wave chunks; tgpu-longest-first; ablation)
  --no-wave-chunks          cuda forward: causal query blocks (not GQA's) in
                            grid order instead of the longest first within
                            chunks of about a wave (tgpu-longest-first
                            wave-chunks; ablation)
  --no-backward-longest-first
                            cuda backward: the dK/dV kernels' key blocks in
                            grid order instead of longest first within
                            chunks of about a wave (causal; tgpu-longest-first
                            wave-chunks; ablation)
  --pipeline-products       cuda sm_90a: overlap each step's softmax with the
                            previous step's P*V (off by default: slower today)
  --no-overlap-products     cuda sm_90a: each product waited for in turn (the
                            backward's dP issued only after P's exponentials,
                            dropout's bits drawn after S completed; ablation)
  --no-combine-before-waits cuda sm_90a: the backward's dS factors multiplied
                            as written (softcap's 1 - t^2 live across dP's
                            wait; ablation)
  --no-async-accumulate     cuda sm_90a: the backward waits for dV and dK
                            right after issuing each, instead of at the end
                            of the step (ablation)
  --no-bulk-reductions      cuda sm_90a: the atomic backward adds dQ with
                            red.global from registers instead of bulk
                            reductions from shared memory (ablation)
  --no-core-order           cuda sm_90a: the atomic backward's dQ
                            accumulator kept row-major (its shares added by
                            TMA tensor reductions) instead of in mma
                            core-block order (ablation)
  --no-defer-flush          cuda sm_90a: the atomic backward's dQ share
                            fenced and added in the step that computed it
                            instead of during the next step (ablation)
  --no-producer-reductions  cuda sm_90a: the atomic backward's dQ share
                            added by bulk reductions each consumer warp
                            issues, through one staging buffer, instead of
                            by the producer's warp through two (ablation)
  --no-deferred-turns       cuda sm_90a, --ordered-dq on causal: each turn
                            passed on right after its add, the producer
                            waiting for the sums, instead of at its next
                            turn (ablation)
  --no-tma-stores           cuda sm_90a: the output tile (forward; dK, dV and a
                            bf16 dQ in the backward) stored from registers by
                            every lane instead of staged in shared memory and
                            stored by TMA (ablation)
  --no-overlap-launches     cuda sm_90a forward: each kernel launched after
                            the previous one completes, without
                            griddepcontrol (tgpu-overlap-launches; ablation)
  --overlap-backward-launches
                            cuda sm_90a backward: the backward's kernels too
                            start while the previous one finishes (opt-in:
                            measured 1-7% slower at D = 128)
  --no-stage-in-q           cuda sm_90a: a persistent kernel without room for
                            the output's staging keeps its per-lane stores
                            instead of staging in the tile's own copy of Q
                            (ablation; the D = 128 prefill kernel)
  --no-pack-lhs-first       cuda sm_90a: pack P into wgmma's fragments at each
                            k16 step instead of before the products' fence
                            (ptxas then inserts warpgroup.arrive; ablation)
  --order-before-waits      cuda sm_90a: keep the work overlapping asynchronous
                            products before their wait for ptxas too, not only
                            the CUDA front end (opt-in: measured slower)
  --repeats R               cuda: time R launches after the run (TFLOP/s)
  --arch sm_80|sm_90a       target of -emit=tgpu|cuda (default sm_90a)
  --nonce TEXT              kiln compile: define one unused device variable
                            named after TEXT, so the source is new to every
                            cache (cold compile times, bench/bench_compile.py)
  -emit=attn|tile|llvm      print the IR of a stage instead of running
  -emit=tgpu|cuda           print the GPU schedule or the CUDA C++ (no GPU needed)
)";
}

namespace {

bool parseInt(const std::string &text, int64_t &out) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0')
    return false;
  out = v;
  return true;
}

bool parseDouble(const std::string &text, double &out) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0')
    return false;
  out = v;
  return true;
}

} // namespace

ParsedRunOptions parseRunOptions(const std::vector<std::string> &args) {
  ParsedRunOptions result;
  RunOptions &o = result.options;
  auto fail = [&](std::string message) {
    if (result.error.empty())
      result.error = std::move(message);
  };

  // Integer flags, each with the smallest value it accepts.
  struct IntFlag {
    int64_t *target;
    int64_t min;
  };
  std::map<std::string, IntFlag> ints = {
      {"batch", {&o.batch, 1}},
      {"heads", {&o.heads, 1}},
      {"seqlen", {&o.seqQ, 1}},
      {"seqlen-kv", {&o.seqKV, 1}},
      {"head-dim", {&o.headDim, 1}},
      {"head-dim-v", {&o.headDimV, 1}},
      {"pad", {&o.pad, 0}},
      {"block-m", {&o.blockM, 1}},
      {"block-n", {&o.blockN, 1}},
      {"repeats", {&o.repeats, 0}},
      {"kv-splits", {&o.kvSplits, 1}},
      {"decode-rows", {&o.decodeRows, 0}},
      {"wide-decode-rows", {&o.wideDecodeRows, 0}},
      {"wide-decode-keys", {&o.wideDecodeKeys, 0}},
      {"short-rows", {&o.shortRows, 0}},
      {"short-keys", {&o.shortKeys, 0}},
      {"one-sided-bounds-elements", {&o.oneSidedBoundsElements, 0}},
      {"backward-mod-rewrites-min-head-dim",
       {&o.backwardModRewritesMinHeadDim, 0}},
      {"page-size", {&o.pageSize, 1}},
      {"key-block", {&o.keyBlock, 0}},
      {"ring-stages", {&o.ringStages, 1}},
      {"max-ctas-per-sm", {&o.maxCtasPerSM, 1}},
      {"producer-bits-share", {&o.producerBitsShare, 1}}};

  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') {
      if (!o.input.empty())
        fail("unexpected argument '" + arg + "' (the input is '" + o.input +
             "')");
      o.input = arg;
      continue;
    }
    std::string name = arg.substr(arg[1] == '-' ? 2 : 1);
    std::string value;
    bool hasValue = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      hasValue = true;
    }
    auto takeValue = [&]() -> bool {
      if (hasValue)
        return true;
      if (i + 1 >= args.size()) {
        fail("--" + name + " needs a value");
        return false;
      }
      value = args[++i];
      return true;
    };

    bool isSwitch =
        name == "help" || name == "h" || name == "check" ||
        name == "no-split" || name == "no-split-kv" || name == "no-gqa-pack" ||
        name == "no-group-steps" || name == "combine-by-rows" ||
        name == "combine-by-splits" || name == "no-visible-below" ||
        name == "no-split-position-differences" ||
        name == "no-branch-masked-steps" || name == "no-static-max" ||
        name == "no-narrow-band-tiles" ||
        name == "branch-masked-backward-steps" ||
        name == "no-reassociate-low-rank" || name == "reassociate-low-rank" ||
        name == "no-row-terms-after-max" ||
        name == "no-hoist-invariant-reads" || name == "scale-after-max" ||
        name == "no-scale-after-max" || name == "no-column-bounds" ||
        name == "lazy-rescale" || name == "skip-unit-scales" ||
        name == "no-overlap-copies" || name == "no-prefetch" ||
        name == "no-fast-math" || name == "no-philox-lane-pairs" ||
        name == "no-warpgroup-mma" || name == "no-double-buffer" ||
        name == "pipeline-products" || name == "no-warp-specialize" ||
        name == "no-longest-first" || name == "no-backward-longest-first" ||
        name == "no-wave-chunks" || name == "persistent" ||
        name == "no-persistent" || name == "no-double-tile-buffers" ||
        name == "persistent-backward" || name == "ping-pong" ||
        name == "no-overlap-products" || name == "no-overlap-launches" ||
        name == "backward" || name == "overlap-backward-launches" ||
        name == "no-combine-before-waits" || name == "no-pack-lhs-first" ||
        name == "no-bulk-reductions" || name == "no-core-order" ||
        name == "no-defer-flush" || name == "no-producer-reductions" ||
        name == "no-deferred-turns" || name == "no-tma-stores" ||
        name == "no-stage-in-q" || name == "no-load-ahead" ||
        name == "no-async-accumulate" || name == "no-ring-vectors" ||
        name == "producer-bits" || name == "order-before-waits" ||
        name == "keys-by-queries" || name == "no-keys-by-queries" ||
        name == "split-dkdv" || name == "no-split-dkdv" ||
        name == "capture-gradients" ||
        name == "deterministic-capture-gradients" || name == "varlen" ||
        name == "ordered-dq" || name == "build-block-mask";
    if (isSwitch && hasValue) {
      fail("--" + name + " takes no value, got '" + value + "'");
    } else if (name == "help" || name == "h") {
      result.help = true;
    } else if (name == "check") {
      o.check = true;
    } else if (name == "backward") {
      o.backward = true;
    } else if (name == "no-split") {
      o.splitMaskedBlocks = false;
    } else if (name == "no-group-steps") {
      o.groupSteps = false;
    } else if (name == "no-split-kv") {
      o.splitKv = false;
    } else if (name == "no-gqa-pack") {
      o.gqaPack = false;
    } else if (name == "combine-by-rows") {
      o.combineByRows = true;
    } else if (name == "combine-by-splits") {
      o.combineBySplits = true;
    } else if (name == "no-visible-below") {
      o.visibleBelow = false;
    } else if (name == "no-branch-masked-steps") {
      o.branchMaskedSteps = false;
    } else if (name == "no-static-max") {
      o.staticMax = false;
    } else if (name == "no-narrow-band-tiles") {
      o.narrowBandTiles = false;
    } else if (name == "branch-masked-backward-steps") {
      o.branchMaskedBackwardSteps = true;
    } else if (name == "no-split-position-differences") {
      o.splitPositionDifferences = false;
    } else if (name == "no-reassociate-low-rank") {
      o.reassociateLowRank = false;
    } else if (name == "reassociate-low-rank") {
      o.cpuReassociateLowRank = true;
    } else if (name == "no-row-terms-after-max") {
      o.rowTermsAfterMax = false;
    } else if (name == "no-hoist-invariant-reads") {
      o.hoistInvariantReads = false;
    } else if (name == "scale-after-max") {
      o.scaleAfterMax = true;
    } else if (name == "no-scale-after-max") {
      o.scaleAfterMax = false;
    } else if (name == "no-column-bounds") {
      o.columnBounds = false;
    } else if (name == "lazy-rescale") {
      o.lazyRescale = true;
    } else if (name == "skip-unit-scales") {
      o.skipUnitScales = true;
    } else if (name == "varlen") {
      o.varlen = true;
    } else if (name == "build-block-mask") {
      o.buildBlockMask = true;
    } else if (name == "capture-gradients") {
      o.captureGradients = true;
    } else if (name == "deterministic-capture-gradients") {
      o.captureGradients = true;
      o.deterministicCaptureGradients = true;
    } else if (name == "ordered-dq") {
      o.orderedDq = true;
    } else if (name == "keys-by-queries") {
      o.keysByQueries = KeysByQueries::On;
    } else if (name == "no-keys-by-queries") {
      o.keysByQueries = KeysByQueries::Off;
    } else if (name == "split-dkdv") {
      o.splitDkdv = SplitDkDv::On;
    } else if (name == "no-split-dkdv") {
      o.splitDkdv = SplitDkDv::Off;
    } else if (name == "no-overlap-copies") {
      o.overlapCopies = false;
    } else if (name == "no-prefetch") {
      o.prefetchNextStep = false;
    } else if (name == "no-fast-math") {
      o.fastMath = false;
    } else if (name == "no-philox-lane-pairs") {
      o.philoxLanePairs = false;
    } else if (name == "no-warpgroup-mma") {
      o.warpgroupMma = false;
    } else if (name == "no-double-buffer") {
      o.doubleBuffer = false;
    } else if (name == "pipeline-products") {
      o.pipelineProducts = true;
    } else if (name == "no-warp-specialize") {
      o.warpSpecialize = false;
    } else if (name == "no-longest-first") {
      o.longestFirst = false;
    } else if (name == "no-backward-longest-first") {
      o.backwardLongestFirst = false;
    } else if (name == "no-wave-chunks") {
      o.waveChunks = false;
    } else if (name == "ping-pong") {
      o.pingPong = true;
    } else if (name == "persistent") {
      o.persistent = true;
    } else if (name == "no-persistent") {
      o.persistent = false;
    } else if (name == "no-double-tile-buffers") {
      o.doubleTileBuffers = false;
    } else if (name == "no-load-ahead") {
      o.loadAhead = false;
    } else if (name == "no-ring-vectors") {
      o.ringVectors = false;
    } else if (name == "producer-bits") {
      o.producerBits = true;
    } else if (name == "persistent-backward") {
      o.persistentBackward = true;
    } else if (name == "no-overlap-products") {
      o.overlapProducts = false;
    } else if (name == "no-combine-before-waits") {
      o.combineBeforeWaits = false;
    } else if (name == "no-bulk-reductions") {
      o.bulkReductions = false;
    } else if (name == "no-core-order") {
      o.coreOrder = false;
    } else if (name == "no-defer-flush") {
      o.deferFlush = false;
    } else if (name == "no-producer-reductions") {
      o.producerReductions = false;
    } else if (name == "no-deferred-turns") {
      o.deferredTurns = false;
    } else if (name == "no-tma-stores") {
      o.tmaStores = false;
    } else if (name == "no-overlap-launches") {
      o.overlapLaunches = false;
    } else if (name == "overlap-backward-launches") {
      o.overlapBackwardLaunches = true;
    } else if (name == "no-stage-in-q") {
      o.stageInQ = false;
    } else if (name == "no-async-accumulate") {
      o.asyncAccumulate = false;
    } else if (name == "no-pack-lhs-first") {
      o.packLhsFirst = false;
    } else if (name == "order-before-waits") {
      o.orderBeforeWaits = true;
    } else if (auto it = ints.find(name); it != ints.end()) {
      if (!takeValue())
        break;
      int64_t v = 0;
      if (!parseInt(value, v) || v < it->second.min) {
        fail("--" + name + " must be an integer >= " +
             std::to_string(it->second.min) + ", got '" + value + "'");
        break;
      }
      *it->second.target = v;
      o.blockMGiven |= name == "block-m";
      o.blockNGiven |= name == "block-n";
      if (name == "producer-bits-share") {
        if (v > 8)
          fail("--producer-bits-share must be 1 to 8 eighths, got '" + value +
               "'");
        o.producerBits = true;
      }
    } else if (name == "seed") {
      if (!takeValue())
        break;
      int64_t v;
      if (!parseInt(value, v) || v < 0)
        fail("--seed must be a non-negative integer, got '" + value + "'");
      else
        o.seed = static_cast<uint64_t>(v);
    } else if (name == "seqlens" || name == "seqlens-kv") {
      if (!takeValue())
        break;
      std::vector<int64_t> &lens = name == "seqlens" ? o.seqLens : o.seqLensKV;
      lens.clear();
      llvm::SmallVector<llvm::StringRef> items;
      llvm::StringRef(value).split(items, ',');
      for (llvm::StringRef item : items) {
        int64_t v;
        if (!parseInt(item.str(), v) || v < 0) {
          fail("--" + name +
               " must be a comma-separated list of lengths >= 0, got '" +
               value + "'");
          break;
        }
        lens.push_back(v);
      }
    } else if (name == "block-sparse") {
      if (!takeValue())
        break;
      auto [qs, ks] = llvm::StringRef(value).split(',');
      if (!parseInt(qs.str(), o.blockSparseQ) || o.blockSparseQ <= 0 ||
          (!ks.empty() &&
           (!parseInt(ks.str(), o.blockSparseKV) || o.blockSparseKV <= 0)))
        fail("--block-sparse must be QB or QB,KB (positive), got '" + value +
             "'");
      if (ks.empty())
        o.blockSparseKV = o.blockSparseQ;
    } else if (name == "block-density") {
      if (!takeValue())
        break;
      if (!parseDouble(value, o.blockDensity) ||
          !(o.blockDensity > 0.0 && o.blockDensity <= 1.0))
        fail("--block-density must be in (0, 1], got '" + value + "'");
    } else if (name == "dropout") {
      if (!takeValue())
        break;
      if (!parseDouble(value, o.dropoutP) ||
          !(o.dropoutP >= 0.0 && o.dropoutP < 1.0))
        fail("--dropout must be a probability in [0, 1), got '" + value + "'");
    } else if (name == "dropout-bits") {
      if (!takeValue())
        break;
      if (value == "16" || value == "8")
        o.dropoutBits = std::stoi(value);
      else
        fail("--dropout-bits must be 16 or 8, got '" + value + "'");
    } else if (name == "tolerance") {
      if (!takeValue())
        break;
      if (!parseDouble(value, o.tolerance) || !(o.tolerance > 0.0))
        fail("--tolerance must be a positive number, got '" + value + "'");
    } else if (name == "backend") {
      if (!takeValue())
        break;
      if (value != "cpu" && value != "cuda")
        fail("--backend must be cpu or cuda, got '" + value + "'");
      o.backend = value;
    } else if (name == "dtype") {
      if (!takeValue())
        break;
      if (value != "bf16" && value != "fp16")
        fail("--dtype must be bf16 or fp16, got '" + value + "'");
      o.dtype = value;
    } else if (name == "bwd-schedule") {
      if (!takeValue())
        break;
      if (value != "auto" && value != "two-kernel" && value != "atomic" &&
          value != "deterministic")
        fail("--bwd-schedule must be auto, two-kernel, atomic or "
             "deterministic, got '" +
             value + "'");
      o.backwardSchedule = value;
    } else if (name == "nonce") {
      if (!takeValue())
        break;
      bool identifier = !value.empty();
      for (char c : value)
        identifier &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
      if (!identifier)
        fail("--nonce must be letters, digits and '_', got '" + value + "'");
      o.nonce = value;
    } else if (name == "o") {
      if (!takeValue())
        break;
      o.output = value;
    } else if (name == "arch") {
      if (!takeValue())
        break;
      if (value != "sm_80" && value != "sm_90a")
        fail("--arch must be sm_80 or sm_90a, got '" + value + "'");
      o.arch = value;
    } else if (name == "variant") {
      if (!takeValue())
        break;
      o.variant = value;
    } else if (name == "emit") {
      if (!takeValue())
        break;
      if (value == "attn")
        o.emit = EmitStage::Attn;
      else if (value == "tile")
        o.emit = EmitStage::Tile;
      else if (value == "llvm")
        o.emit = EmitStage::LLVM;
      else if (value == "tgpu")
        o.emit = EmitStage::TGPU;
      else if (value == "cuda")
        o.emit = EmitStage::CUDA;
      else
        fail("-emit must be attn, tile, llvm, tgpu or cuda, got '" + value +
             "'");
    } else {
      fail("unknown option '" + arg + "' (see kiln run --help)");
    }
  }
  o.varlen |= !o.seqLens.empty();
  if (o.seqLensKV.size() && o.seqLensKV.size() != o.seqLens.size())
    fail("--seqlens-kv needs --seqlens with as many lengths, got " +
         std::to_string(o.seqLensKV.size()) + " and " +
         std::to_string(o.seqLens.size()));
  if (!result.help && result.error.empty() && o.input.empty())
    fail("missing input: kiln run <variant.mlir> [options]");
  return result;
}

} // namespace kiln::driver
