//===- RunOptions.h - the `kiln run` command line ---------------*- C++ -*-===//
//
// Parsed without LLVM's global cl machinery so that the rules can be unit
// tested: every malformed flag yields a message naming the flag and what it
// accepts.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_RUNOPTIONS_H
#define KILN_COMPILER_DRIVER_RUNOPTIONS_H

#include "compiler/Pipelines/KeysByQueries.h"
#include "compiler/Pipelines/SplitDkDv.h"

#include "kiln/LaunchPlan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::driver {

enum class EmitStage { None, Attn, Tile, LLVM, TGPU, CUDA };

struct RunOptions {
  std::string input;           ///< the variant's .mlir file
  std::string variant;         ///< attn.attention symbol; empty: the only one
  std::string backend = "cpu"; ///< cpu or cuda
  EmitStage emit = EmitStage::None;
  int64_t batch = 1, heads = 1;
  int64_t seqQ = 128;
  int64_t seqKV = -1;    ///< -1: same as seqQ
  int64_t headDim = -1;  ///< -1: the variant's qk_head_dim
  int64_t headDimV = -1; ///< -1: the variant's v_head_dim (or headDim)
  std::string dtype;     ///< "", bf16 or fp16; empty: the variant's
  int64_t pad = 0;       ///< extra elements after each row: non-contiguous
  int64_t pageSize = 0;  ///< > 0: K and V in a paged KV cache (forward)
  /// Varlen: the sequences' query lengths (--seqlens) and key lengths
  /// (--seqlens-kv; empty: the query lengths), packed in one batch.
  std::vector<int64_t> seqLens, seqLensKV;
  /// The variant's varlen layout (--varlen, or implied by --seqlens);
  /// without --seqlens, `batch` sequences of seqQ / seqKV rows.
  bool varlen = false;
  /// Block-sparse (--block-sparse QB[,KB]): the variant's block_sparse
  /// (0: none); the lists at random with --block-density P, else from the
  /// variant's mask.
  int64_t blockSparseQ = 0, blockSparseKV = 0;
  double blockDensity = 0;
  /// --build-block-mask: run the program that builds the lists from the
  /// mask instead, and compare them with the driver's.
  bool buildBlockMask = false;
  bool check = false;
  bool backward = false; ///< also run and check dQ, dK, dV (cpu)
  /// "auto" (the faster one for the head dims on the target), "two-kernel"
  /// (deterministic) or "atomic".
  std::string backwardSchedule = "auto";
  uint64_t seed = 0;
  double tolerance = 1e-2;
  double dropoutP = 0; ///< > 0: the variant with this dropout_p
  int64_t dropoutBits = 0; ///< > 0: the variant with this dropout_bits
  int64_t blockM = 64, blockN = 64;
  bool blockMGiven = false, blockNGiven = false; ///< cuda: else chosen
  bool splitMaskedBlocks = true;
  /// Backward: GQA's dK/dV kernel in one loop per range of Q blocks over
  /// the group's heads (ablation switch --no-group-steps).
  bool groupSteps = true;
  /// Forward: tile-split-kv (ablation switch --no-split-kv), and the number
  /// of splits to run with (0: the plan's run-time choice).
  bool splitKv = true;
  int64_t kvSplits = 0;
  /// Forward: rows of the decode program's blocks (0: no decode program).
  int64_t decodeRows = 64;
  /// GQA packing: the wide decode program's packed rows, run when seq_q *
  /// group exceeds decodeRows (0: none, the ablation).
  int64_t wideDecodeRows = 128;
  /// ...and its keys per KV step (0: the variant's block-n).
  int64_t wideDecodeKeys = 0;
  /// Forward, masked variants: rows of the short program's blocks, run when
  /// seq_kv <= shortKeys (0: no short program; only below the chosen rows).
  int64_t shortRows = 128, shortKeys = 4096;
  /// Forward, GQA: the decode program packs a KV group's query heads into
  /// its rows (ablation switch --no-gqa-pack).
  bool gqaPack = true;
  /// Forward, split KV: the combine kernel over blocks of query rows
  /// (ablation switch --combine-by-rows), or over blocks of splits
  /// (--combine-by-splits), in every run instead of the run's choice.
  bool combineByRows = false;
  bool combineBySplits = false;
  /// Forward: blocks below a mask_mod's per-program bound `kv < X || ...`
  /// run unmasked (ablation switch --no-visible-below).
  bool visibleBelow = true;
  /// Forward: the last partial key block in the full loop, masked in a
  /// branch (ablation switch --no-branch-masked-steps).
  bool branchMaskedSteps = true;
  /// Forward: a bounded score_mod's top as every row's maximum (ablation
  /// switch --no-static-max).
  bool staticMax = true;
  /// Forward, sm_90a: 64 x 64 tiles for a narrow diagonal band (ablation
  /// switch --no-narrow-band-tiles).
  bool narrowBandTiles = true;
  /// Backward: the dK/dV kernel's partial Q steps in its full loop, masked
  /// in a branch (opt-in switch --branch-masked-backward-steps).
  bool branchMaskedBackwardSteps = false;
  /// Mods convert positions to float before subtracting them (ablation
  /// switch --no-split-position-differences).
  bool splitPositionDifferences = true;
  /// cuda, fast math: the mods' per-row and per-column terms combine before
  /// per-element ones (ablation switch --no-reassociate-low-rank).
  bool reassociateLowRank = true;
  /// cpu: run that rewrite too (--reassociate-low-rank), so that its
  /// arithmetic is checked against float64 without a GPU; off by default on
  /// the CPU, whose results stay in the mods' written order.
  bool cpuReassociateLowRank = false;
  /// With that rewrite: a score's per-row terms added to the rows' maxima,
  /// not to every element (ablation switch --no-row-terms-after-max).
  bool rowTermsAfterMax = true;
  /// Both back ends: a mod's capture reads at the program's indices moved
  /// out of the KV loops (ablation switch --no-hoist-invariant-reads).
  bool hoistInvariantReads = true;
  /// cuda backward: those two rewrites only on kernels whose queries have
  /// at least this many columns (--backward-mod-rewrites-min-head-dim).
  int64_t backwardModRewritesMinHeadDim = 128;
  /// Both back ends: rows' maxima before the softmax's positive scale
  /// (tile-scale-after-max; ablation switch --no-scale-after-max).
  bool scaleAfterMax = true;
  /// A mask's position compares as per-row bounds of the column index
  /// (tile-column-bounds; ablation switch --no-column-bounds).
  bool columnBounds = true;
  int64_t oneSidedBoundsElements = 16384; ///< ...its one-sided-elements
  /// Both back ends, forward: the softmax's reference maximum moves in steps
  /// of 2^8 (tile-lazy-rescale; opt-in --lazy-rescale: measured -11% to +3%
  /// on Hopper, docs/performance.md).
  bool lazyRescale = false;
  /// cuda forward: warps whose correction factors are all 1 skip the
  /// accumulator's rescaling (tgpu-skip-unit-scales; opt-in
  /// --skip-unit-scales).
  bool skipUnitScales = false;
  /// Backward dK/dV on Sᵀ = K Qᵀ: chosen (cuda), or forced by
  /// --keys-by-queries / --no-keys-by-queries.
  KeysByQueries keysByQueries = KeysByQueries::Auto;
  /// --split-dkdv / --no-split-dkdv.
  SplitDkDv splitDkdv = SplitDkDv::Auto;
  /// --key-block K: backward keys per dK/dV program (0: BN).
  int64_t keyBlock = 0;
  /// --ring-stages S: sm_90a, the most stages per TMA ring.
  int64_t ringStages = 2;
  /// --max-ctas-per-sm C: sm_90a, the most CTAs per multiprocessor of a kernel
  /// with one consumer warpgroup.
  int64_t maxCtasPerSM = 2;
  /// --no-ring-vectors: the backward's LSE and D loaded by the consumers,
  /// not copied by the producer beside Q.
  bool ringVectors = true;
  /// --producer-bits: the dropout's keep bits drawn by the producer
  /// warpgroup (opt-in: measured slower than the consumers' own draw).
  bool producerBits = false;
  /// --producer-bits-share S: the eighths (1 to 8) of each consumer
  /// thread's keep bits the producer draws (implies --producer-bits).
  int64_t producerBitsShare = 8;
  /// --no-load-ahead: the backward's LSE and D loaded where used.
  bool loadAhead = true;
  /// --capture-gradients: the backward also differentiates the float
  /// captures the score_mod reads.
  bool captureGradients = false;
  /// --deterministic-capture-gradients: the same, bit for bit equal in
  /// every run (fixed-point sums; implies captureGradients).
  bool deterministicCaptureGradients = false;
  /// --ordered-dq: the atomic schedule's dQ adds in a fixed order (bit
  /// for bit equal in every run).
  bool orderedDq = false;
  bool overlapCopies = true;    ///< cuda: tgpu-overlap-copies (ablation switch)
  bool prefetchNextStep = true; ///< cuda: tgpu-prefetch-next-step (ablation)
  bool fastMath = true; ///< cuda: tanh/exp on the hardware approximations
  bool philoxLanePairs = true; ///< cuda: philox-lane-pairs (ablation)
  bool warpgroupMma = true; ///< cuda sm_90a: tgpu-warpgroup-mma (ablation)
  bool doubleBuffer = true; ///< cuda sm_90a: tgpu-double-buffer (ablation)
  bool pipelineProducts = false; ///< cuda sm_90a: tgpu-pipeline-products
  bool warpSpecialize = true; ///< cuda sm_90a: tgpu-warp-specialize (ablation)
  bool longestFirst = true;   ///< cuda: tgpu-longest-first (ablation)
  bool backwardLongestFirst = true; ///< ...bwd, wave-chunks (ablation)
  bool waveChunks = true;           ///< ...fwd, wave-chunks (ablation)
  bool pingPong = false;      ///< cuda sm_90a: tgpu-ping-pong
  bool persistent = true;     ///< cuda sm_90a: CTAs loop over tiles
  bool doubleTileBuffers = true; ///< ...with two copies of Q by turns
  bool persistentBackward = false; ///< ...the backward's too (opt-in)
  bool overlapProducts = true;  ///< cuda sm_90a: tgpu-overlap-products
  bool combineBeforeWaits = true; ///< ...tgpu-combine-before-waits
  bool bulkReductions = true;   ///< cuda sm_90a: tgpu-bulk-reductions
  bool coreOrder = true;        ///< ...dQ's accumulator in core order
  bool deferFlush = true;       ///< ...its shares added a step later
  bool producerReductions = true; ///< ...and by the producer's warp
  bool deferredTurns = true;      ///< --ordered-dq: turns passed on later
  bool tmaStores = true;        ///< cuda sm_90a: tgpu-tma-stores
  bool overlapLaunches = true;  ///< cuda sm_90a: tgpu-overlap-launches
  bool overlapBackwardLaunches = false; ///< ...in the backward (opt-in)
  bool stageInQ = true;         ///< ...staged in the tile's copy of Q
  bool asyncAccumulate = true;  ///< cuda sm_90a: dV, dK waited at the yield
  bool packLhsFirst = true;     ///< cuda sm_90a: P packed before wgmma's fence
  bool orderBeforeWaits = false; ///< cuda sm_90a: ptxas keeps pinned work
  int64_t repeats = 0;          ///< cuda: timed launches after the check
  std::string arch;             ///< cuda -emit: sm_80 or sm_90a (default)
  std::string output;           ///< kiln compile: -o file
  std::string nonce; ///< kiln compile: makes the source unique (cold compiles)
};

struct ParsedRunOptions {
  RunOptions options;
  std::string error; ///< non-empty: what is wrong
  bool help = false;
};

/// Parses the arguments after `kiln run`; flags take `--flag value` or
/// `--flag=value`.
ParsedRunOptions parseRunOptions(const std::vector<std::string> &args);

/// The derived symbols a forward run sets: kv_splits with --kv-splits.
SymbolValues kvSplitsOverride(const RunOptions &o);

/// The usage text of `kiln run`.
const char *runUsage();

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_RUNOPTIONS_H
