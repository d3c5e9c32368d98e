//===- Pipelines.h - Kiln's named pass pipelines ----------------*- C++ -*-===//

#ifndef KILN_COMPILER_PIPELINES_PIPELINES_H
#define KILN_COMPILER_PIPELINES_PIPELINES_H

#include "compiler/Pipelines/KeysByQueries.h"
#include "compiler/Pipelines/SplitDkDv.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace kiln {

struct ForwardPipelineOptions
    : public mlir::PassPipelineOptions<ForwardPipelineOptions> {
  Option<int64_t> blockM{*this, "block-m",
                         llvm::cl::desc("Query rows per program"),
                         llvm::cl::init(64)};
  Option<int64_t> blockN{*this, "block-n", llvm::cl::desc("Keys per KV step"),
                         llvm::cl::init(64)};
  Option<bool> splitMaskedBlocks{
      *this, "split-masked-blocks",
      llvm::cl::desc("Skip the per-element mask on fully visible KV blocks"),
      llvm::cl::init(true)};
  Option<bool> groupSteps{
      *this, "group-steps",
      llvm::cl::desc("Backward: GQA's dK/dV kernel in one loop per range of "
                     "Q blocks over the group's heads "
                     "(convert-attn-to-tile-backward group-steps)"),
      llvm::cl::init(true)};
  Option<bool> producer{
      *this, "producer",
      llvm::cl::desc("Backward: the GPU schedule gives the kernels a TMA "
                     "producer warpgroup (convert-attn-to-tile-backward "
                     "producer)"),
      llvm::cl::init(false)};
  Option<bool> forward{*this, "forward",
                       llvm::cl::desc("Lower the forward kernel (off: only "
                                      "the backward kernels, with backward)"),
                       llvm::cl::init(true)};
  Option<bool> backward{
      *this, "backward",
      llvm::cl::desc("Also derive the backward kernels (dQ, dK, dV)"),
      llvm::cl::init(false)};
  Option<std::string> backwardSchedule{
      *this, "backward-schedule",
      llvm::cl::desc("two-kernel (deterministic), atomic (atomic dQ), auto "
                     "(atomic where attn-choose-tiles marked the op) or "
                     "deterministic (atomic with ordered dQ adds where they "
                     "measured faster, two-kernel elsewhere)"),
      llvm::cl::init("two-kernel")};
  Option<bool> keysByQueries{
      *this, "keys-by-queries",
      llvm::cl::desc("Backward dK/dV kernel on S^T = K Q^T "
                     "(convert-attn-to-tile-backward keys-by-queries)"),
      llvm::cl::init(false)};
  Option<int64_t> keyBlock{
      *this, "key-block",
      llvm::cl::desc("Backward: keys per dK/dV program (0: block-n; "
                     "convert-attn-to-tile-backward key-block)"),
      llvm::cl::init(0)};
  Option<int64_t> splitDkdvAbove{
      *this, "split-dkdv-above",
      llvm::cl::desc("Backward: dK and dV in two kernels when Dqk + Dv "
                     "exceeds this (-1: never; "
                     "convert-attn-to-tile-backward split-dkdv-above)"),
      llvm::cl::init(-1)};
  Option<bool> captureGradients{
      *this, "capture-gradients",
      llvm::cl::desc("Backward: also the gradients of the float captures "
                     "the score_mod reads (convert-attn-to-tile-backward "
                     "capture-gradients)"),
      llvm::cl::init(false)};
  Option<bool> deterministicCaptureGradients{
      *this, "deterministic-capture-gradients",
      llvm::cl::desc("Backward: capture gradients the same bit for bit in "
                     "every run (fixed-point sums; "
                     "convert-attn-to-tile-backward "
                     "deterministic-capture-gradients)"),
      llvm::cl::init(false)};
  Option<bool> orderedDq{
      *this, "ordered-dq",
      llvm::cl::desc("Backward: the atomic schedule's dQ shares added in "
                     "a fixed order, the same bit for bit in every run "
                     "(convert-attn-to-tile-backward ordered-dq)"),
      llvm::cl::init(false)};
  Option<bool> splitKv{
      *this, "split-kv",
      llvm::cl::desc("Forward: split the KV range across programs when the "
                     "grid cannot fill the device, with a combine kernel "
                     "(tile-split-kv; kv_splits chosen at run time)"),
      llvm::cl::init(true)};
  Option<bool> splitPositionDifferences{
      *this, "split-position-differences",
      llvm::cl::desc("Mods convert positions to float before subtracting "
                     "them (attn-split-position-differences)"),
      llvm::cl::init(true)};
  Option<bool> columnBounds{
      *this, "column-bounds",
      llvm::cl::desc("A mask's position compares folded into one test of "
                     "the column index against per-row bounds "
                     "(tile-column-bounds; exact)"),
      llvm::cl::init(true)};
  Option<int64_t> oneSidedBoundsElements{
      *this, "one-sided-bounds-elements",
      llvm::cl::desc("tile-column-bounds merges compares bounded on one "
                     "side (causal) in loops carrying at most this many f32 "
                     "accumulator elements (one-sided-elements; 0: never)"),
      llvm::cl::init(16384)};
  Option<bool> scaleAfterMax{
      *this, "scale-after-max",
      llvm::cl::desc("Rows' maxima taken before the softmax's positive "
                     "constant scale (tile-scale-after-max; exact)"),
      llvm::cl::init(true)};
  Option<bool> lazyRescale{
      *this, "lazy-rescale",
      llvm::cl::desc("The online softmax's reference maximum moves only when "
                     "a step's maximum exceeds it by more than 8 (log2 "
                     "units; tile-lazy-rescale; opt-in)"),
      llvm::cl::init(false)};
  Option<bool> reassociateLowRank{
      *this, "reassociate-low-rank",
      llvm::cl::desc("Per-row and per-column terms of the mods combine "
                     "before per-element ones (tile-reassociate-low-rank; "
                     "floating-point reassociation: CUDA under fast math)"),
      llvm::cl::init(false)};
  Option<bool> rowTermsAfterMax{
      *this, "row-terms-after-max",
      llvm::cl::desc("With reassociate-low-rank: a score's per-row terms "
                     "added to the rows' maxima and subtracted maxima, not "
                     "to every element (tile-row-terms-after-max)"),
      llvm::cl::init(true)};
  Option<bool> hoistInvariantReads{
      *this, "hoist-invariant-reads",
      llvm::cl::desc("A loop's memory reads at invariant indices moved out "
                     "of it where it writes no memory "
                     "(tile-hoist-invariant-reads)"),
      llvm::cl::init(true)};
  Option<int64_t> modRewritesMinHeadDim{
      *this, "mod-rewrites-min-head-dim",
      llvm::cl::desc("tile-row-terms-after-max and tile-hoist-invariant-reads "
                     "leave kernels whose queries' head dim is below this "
                     "alone (their min-head-dim; 0: none)"),
      llvm::cl::init(0)};
  Option<bool> visibleBelow{
      *this, "visible-below",
      llvm::cl::desc("Forward: a mask_mod `kv < X || ...` with X uniform per "
                     "program runs its blocks below X unmasked "
                     "(convert-attn-to-tile visible-below)"),
      llvm::cl::init(true)};
  Option<bool> branchMaskedSteps{
      *this, "branch-masked-steps",
      llvm::cl::desc("Forward: the last (partial) key block runs in the full "
                     "loop, its mask in a branch, where no band bound but "
                     "the key count limits the keys "
                     "(convert-attn-to-tile branch-masked-steps)"),
      llvm::cl::init(true)};
  Option<bool> staticMax{
      *this, "static-max",
      llvm::cl::desc("Forward: a score_mod bounded to a narrow interval "
                     "(soft-capping) takes its top as every row's maximum "
                     "(convert-attn-to-tile static-max)"),
      llvm::cl::init(true)};
  Option<int64_t> staticMaxFlopPerSfu{
      *this, "static-max-flop-per-sfu",
      llvm::cl::desc("With static-max: only where a score's products take at "
                     "least this many FLOP per SFU op (0: everywhere; the "
                     "CUDA pipeline sets the device's ratio)"),
      llvm::cl::init(0)};
  Option<bool> branchMaskedBackwardSteps{
      *this, "branch-masked-backward-steps",
      llvm::cl::desc("Backward: the dK/dV kernel's partial Q steps run in its "
                     "full loop, masked in a branch (opt-in; "
                     "convert-attn-to-tile-backward branch-masked-steps)"),
      llvm::cl::init(false)};
  Option<bool> combineByRows{
      *this, "combine-by-rows",
      llvm::cl::desc("Forward: the split-KV combine kernel over blocks of "
                     "query rows, one split per step, in every run "
                     "(tile-split-kv combine-splits=0; ablation)"),
      llvm::cl::init(false)};
  Option<bool> combineBySplits{
      *this, "combine-by-splits",
      llvm::cl::desc("Forward: the split-KV combine kernel over one query "
                     "row and blocks of splits in every run, never the "
                     "by-rows one (tile-split-kv combine-rows-steps=0; "
                     "ablation)"),
      llvm::cl::init(false)};
  Option<bool> gqaPack{
      *this, "gqa-pack",
      llvm::cl::desc("Forward, GQA: the decode program's rows are (query, "
                     "head) pairs of one KV group, K/V read once per group "
                     "(convert-attn-to-tile gqa-pack)"),
      llvm::cl::init(true)};
  Option<int64_t> decodeRows{
      *this, "decode-rows",
      llvm::cl::desc("Forward: also lower a program with blocks of this many "
                     "query rows, run when seq_q is at most that "
                     "(convert-attn-to-tile decode-rows; 0: none)"),
      llvm::cl::init(64)};
  Option<int64_t> wideDecodeRows{
      *this, "wide-decode-rows",
      llvm::cl::desc("Forward, GQA packing: also lower a decode program of "
                     "this many packed rows, run when seq_q * group exceeds "
                     "decode-rows (convert-attn-to-tile wide-decode-rows; "
                     "0: none)"),
      llvm::cl::init(128)};
  Option<int64_t> wideDecodeKeys{
      *this, "wide-decode-keys",
      llvm::cl::desc("Forward, GQA packing: keys per KV step of the wide "
                     "decode program (convert-attn-to-tile wide-decode-keys; "
                     "0: the chosen block-n)"),
      llvm::cl::init(0)};
  Option<int64_t> shortRows{
      *this, "short-rows",
      llvm::cl::desc("Forward, masked variants: also lower a program with "
                     "blocks of this many query rows, run when seq_kv is at "
                     "most short-keys (convert-attn-to-tile short-rows; 0: "
                     "none)"),
      llvm::cl::init(0)};
  Option<int64_t> shortKeys{
      *this, "short-keys",
      llvm::cl::desc("Forward: the most keys for the short-rows program"),
      llvm::cl::init(4096)};
};

/// attn -> tile: the forward tile program of every attn.attention.
void buildForwardTilePipeline(mlir::OpPassManager &pm,
                              const ForwardPipelineOptions &options);

/// tile -> LLVM dialect for the CPU JIT.
void buildCPULoweringPipeline(mlir::OpPassManager &pm);

/// attn -> LLVM dialect: both of the above.
void buildCPUForwardPipeline(mlir::OpPassManager &pm,
                             const ForwardPipelineOptions &options);

struct CUDAPipelineOptions
    : public mlir::PassPipelineOptions<CUDAPipelineOptions> {
  Option<std::string> arch{*this, "arch",
                           llvm::cl::desc("Target: sm_80 or sm_90a"),
                           llvm::cl::init("sm_90a")};
  Option<int64_t> sharedMemoryBytes{
      *this, "shared-memory-bytes",
      llvm::cl::desc("Shared memory per CTA on the device (0: the arch's)"),
      llvm::cl::init(0)};
  Option<int64_t> blockM{
      *this, "block-m",
      llvm::cl::desc("Query rows per CTA, 16 per warp (0: chosen)"),
      llvm::cl::init(0)};
  Option<int64_t> blockN{*this, "block-n",
                         llvm::cl::desc("Keys per KV step (0: chosen)"),
                         llvm::cl::init(0)};
  Option<bool> narrowBandTiles{
      *this, "narrow-band-tiles",
      llvm::cl::desc("Forward, sm_90a: 64 x 64 tiles (two CTAs per SM) for "
                     "a narrow diagonal band such as a sliding window "
                     "(attn-choose-tiles narrow-band-tiles)"),
      llvm::cl::init(true)};
  Option<bool> overlapCopies{
      *this, "overlap-copies",
      llvm::cl::desc("Issue V's copy with K's (tgpu-overlap-copies)"),
      llvm::cl::init(true)};
  Option<bool> prefetchNextStep{
      *this, "prefetch-next-step",
      llvm::cl::desc("Load step j+1's K under step j's P*V "
                     "(tgpu-prefetch-next-step)"),
      llvm::cl::init(true)};
  Option<std::string> backwardSchedule{
      *this, "backward-schedule",
      llvm::cl::desc("kiln-cuda-bwd-pipeline: two-kernel (deterministic), "
                     "atomic (atomic dQ), auto (atomic at the keys "
                     "attn-choose-tiles chose where it measured faster, "
                     "with the TMA producer; two-kernel elsewhere) or "
                     "deterministic (the same bits in every run: atomic "
                     "with ordered dQ adds where auto takes atomic at "
                     "D >= 128 with the producer, not GQA; two-kernel "
                     "elsewhere)"),
      llvm::cl::init("auto")};
  Option<KeysByQueries> keysByQueries{
      *this, "keys-by-queries",
      llvm::cl::desc("kiln-cuda-bwd-pipeline: the dK/dV kernel on "
                     "S^T = K Q^T, P^T and dS^T from registers"),
      llvm::cl::init(KeysByQueries::Auto),
      llvm::cl::values(
          clEnumValN(KeysByQueries::Auto, "auto",
                     "where a TMA producer then takes the kernel (sm_90a)"),
          clEnumValN(KeysByQueries::On, "true", "always"),
          clEnumValN(KeysByQueries::Off, "false",
                     "never: P and dS through shared memory, transposed"))};
  Option<int64_t> keyBlock{
      *this, "key-block",
      llvm::cl::desc("kiln-cuda-bwd-pipeline: keys per dK/dV CTA (0: "
                     "block-n, or the atomic schedule's chosen keys where "
                     "auto picks it). 128 on sm_90a, keys by queries, gives "
                     "two consumer warpgroups sharing each Q and dO tile"),
      llvm::cl::init(0)};
  Option<bool> captureGradients{
      *this, "capture-gradients",
      llvm::cl::desc("kiln-cuda-bwd-pipeline: also the gradients of the "
                     "float captures the score_mod reads"),
      llvm::cl::init(false)};
  Option<bool> deterministicCaptureGradients{
      *this, "deterministic-capture-gradients",
      llvm::cl::desc("kiln-cuda-bwd-pipeline: capture gradients the same "
                     "bit for bit in every run (fixed-point sums)"),
      llvm::cl::init(false)};
  Option<bool> orderedDq{
      *this, "ordered-dq",
      llvm::cl::desc("kiln-cuda-bwd-pipeline: the atomic schedule's dQ "
                     "shares added in a fixed order (tgpu-ordered-adds), "
                     "the same bit for bit in every run"),
      llvm::cl::init(false)};
  Option<SplitDkDv> splitDkdv{
      *this, "split-dkdv",
      llvm::cl::desc("kiln-cuda-bwd-pipeline: dK and dV in two kernels, "
                     "each recomputing S"),
      llvm::cl::init(SplitDkDv::Auto),
      llvm::cl::values(
          clEnumValN(SplitDkDv::Auto, "auto",
                     "on sm_90a with wgmma where Dqk + Dv > 256 (the two "
                     "accumulators would spill)"),
          clEnumValN(SplitDkDv::On, "true", "always"),
          clEnumValN(SplitDkDv::Off, "false", "never"))};
  Option<bool> fastMath{
      *this, "fast-math",
      llvm::cl::desc("math.tanh / math.exp on the hardware approximations "
                     "(convert-tile-to-tgpu fast-math)"),
      llvm::cl::init(true)};
  Option<bool> philoxLanePairs{
      *this, "philox-lane-pairs",
      llvm::cl::desc("key-row dropout bits at one Philox call per 8 elements, "
                     "shared by lane pairs (convert-tile-to-tgpu "
                     "philox-lane-pairs; false: the ablation)"),
      llvm::cl::init(true)};
  Option<bool> warpgroupMma{
      *this, "warpgroup-mma",
      llvm::cl::desc("sm_90a: products on wgmma from swizzled shared "
                     "tiles (tgpu-warpgroup-mma)"),
      llvm::cl::init(true)};
  Option<bool> doubleBuffer{
      *this, "double-buffer",
      llvm::cl::desc("sm_90a forward: load the next KV step's K and V into "
                     "twin buffers during this one (tgpu-double-buffer, "
                     "instead of tgpu-prefetch-next-step)"),
      llvm::cl::init(true)};
  Option<bool> pipelineProducts{
      *this, "pipeline-products",
      llvm::cl::desc("sm_90a forward: issue the previous step's P*V after "
                     "this step's Q*K^T and overlap it with the softmax "
                     "(tgpu-pipeline-products; needs warpgroup-mma and "
                     "double-buffer; off: measured slower, see "
                     "docs/performance.md)"),
      llvm::cl::init(false)};
  Option<bool> longestFirst{
      *this, "longest-first",
      llvm::cl::desc("forward: number the query blocks of a GQA kernel whose "
                     "work grows along them (causal) so that the longest of "
                     "the whole grid launch first (tgpu-longest-first)"),
      llvm::cl::init(true)};
  Option<bool> waveChunks{
      *this, "wave-chunks",
      llvm::cl::desc("forward, with longest-first: number the query blocks of "
                     "the other kernels whose work grows along them (causal) "
                     "longest first within chunks of about a wave of (head, "
                     "batch) pairs (tgpu-longest-first wave-chunks)"),
      llvm::cl::init(true)};
  Option<bool> backwardLongestFirst{
      *this, "backward-longest-first",
      llvm::cl::desc("backward: number the key blocks of a dK/dV kernel whose "
                     "work shrinks along them (causal) longest first within "
                     "chunks of about a wave of (head, batch) pairs "
                     "(tgpu-longest-first wave-chunks)"),
      llvm::cl::init(true)};
  Option<bool> persistent{
      *this, "persistent",
      llvm::cl::desc("sm_90a forward: CTAs loop over the grid's tiles, as "
                     "many as the GPU holds, the producer loading the next "
                     "tile during the epilogue (tgpu-warp-specialize "
                     "persistent=true)"),
      llvm::cl::init(true)};
  Option<bool> doubleTileBuffers{
      *this, "double-tile-buffers",
      llvm::cl::desc("sm_90a, persistent kernels: two copies of each buffer "
                     "loaded once per tile (Q), used by turns where the "
                     "shared memory holds them, so that the next tile's "
                     "loads while this one runs (tgpu-warp-specialize "
                     "double-tile-buffers=true)"),
      llvm::cl::init(true)};
  Option<bool> ringVectors{
      *this, "ring-vectors",
      llvm::cl::desc("sm_90a, warp-specialized kernels: each step's "
                     "per-query vectors (the backward's LSE and D) copied "
                     "by the producer beside the ring's tile "
                     "(tgpu-warp-specialize ring-vectors=true)"),
      llvm::cl::init(true)};
  Option<bool> producerBits{
      *this, "producer-bits",
      llvm::cl::desc("sm_90a, warp-specialized kernels: the dropout's keep "
                     "bits drawn by the producer warpgroup beside the "
                     "ring's tile (tgpu-warp-specialize producer-bits=true; "
                     "opt-in, measured slower)"),
      llvm::cl::init(false)};
  Option<bool> loadAhead{
      *this, "load-ahead",
      llvm::cl::desc("sm_90a backward, warp-specialized kernels: each "
                     "step's LSE and D (read-only vectors) loaded one step "
                     "ahead (tgpu-load-ahead)"),
      llvm::cl::init(true)};
  Option<int64_t> ringStages{
      *this, "ring-stages",
      llvm::cl::desc("sm_90a, warp-specialized kernels: the most stages per "
                     "TMA ring (tgpu-warp-specialize stages); the pass takes "
                     "fewer where the shared memory, or the CTAs per "
                     "multiprocessor, would not hold them; the room they "
                     "take is then missing for later passes' staging "
                     "(tgpu-bulk-reductions, tgpu-tma-stores fall back)"),
      llvm::cl::init(2)};
  Option<int64_t> producerBitsShare{
      *this, "producer-bits-share",
      llvm::cl::desc("sm_90a, with producer-bits: the eighths (1 to 8) of "
                     "each consumer thread's keep bits the producer draws "
                     "(tgpu-warp-specialize producer-bits-share)"),
      llvm::cl::init(8)};
  Option<int64_t> maxCtasPerSM{
      *this, "max-ctas-per-sm",
      llvm::cl::desc("sm_90a, warp-specialized kernels of one consumer "
                     "warpgroup: the most CTAs per multiprocessor "
                     "(tgpu-warp-specialize max-ctas-per-sm); more than two "
                     "only where the registers hold the steps' tiles"),
      llvm::cl::init(2)};
  Option<bool> persistentBackward{
      *this, "persistent-backward",
      llvm::cl::desc("sm_90a backward: the dQ and dK/dV kernels' CTAs loop "
                     "over their tiles, drawn from a counter, as the "
                     "forward's (tgpu-warp-specialize persistent=true; "
                     "opt-in)"),
      llvm::cl::init(false)};
  Option<bool> pingPong{
      *this, "ping-pong",
      llvm::cl::desc("sm_90a forward: consumer warpgroups take turns issuing "
                     "their products (tgpu-ping-pong, after "
                     "tgpu-warp-specialize)"),
      llvm::cl::init(false)};
  Option<bool> groupSteps{
      *this, "group-steps",
      llvm::cl::desc("kiln-cuda-bwd-pipeline: GQA's dK/dV kernel in one loop "
                     "per range of Q blocks over the group's heads, which a "
                     "producer warpgroup can feed (false: a loop over the "
                     "heads; ablation)"),
      llvm::cl::init(true)};
  Option<bool> splitMaskedBlocks{
      *this, "split-masked-blocks",
      llvm::cl::desc("Split each KV (and the backward's query) loop into "
                     "unmasked full blocks and masked partial ones where the "
                     "band is exact (false: one masked loop; ablation)"),
      llvm::cl::init(true)};
  Option<bool> packLhsFirst{
      *this, "pack-lhs-first",
      llvm::cl::desc("sm_90a: pack a register A operand (P) into wgmma's "
                     "fragments before the products' fence (false: at each "
                     "k16 step, where ptxas inserts warpgroup.arrive; "
                     "ablation)"),
      llvm::cl::init(true)};
  Option<bool> orderBeforeWaits{
      *this, "order-before-waits",
      llvm::cl::desc("sm_90a: keep the work computed under asynchronous "
                     "products before their wait in ptxas's schedule too, "
                     "not only the CUDA front end's (opt-in: measured "
                     "slower)"),
      llvm::cl::init(false)};
  Option<bool> overlapProducts{
      *this, "overlap-products",
      llvm::cl::desc("sm_90a: issue a product that needs nothing "
                     "computed since the previous one right after it, both "
                     "asynchronous, and wait for a product at its first use "
                     "(tgpu-overlap-products: the backward's dP under the "
                     "exponentials of P, dropout's bits under S)"),
      llvm::cl::init(true)};
  Option<bool> combineBeforeWaits{
      *this, "combine-before-waits",
      llvm::cl::desc("sm_90a, fast math: multiply the factors ready before "
                     "a product's wait first and narrow what then dies early "
                     "(tgpu-combine-before-waits: softcap's dS factor beside "
                     "P, not across dP's wait)"),
      llvm::cl::init(true)};
  Option<bool> asyncAccumulate{
      *this, "async-accumulate",
      llvm::cl::desc("sm_90a: issue a loop's accumulating products (the "
                     "backward's dV, dK) asynchronously and wait for them at "
                     "the loop's yield, when other work follows them "
                     "(tgpu-overlap-products async-accumulate)"),
      llvm::cl::init(true)};
  Option<bool> bulkReductions{
      *this, "bulk-reductions",
      llvm::cl::desc("sm_90a: the atomic backward's dQ adds staged in "
                     "shared memory and sent by bulk reductions "
                     "(tgpu-bulk-reductions) where the staging costs no CTA "
                     "per multiprocessor"),
      llvm::cl::init(true)};
  Option<bool> coreOrder{
      *this, "core-order",
      llvm::cl::desc("sm_90a: the atomic backward's dQ accumulator kept in "
                     "mma core-block order, so that a warp's share is one "
                     "contiguous run (tgpu-bulk-reductions core-order)"),
      llvm::cl::init(true)};
  Option<bool> deferFlush{
      *this, "defer-flush",
      llvm::cl::desc("sm_90a: with core-order, a step's dQ share fenced and "
                     "added during the next step (tgpu-bulk-reductions "
                     "defer-flush)"),
      llvm::cl::init(true)};
  Option<bool> producerReductions{
      *this, "producer-reductions",
      llvm::cl::desc("sm_90a: with core-order, the consumers stage each "
                     "step's dQ share into two buffers by turns and the "
                     "producer's warp issues its bulk reductions "
                     "(tgpu-bulk-reductions producer-reductions)"),
      llvm::cl::init(true)};
  Option<bool> deferredTurns{
      *this, "deferred-turns",
      llvm::cl::desc("ordered-dq with turns in arrival order (causal): each "
                     "turn passed on at the producer's next turn_wait "
                     "instead of right after its add "
                     "(tgpu-ordered-adds deferred-signal)"),
      llvm::cl::init(true)};
  Option<bool> overlapLaunches{
      *this, "overlap-launches",
      llvm::cl::desc("sm_90a forward: each kernel starts while the stream's "
                     "previous one finishes, and waits for it before its "
                     "first global access (tgpu-overlap-launches: "
                     "programmatic dependent launch)"),
      llvm::cl::init(true)};
  Option<bool> overlapBackwardLaunches{
      *this, "overlap-backward-launches",
      llvm::cl::desc("sm_90a backward: the same for the backward's kernels "
                     "(opt-in: measured slower)"),
      llvm::cl::init(false)};
  Option<bool> tmaStores{
      *this, "tma-stores",
      llvm::cl::desc("sm_90a: the consumers' output tiles (the forward's; "
                     "dK, dV and a bf16 dQ) staged in shared memory and "
                     "stored by TMA (tgpu-tma-stores) where the staging "
                     "costs no CTA per multiprocessor"),
      llvm::cl::init(true)};
  Option<bool> stageInQ{
      *this, "stage-in-q",
      llvm::cl::desc("sm_90a: where no staging fits a persistent kernel, "
                     "tgpu-tma-stores stages the output in the tile's own "
                     "copy of Q, freed for the producer after the stores "
                     "(tgpu-tma-stores stage-in-own-copy)"),
      llvm::cl::init(true)};
  Option<bool> warpSpecialize{
      *this, "warp-specialize",
      llvm::cl::desc("sm_90a: TMA loads from a producer warpgroup "
                     "into an mbarrier ring (tgpu-warp-specialize, before "
                     "tgpu-double-buffer, which then takes the kernels it "
                     "left); needs warpgroup-mma"),
      llvm::cl::init(true)};
  Option<bool> splitKv{
      *this, "split-kv",
      llvm::cl::desc("Forward: split the KV range across CTAs when the grid "
                     "cannot fill the device, with a combine kernel "
                     "(tile-split-kv; kv_splits chosen at run time)"),
      llvm::cl::init(true)};
  Option<bool> splitPositionDifferences{
      *this, "split-position-differences",
      llvm::cl::desc("Mods convert positions to float before subtracting "
                     "them (attn-split-position-differences)"),
      llvm::cl::init(true)};
  Option<bool> columnBounds{
      *this, "column-bounds",
      llvm::cl::desc("A mask's position compares folded into one test of "
                     "the column index against per-row bounds "
                     "(tile-column-bounds; exact)"),
      llvm::cl::init(true)};
  Option<int64_t> oneSidedBoundsElements{
      *this, "one-sided-bounds-elements",
      llvm::cl::desc("tile-column-bounds merges compares bounded on one "
                     "side (causal) in loops carrying at most this many f32 "
                     "accumulator elements (one-sided-elements; 0: never)"),
      llvm::cl::init(16384)};
  Option<bool> scaleAfterMax{
      *this, "scale-after-max",
      llvm::cl::desc("Rows' maxima taken before the softmax's positive "
                     "constant scale (tile-scale-after-max; exact)"),
      llvm::cl::init(true)};
  Option<bool> lazyRescale{
      *this, "lazy-rescale",
      llvm::cl::desc("Forward: the online softmax's reference maximum moves "
                     "only when a step's maximum exceeds it by more than 8 "
                     "(log2 units; tile-lazy-rescale; opt-in: measured -11% "
                     "to +3%)"),
      llvm::cl::init(false)};
  Option<bool> skipUnitScales{
      *this, "skip-unit-scales",
      llvm::cl::desc("Forward: a warp whose rows' correction factors are all "
                     "1 skips rescaling its accumulator "
                     "(tgpu-skip-unit-scales; opt-in)"),
      llvm::cl::init(false)};
  Option<bool> reassociateLowRank{
      *this, "reassociate-low-rank",
      llvm::cl::desc("Under fast math: per-row and per-column terms of the "
                     "mods combine before per-element ones "
                     "(tile-reassociate-low-rank)"),
      llvm::cl::init(true)};
  Option<bool> rowTermsAfterMax{
      *this, "row-terms-after-max",
      llvm::cl::desc("With reassociate-low-rank: a score's per-row terms "
                     "added to the rows' maxima and subtracted maxima, not "
                     "to every element (tile-row-terms-after-max)"),
      llvm::cl::init(true)};
  Option<bool> hoistInvariantReads{
      *this, "hoist-invariant-reads",
      llvm::cl::desc("A loop's memory reads at invariant indices moved out "
                     "of it where it writes no memory "
                     "(tile-hoist-invariant-reads)"),
      llvm::cl::init(true)};
  Option<int64_t> backwardModRewritesMinHeadDim{
      *this, "backward-mod-rewrites-min-head-dim",
      llvm::cl::desc("kiln-cuda-bwd-pipeline: tile-row-terms-after-max and "
                     "tile-hoist-invariant-reads only on kernels whose "
                     "queries have at least this many columns (both "
                     "measured slower in ALiBi's D = 64 backward)"),
      llvm::cl::init(128)};
  Option<bool> visibleBelow{
      *this, "visible-below",
      llvm::cl::desc("Forward: a mask_mod `kv < X || ...` with X uniform per "
                     "program runs its blocks below X unmasked "
                     "(convert-attn-to-tile visible-below)"),
      llvm::cl::init(true)};
  Option<bool> branchMaskedSteps{
      *this, "branch-masked-steps",
      llvm::cl::desc("Forward: the last (partial) key block runs in the full "
                     "loop, its mask in a branch, where no band bound but "
                     "the key count limits the keys "
                     "(convert-attn-to-tile branch-masked-steps)"),
      llvm::cl::init(true)};
  Option<bool> staticMax{
      *this, "static-max",
      llvm::cl::desc("Forward: a score_mod bounded to a narrow interval "
                     "(soft-capping) takes its top as every row's maximum "
                     "(convert-attn-to-tile static-max)"),
      llvm::cl::init(true)};
  Option<bool> branchMaskedBackwardSteps{
      *this, "branch-masked-backward-steps",
      llvm::cl::desc("Backward: the dK/dV kernel's partial Q steps run in its "
                     "full loop, masked in a branch (opt-in; "
                     "convert-attn-to-tile-backward branch-masked-steps)"),
      llvm::cl::init(false)};
  Option<bool> combineByRows{
      *this, "combine-by-rows",
      llvm::cl::desc("Forward: the split-KV combine kernel over blocks of "
                     "query rows, one split per step, in every run "
                     "(tile-split-kv combine-splits=0; ablation)"),
      llvm::cl::init(false)};
  Option<bool> combineBySplits{
      *this, "combine-by-splits",
      llvm::cl::desc("Forward: the split-KV combine kernel over one query "
                     "row and blocks of splits in every run, never the "
                     "by-rows one (tile-split-kv combine-rows-steps=0; "
                     "ablation)"),
      llvm::cl::init(false)};
  Option<bool> gqaPack{
      *this, "gqa-pack",
      llvm::cl::desc("Forward, GQA: the decode program's rows are (query, "
                     "head) pairs of one KV group, K/V read once per group "
                     "(convert-attn-to-tile gqa-pack)"),
      llvm::cl::init(true)};
  Option<int64_t> decodeRows{
      *this, "decode-rows",
      llvm::cl::desc("Forward: also compile a kernel with blocks of this "
                     "many query rows, launched when seq_q is at most that "
                     "(decoding, verify steps); 0: none"),
      llvm::cl::init(64)};
  Option<int64_t> wideDecodeRows{
      *this, "wide-decode-rows",
      llvm::cl::desc("Forward, GQA packing: also compile a decode kernel of "
                     "this many packed rows (query heads x queries), "
                     "launched when seq_q * group exceeds decode-rows (a "
                     "verify step's many packed rows); 0: none"),
      llvm::cl::init(128)};
  Option<int64_t> wideDecodeKeys{
      *this, "wide-decode-keys",
      llvm::cl::desc("Forward, GQA packing: keys per KV step of the wide "
                     "decode program (convert-attn-to-tile wide-decode-keys; "
                     "0: the chosen block-n)"),
      llvm::cl::init(0)};
  Option<int64_t> shortRows{
      *this, "short-rows",
      llvm::cl::desc("Forward, masked variants: also compile a kernel with "
                     "blocks of this many query rows (when below the chosen "
                     "ones), launched when seq_kv is at most short-keys: "
                     "their tiles' masked edge steps weigh less and unequal "
                     "tiles spread more evenly; 0: none"),
      llvm::cl::init(128)};
  Option<int64_t> shortKeys{
      *this, "short-keys",
      llvm::cl::desc("Forward: the most keys for the short-rows kernel"),
      llvm::cl::init(4096)};
};

/// Tile sizes of the forward GPU schedule for a head dim and shared-memory
/// budget: the largest KV block that keeps Q, K and V in shared memory and
/// the accumulator in registers.
/// attn.attention -> scheduled tgpu kernels for `options.arch`, tiles
/// chosen from each variant's head dims and dtype (attn-choose-tiles).
void buildCUDAForwardPipeline(mlir::OpPassManager &pm,
                              const CUDAPipelineOptions &options);
void buildCUDABackwardPipeline(mlir::OpPassManager &pm,
                               const CUDAPipelineOptions &options);

void registerPipelines();

} // namespace kiln

#endif // KILN_COMPILER_PIPELINES_PIPELINES_H
