//===- CUDACompile.h - attn variant -> CUDA kernel spec ---------*- C++ -*-===//

#ifndef KILN_COMPILER_DRIVER_CUDACOMPILE_H
#define KILN_COMPILER_DRIVER_CUDACOMPILE_H

#include "compiler/Driver/RunOptions.h"
#include "kiln/Runtime.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace kiln::driver {

/// The schedule decisions a caller may fix (tiles) or turn off (the
/// ablation switches of `kiln run`); the defaults are the chosen schedule.
struct ScheduleChoices {
  int64_t blockM = 0, blockN = 0; ///< 0: chosen from the variant
  bool overlapCopies = true;      ///< tgpu-overlap-copies
  bool prefetchNextStep = true;   ///< tgpu-prefetch-next-step (forward)
  bool fastMath = true;           ///< tanh / exp on the approximations
  bool philoxLanePairs = true;    ///< key-row Philox calls shared by lanes
  bool warpgroupMma = true;       ///< tgpu-warpgroup-mma (sm_90a)
  bool doubleBuffer = true;       ///< tgpu-double-buffer (sm_90a forward)
  bool pipelineProducts = false;  ///< tgpu-pipeline-products (likewise)
  bool warpSpecialize = true;     ///< tgpu-warp-specialize (sm_90a)
  bool longestFirst = true;       ///< tgpu-longest-first (ablation)
  bool backwardLongestFirst = true; ///< ...in wave chunks, bwd (ablation)
  bool waveChunks = true;           ///< ...in wave chunks, fwd (ablation)
  bool splitKv = true;            ///< tile-split-kv (forward; ablation)
  int64_t decodeRows = 64;        ///< forward: the decode program's rows
  int64_t wideDecodeRows = 128;   ///< ...and the wide one's (GQA packing)
  int64_t wideDecodeKeys = 0;     ///< ...its keys per step (0: block-n)
  int64_t shortRows = 128;        ///< forward, masked: the short program's
  int64_t shortKeys = 4096;       ///< ...rows, run when seq_kv <= shortKeys
  bool gqaPack = true;            ///< forward: GQA heads packed in its rows
  bool combineByRows = false;     ///< forward: the row-block combine kernel
  bool combineBySplits = false;   ///< ...or the split-block one, every run
  bool visibleBelow = true;       ///< forward: unmasked blocks below X
  bool branchMaskedSteps = true;  ///< forward: last partial block branched
  bool staticMax = true;          ///< forward: a bounded score_mod's top as m
  bool narrowBandTiles = true;    ///< forward: 64 x 64 tiles, narrow bands
  bool branchMaskedBackwardSteps = false; ///< backward: the same (opt-in)
  bool splitPositionDifferences = true; ///< mods: float(kv) - float(q)
  bool reassociateLowRank = true;       ///< mods: per-row/column terms first
  bool rowTermsAfterMax = true;         ///< ...per-row ones after the maxima
  bool hoistInvariantReads = true;      ///< capture reads out of KV loops
  int64_t backwardModRewritesMinHeadDim = 128; ///< ...backward: from this D
  bool scaleAfterMax = true;            ///< rows' maxima before the scale
  bool columnBounds = true;             ///< tile-column-bounds
  int64_t oneSidedBoundsElements = 16384; ///< ...its one-sided-elements
  bool lazyRescale = false;       ///< forward: the reference maximum in steps
  bool skipUnitScales = false;    ///< forward: correction skipped where all 1
  bool pingPong = false;          ///< tgpu-ping-pong (sm_90a forward)
  bool persistent = true;         ///< CTAs loop over tiles (sm_90a forward)
  bool doubleTileBuffers = true;  ///< two copies of Q, by turns (persistent)
  bool persistentBackward = false; ///< likewise the backward's (opt-in)
  bool overlapProducts = true;    ///< tgpu-overlap-products (sm_90a bwd)
  bool combineBeforeWaits = true; ///< tgpu-combine-before-waits (sm_90a bwd)
  bool bulkReductions = true;     ///< tgpu-bulk-reductions (sm_90a bwd)
  bool coreOrder = true;          ///< ...dQ's accumulator in core order
  bool deferFlush = true;         ///< ...its shares added a step later
  bool producerReductions = true; ///< ...and by the producer's warp
  bool deferredTurns = true;      ///< ordered dQ: turns passed on later
  bool tmaStores = true;          ///< tgpu-tma-stores (sm_90a fwd)
  bool overlapLaunches = true;    ///< tgpu-overlap-launches (sm_90a fwd)
  bool overlapBackwardLaunches = false; ///< ...and bwd (opt-in)
  bool stageInQ = true;           ///< ...staged in the tile's copy of Q
  bool asyncAccumulate = true;    ///< dV, dK waited at the yield (sm_90a)
  bool packLhsFirst = true;       ///< tgpu-warpgroup-mma pack-lhs-first
  bool splitMaskedBlocks = true;  ///< full blocks unmasked (ablation)
  bool groupSteps = true;         ///< GQA dK/dV: one loop per range
  bool orderBeforeWaits = false;  ///< ...order-before-waits (opt-in)
  /// Backward dK/dV on Sᵀ = K Qᵀ: chosen with the schedule, or forced.
  KeysByQueries keysByQueries = KeysByQueries::Auto;
  /// Backward dK and dV in two kernels: chosen from the head dims, or forced.
  SplitDkDv splitDkdv = SplitDkDv::Auto;
  /// Backward keys per dK/dV CTA (0: block-n).
  int64_t keyBlock = 0;
  /// sm_90a: the most stages per TMA ring.
  int64_t ringStages = 2;
  /// sm_90a: the most CTAs per multiprocessor of one-warpgroup kernels.
  int64_t maxCtasPerSM = 2;
  /// sm_90a backward: each step's read-only vectors loaded a step ahead.
  bool loadAhead = true;
  /// sm_90a: each step's per-query vectors copied by the producer.
  bool ringVectors = true;
  /// sm_90a: the dropout's keep bits drawn by the producer.
  bool producerBits = false;
  int64_t producerBitsShare = 8;
  /// Backward: the gradients of the float captures the score_mod reads.
  bool captureGradients = false;
  /// ...the same bit for bit in every run (fixed-point sums).
  bool deterministicCaptureGradients = false;
  /// Backward: the atomic schedule's dQ adds in a fixed order.
  bool orderedDq = false;
};

/// The choices `kiln run` / `kiln compile` flags make.
ScheduleChoices scheduleChoices(const RunOptions &options);

/// Lowers the single attn.attention of `module` (consumed) through the CUDA
/// pipeline for `arch`: `spec` receives the emitted source and the launch
/// plan of the forward program. `tgpuIR`, when given, receives the
/// scheduled IR.
Status compileForwardCUDA(mlir::ModuleOp module, const std::string &arch,
                          ProgramSpec &spec,
                          const ScheduleChoices &choices = {},
                          std::string *tgpuIR = nullptr);

/// Lowers the single attn.attention of `module` through the backward CUDA
/// pipeline with `schedule` ("auto", "two-kernel" or "atomic": atomic dQ)
/// and emits its kernels into one source; `spec.schedule` names the
/// schedule the program got ("two-kernel" or "atomic").
Status compileBackwardCUDA(mlir::ModuleOp module, const std::string &arch,
                           const std::string &schedule, ProgramSpec &spec,
                           const ScheduleChoices &choices = {},
                           std::string *tgpuIR = nullptr);

/// The forward and backward pass pipelines (`backwardSchedule` as
/// compileBackwardCUDA's `schedule`) that `choices` give for `arch`, as
/// text with every pass's options: a schedule switch that does not change
/// it does not reach a pass (the driver's tests hold every switch to that).
std::string cudaPipelineText(const std::string &arch,
                             const ScheduleChoices &choices,
                             const std::string &backwardSchedule = "auto");

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_CUDACOMPILE_H
