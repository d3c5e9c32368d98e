//===- Pipelines.cpp - Kiln's named pass pipelines ------------------------===//

#include "compiler/Pipelines/Pipelines.h"

#include <algorithm>

#include "compiler/Conversion/Passes.h"
#include "dialects/Attn/Transforms/ChooseTiles.h"
#include "dialects/Attn/Transforms/Passes.h"
#include "dialects/Tile/Transforms/Passes.h"
#include "dialects/TileGPU/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace kiln {

void buildForwardTilePipeline(OpPassManager &pm,
                              const ForwardPipelineOptions &options) {
  // Integer division by zero in the mods gives 0, as in the reference (the
  // CPU's code would trap).
  pm.addPass(attn::createAttnGuardDivision());
  // Prove which KV blocks are empty / full before lowering, so the lowering
  // can bound and split the KV loop.
  pm.addPass(attn::createAttnInferMaskBounds());
  // float(kv) - float(q) in the mods: per column and row, not per element.
  if (options.splitPositionDifferences)
    pm.addPass(attn::createAttnSplitPositionDifferences());
  // The backward kernels first: the forward lowering consumes the spec.
  if (options.backward) {
    ConvertAttnToTileBackwardOptions backward;
    backward.blockM = options.blockM;
    backward.blockN = options.blockN;
    backward.schedule = options.backwardSchedule;
    backward.keysByQueries = options.keysByQueries;
    backward.splitDkdvAbove = options.splitDkdvAbove;
    backward.keyBlock = options.keyBlock;
    backward.captureGradients = options.captureGradients;
    backward.deterministicCaptureGradients =
        options.deterministicCaptureGradients;
    backward.splitMaskedBlocks = options.splitMaskedBlocks;
    backward.branchMaskedSteps = options.branchMaskedBackwardSteps;
    backward.groupSteps = options.groupSteps;
    backward.orderedDq = options.orderedDq;
    backward.producer = options.producer;
    pm.addPass(createConvertAttnToTileBackward(backward));
  }
  // The FlashAttention-2 forward program, mods inlined into the S tile.
  if (options.forward) {
    ConvertAttnToTileOptions lowering;
    lowering.blockM = options.blockM;
    lowering.blockN = options.blockN;
    lowering.splitMaskedBlocks = options.splitMaskedBlocks;
    lowering.decodeRows = options.decodeRows;
    lowering.wideDecodeRows = options.wideDecodeRows;
    lowering.wideDecodeKeys = options.wideDecodeKeys;
    lowering.shortRows = options.shortRows;
    lowering.shortKeys = options.shortKeys;
    lowering.gqaPack = options.gqaPack;
    lowering.visibleBelow = options.visibleBelow;
    lowering.branchMaskedSteps = options.branchMaskedSteps;
    lowering.staticMax = options.staticMax;
    lowering.staticMaxFlopPerSfu = options.staticMaxFlopPerSfu;
    pm.addPass(createConvertAttnToTile(lowering));
    // Decoding: programs share a (batch, head, Q block)'s KV range when the
    // grid is too small for the device, and a combine kernel merges them.
    if (options.splitKv) {
      tile::TileSplitKVOptions split;
      if (options.combineByRows)
        split.combineSplits = 0;
      if (options.combineBySplits)
        split.combineRowsSteps = 0;
      pm.addPass(tile::createTileSplitKV(split));
    }
  }
  // ALiBi-like mods: per-row and per-column terms first (fast math only).
  if (options.reassociateLowRank)
    pm.addPass(tile::createTileReassociateLowRank());
  // ...and their per-row terms added once per row, after the maxima.
  if (options.reassociateLowRank && options.rowTermsAfterMax) {
    tile::TileRowTermsAfterMaxOptions rowTerms;
    rowTerms.minHeadDim = options.modRewritesMinHeadDim;
    pm.addPass(tile::createTileRowTermsAfterMax(rowTerms));
  }
  // The rows' maxima before the positive scale: one multiply per element
  // fewer, the same maxima.
  if (options.scaleAfterMax)
    pm.addPass(tile::createTileScaleAfterMax());
  // A mask's position compares as one interval test of the column index
  // per element (per-row bounds; exact).
  if (options.columnBounds) {
    tile::TileColumnBoundsOptions bounds;
    bounds.oneSidedElements = options.oneSidedBoundsElements;
    pm.addPass(tile::createTileColumnBounds(bounds));
  }
  // The softmax's reference maximum in steps of 2^8, so that most KV steps
  // rescale by exactly 1 (opt-in: on the H100/H200 together with
  // tgpu-skip-unit-scales +2-3% at D = 128 for plain and causal, but -9 to
  // -11% for softcap and -2 to -4% at D = 256; docs/performance.md).
  if (options.lazyRescale)
    pm.addPass(tile::createTileLazyRescale());
  // Fold the index arithmetic of the bounds and share repeated constants;
  // hoist what does not change across KV steps (iotas, splats, capture reads
  // indexed by head) out of the KV loops.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createLoopInvariantCodeMotionPass());
  // ...and a mod's capture reads at the program's indices (MLIR's pass moves
  // no read), with what is computed from them.
  if (options.hoistInvariantReads) {
    tile::TileHoistInvariantReadsOptions hoist;
    hoist.minHeadDim = options.modRewritesMinHeadDim;
    pm.addPass(tile::createTileHoistInvariantReads(hoist));
  }
  // After hoisting, the KV loops' copies of the same splats sit side by side.
  pm.addPass(createCSEPass());
}

void buildCPULoweringPipeline(OpPassManager &pm) {
  // Ordered adds (ordered-dq): the programs run in the turns' order here,
  // so an add out of its turn becomes a NaN the checks see.
  pm.addPass(tile::createTileCheckTurns());
  // Program ids -> a grid loop; tile ops -> linalg/tensor/memref/scf.
  pm.addPass(createConvertTileToCPU());
  // Elementwise arith/math on tiles -> linalg.generic.
  pm.addPass(createConvertElementwiseToLinalgPass());
  // Fuse elementwise chains so the softmax does not allocate per op.
  pm.addPass(createLinalgElementwiseOpFusionPass());
  pm.addPass(createCanonicalizerPass());
  // Tensors -> buffers; tiles are short-lived, freed by the dealloc pipeline.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // The KV loop yields fresh (m, l, acc) tiles each step.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createConvertBufferizationToMemRefPass());
  // bf16 <-> f32 casts as integer ops (the JIT still provides __truncsfbf2
  // for values the x86 backend keeps in f32 registers: CPUKernel.cpp).
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // exp2/log2/tanh become LLVM intrinsics; what has none (erf) calls libm.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void buildCPUForwardPipeline(OpPassManager &pm,
                             const ForwardPipelineOptions &options) {
  buildForwardTilePipeline(pm, options);
  buildCPULoweringPipeline(pm);
}

/// The shared memory a CTA may use: the option, or the target's.
static int64_t sharedLimit(const CUDAPipelineOptions &options) {
  return options.sharedMemoryBytes > 0
             ? int64_t(options.sharedMemoryBytes)
             : attn::defaultSharedMemoryBytes(options.arch);
}

/// Layouts, shared-memory staging with cp.async, mma.sync; then back-to-back
/// staged copies issued together (V's load under Q K^T and the softmax in
/// the forward; Q with dO, K with V in the backward).
/// Warps follow each kernel's tiles (16 rows per warp).
static void addSM80Schedule(OpPassManager &pm,
                            const CUDAPipelineOptions &options) {
  ConvertTileToTileGPUOptions schedule;
  schedule.arch = options.arch;
  schedule.fastMath = options.fastMath;
  schedule.philoxLanePairs = options.philoxLanePairs;
  schedule.sharedMemoryBytes = sharedLimit(options);
  // wgmma takes the atomic backward's dQ = dS K whole from K's swizzled
  // tile; chunks would be windows it cannot read. Whole, the share's 64 f32
  // registers per thread at D = 128 sit beside dK and dV (S and dP are dead
  // by then); at D = 256 it would spill, so wider shares keep their chunks
  // (and mma.sync).
  if (options.arch == "sm_90a" && options.warpgroupMma)
    schedule.atomicProductWholeColumns = 128;
  pm.addPass(createConvertTileToTileGPU(schedule));
  if (options.overlapCopies)
    pm.addPass(tgpu::createTileGPUOverlapCopies());
}

/// sm_90: each kernel may start while the stream's previous one finishes
/// (griddepcontrol), last, so that its wait precedes everything the other
/// passes put in the kernel.
static void addOverlapLaunches(OpPassManager &pm,
                               const CUDAPipelineOptions &options,
                               bool enabled) {
  if (options.arch == "sm_90a" && enabled)
    pm.addPass(tgpu::createTileGPUOverlapLaunches());
}

/// Tiles for the target, chosen from the variant's own head dims and dtype
/// (so kiln-opt and kiln compile agree), recorded on the op for the
/// lowerings.
static void addChooseTiles(OpPassManager &pm,
                           const CUDAPipelineOptions &options,
                           StringRef program) {
  attn::AttnChooseTilesOptions tiles;
  tiles.arch = options.arch;
  tiles.program = program.str();
  tiles.blockM = options.blockM;
  tiles.blockN = options.blockN;
  tiles.sharedMemoryBytes = options.sharedMemoryBytes;
  tiles.narrowBandTiles = options.narrowBandTiles;
  pm.addPass(attn::createAttnChooseTiles(tiles));
}

void buildCUDAForwardPipeline(OpPassManager &pm,
                              const CUDAPipelineOptions &options) {
  // The mask's band first: a narrow one decides the tiles
  // (narrow-band-tiles). The tile pipeline proves it again, the same way.
  pm.addPass(attn::createAttnInferMaskBounds());
  addChooseTiles(pm, options, "forward");
  // The tile program is the same one the CPU backend runs, with the chosen
  // tiles (block sizes 0: the op's).
  ForwardPipelineOptions forward;
  forward.blockM = 0;
  forward.blockN = 0;
  forward.splitKv = options.splitKv;
  forward.combineByRows = options.combineByRows;
  forward.combineBySplits = options.combineBySplits;
  forward.visibleBelow = options.visibleBelow;
  forward.branchMaskedSteps = options.branchMaskedSteps;
  forward.staticMax = options.staticMax;
  // Where the SFU bounds the step the row maximum's ALU work spaces out its
  // bursts (softcap at D = 64 on an H200 ran 9-12% slower without it, MIO
  // throttle stalls 1.41 -> 2.49 per instruction): the static maximum only
  // where a score's products take as long as its SFU operations. Per SM and
  // cycle: 16 SFU results, and 4096 dense bf16 FLOP on sm_90a, 2048 on sm_80.
  forward.staticMaxFlopPerSfu = options.arch == "sm_90a" ? 256 : 128;
  forward.splitPositionDifferences = options.splitPositionDifferences;
  forward.reassociateLowRank = options.fastMath && options.reassociateLowRank;
  forward.rowTermsAfterMax = options.rowTermsAfterMax;
  forward.hoistInvariantReads = options.hoistInvariantReads;
  forward.scaleAfterMax = options.scaleAfterMax;
  forward.columnBounds = options.columnBounds;
  forward.oneSidedBoundsElements = options.oneSidedBoundsElements;
  forward.lazyRescale = options.lazyRescale;
  forward.decodeRows = options.decodeRows;
  forward.wideDecodeRows = options.wideDecodeRows;
  forward.wideDecodeKeys = options.wideDecodeKeys;
  forward.shortRows = options.shortRows;
  forward.shortKeys = options.shortKeys;
  forward.gqaPack = options.gqaPack;
  forward.splitMaskedBlocks = options.splitMaskedBlocks;
  buildForwardTilePipeline(pm, forward);
  addSM80Schedule(pm, options);
  if (options.longestFirst) {
    tgpu::TileGPULongestFirstOptions order;
    order.waveChunks = options.waveChunks;
    pm.addPass(tgpu::createTileGPULongestFirst(order));
  }
  int64_t limit = sharedLimit(options);
  // On sm_90a K and V of the next step load into twin buffers during this
  // one (a two-stage ring); otherwise the next step's K loads under P*V.
  bool doubleBuffer = options.arch == "sm_90a" && options.overlapCopies &&
                      options.doubleBuffer;
  // The producer warpgroup loads each step's own rows (no prefetch).
  bool specialize = options.arch == "sm_90a" && options.warpgroupMma &&
                    options.warpSpecialize;
  if (options.overlapCopies && options.prefetchNextStep && !doubleBuffer &&
      !specialize)
    pm.addPass(tgpu::createTileGPUPrefetchNextStep());
  // Hopper: wgmma over swizzled tiles where the products allow it.
  if (options.arch == "sm_90a" && options.warpgroupMma) {
    tgpu::TileGPUWarpgroupMmaOptions wgmma;
    wgmma.sharedMemoryBytes = limit;
    wgmma.packLhsFirst = options.packLhsFirst;
    wgmma.orderBeforeWaits = options.orderBeforeWaits;
    pm.addPass(tgpu::createTileGPUWarpgroupMma(wgmma));
    // A producer warpgroup feeds the consumers through TMA; kernels it
    // leaves alone keep the cp.async schedules below.
    if (specialize) {
      tgpu::TileGPUWarpSpecializeOptions specialize;
      specialize.sharedMemoryBytes = limit;
      // The ping-pong's and the pipelined products' rewrites expect the
      // consumers' KV loops at their region's top level.
      specialize.persistent =
          options.persistent && !options.pingPong && !options.pipelineProducts;
      specialize.doubleTileBuffers = options.doubleTileBuffers;
      specialize.stages = options.ringStages;
      specialize.maxCtasPerSM = options.maxCtasPerSM;
      specialize.ringVectors = options.ringVectors;
      specialize.producerBits = options.producerBits;
      specialize.producerBitsShare = options.producerBitsShare;
      pm.addPass(tgpu::createTileGPUWarpSpecialize(specialize));
      if (options.pingPong && !options.pipelineProducts)
        pm.addPass(tgpu::createTileGPUPingPong());
    }
  }
  if (doubleBuffer) {
    tgpu::TileGPUDoubleBufferOptions ring;
    ring.sharedMemoryBytes = limit;
    pm.addPass(tgpu::createTileGPUDoubleBuffer(ring));
  }
  // With the next step's K resident (a ring or twin buffers), the softmax
  // can overlap the previous step's P*V.
  bool pipelined = options.arch == "sm_90a" && options.warpgroupMma &&
                   options.pipelineProducts && (specialize || doubleBuffer);
  if (pipelined)
    pm.addPass(tgpu::createTileGPUPipelineProducts());
  // A product with independent work before its first use (dropout's bits
  // after S) is waited for there; the ping-pong's and the pipelined
  // products' own waits are left alone.
  if (options.arch == "sm_90a" && options.warpgroupMma &&
      options.overlapProducts && !pipelined && !options.pingPong)
    pm.addPass(tgpu::createTileGPUOverlapProducts());
  // The accumulator's correction by vote: with the lazy reference maximum
  // most steps' factors are 1 (opt-in, measured with tile-lazy-rescale).
  if (options.skipUnitScales)
    pm.addPass(tgpu::createTileGPUSkipUnitScales());
  // The consumers' output tiles by TMA from shared memory: the epilogue's
  // per-lane stores and their address arithmetic become a warp's staging
  // and one copy per swizzle span (tiles of few KV steps spend much of
  // their time in the epilogue).
  if (specialize && options.tmaStores) {
    tgpu::TileGPUTmaStoresOptions stores;
    stores.sharedMemoryBytes = limit;
    stores.stageInOwnCopy = options.stageInQ;
    pm.addPass(tgpu::createTileGPUTmaStores(stores));
  }
  addOverlapLaunches(pm, options, options.overlapLaunches);
  pm.addPass(createCSEPass());
}

void buildCUDABackwardPipeline(OpPassManager &pm,
                               const CUDAPipelineOptions &options) {
  addChooseTiles(pm, options, "backward");
  ForwardPipelineOptions program;
  program.blockM = 0;
  program.blockN = 0;
  program.forward = false;
  program.backward = true;
  bool wgmma = options.arch == "sm_90a" && options.warpgroupMma;
  bool producer = wgmma && options.warpSpecialize;
  // auto: the atomic schedule where attn-choose-tiles measured it faster
  // (D = 128 on sm_90a: 128 keys per dK/dV CTA, dQ by TMA reductions), with
  // the producer it was measured with; two-kernel elsewhere.
  // deterministic: ordered dQ adds only in the form tgpu-ordered-adds
  // orders, the producer's staged reductions in core order of a
  // non-persistent kernel, at the tiles and rings it was measured with
  // (deeper rings or other tiles can leave no room for the staging); an
  // ablation that changes the form gets two kernels, not an error.
  bool orderable = producer && options.bulkReductions && options.coreOrder &&
                   options.producerReductions && !options.persistentBackward &&
                   options.ringStages <= 2 && options.blockM == 0 &&
                   options.blockN == 0;
  program.backwardSchedule =
      (options.backwardSchedule == "auto" && !producer) ||
              (options.backwardSchedule == "deterministic" && !orderable)
          ? std::string("two-kernel")
          : std::string(options.backwardSchedule);
  // Keys by queries frees the dK/dV kernel of thread-written shared memory
  // (P and dS from registers): with the producer 1.03-1.18x the other
  // orientation forward + backward on the H100, which then has a producer
  // too; without one it measured 0.89-0.95x (docs/performance.md).
  program.keysByQueries =
      options.keysByQueries == KeysByQueries::On ||
      (options.keysByQueries == KeysByQueries::Auto && producer);
  // key-block 128: two consumer warpgroups over 128 keys share each step's
  // Q and dO tile (FlashAttention-3's dK/dV CTA); keys by queries, the rows
  // of every register tile are keys. Without a key-block both schedules
  // take it where attn-choose-tiles marked it (the atomic one at D = 64 and
  // 128, the two-kernel one at D = 128, where its 64-key kernel spills).
  program.keyBlock = options.keyBlock;
  program.splitMaskedBlocks = options.splitMaskedBlocks;
  program.branchMaskedBackwardSteps = options.branchMaskedBackwardSteps;
  program.groupSteps = options.groupSteps;
  program.producer = producer;
  program.captureGradients = options.captureGradients;
  program.splitPositionDifferences = options.splitPositionDifferences;
  program.reassociateLowRank = options.fastMath && options.reassociateLowRank;
  program.rowTermsAfterMax = options.rowTermsAfterMax;
  program.hoistInvariantReads = options.hoistInvariantReads;
  // Both measured slower in ALiBi's backward at D = 64 on an H200 (backward
  // alone: without the row terms' rewrite 0.90-0.93x the time, without the
  // hoisted slope read 0.95-0.97x, for fewer SASS instructions per step;
  // not understood) and faster at D = 128 (1.01-1.04x and 1.11-1.15x at
  // N = 2k-4k; docs/performance.md), so the backward's kernels take them
  // from D = 128 on (the option's default).
  program.modRewritesMinHeadDim = options.backwardModRewritesMinHeadDim;
  program.scaleAfterMax = options.scaleAfterMax;
  program.columnBounds = options.columnBounds;
  program.oneSidedBoundsElements = options.oneSidedBoundsElements;
  program.deterministicCaptureGradients = options.deterministicCaptureGradients;
  program.orderedDq = options.orderedDq;
  // At D = 256 one dK/dV kernel's two accumulators fill the registers
  // (spills, products serialized by ptxas); two kernels recompute S.
  program.splitDkdvAbove = options.splitDkdv == SplitDkDv::On ? 0
                           : options.splitDkdv == SplitDkDv::Auto && wgmma
                               ? kSplitDkDvAutoAbove
                               : -1;
  buildForwardTilePipeline(pm, program);
  addSM80Schedule(pm, options);
  // The dK/dV kernels' longest key blocks first, chunk by chunk of about a
  // wave of (head, batch) pairs, so that the CTAs at work still share
  // their heads' Q, dO and dQ sums in L2 (docs/performance.md).
  if (options.backwardLongestFirst) {
    tgpu::TileGPULongestFirstOptions order;
    order.sharedHeadsOnly = false;
    order.waveChunks = true;
    pm.addPass(tgpu::createTileGPULongestFirst(order));
  }
  // Hopper: wgmma for every product; queries by keys, the transposed ones
  // (Pᵀ dO, dSᵀ Q) read the shared copies of P and dS MN-major.
  if (wgmma) {
    tgpu::TileGPUWarpgroupMmaOptions products;
    products.sharedMemoryBytes = sharedLimit(options);
    products.packLhsFirst = options.packLhsFirst;
    products.orderBeforeWaits = options.orderBeforeWaits;
    pm.addPass(tgpu::createTileGPUWarpgroupMma(products));
    // A producer warpgroup feeds the dQ kernel (the forward's shape: K and
    // V streamed under a resident Q block) and the dK/dV kernel by TMA;
    // the buffers its threads write (P and dS queries by keys, dS for the
    // atomic schedule's dS K) are published by consumer barriers.
    if (options.warpSpecialize) {
      tgpu::TileGPUWarpSpecializeOptions specialize;
      specialize.sharedMemoryBytes = sharedLimit(options);
      specialize.persistent = options.persistentBackward;
      specialize.doubleTileBuffers = options.doubleTileBuffers;
      specialize.stages = options.ringStages;
      specialize.maxCtasPerSM = options.maxCtasPerSM;
      specialize.ringVectors = options.ringVectors;
      specialize.producerBits = options.producerBits;
      specialize.producerBitsShare = options.producerBitsShare;
      pm.addPass(tgpu::createTileGPUWarpSpecialize(specialize));
    }
    // dP (dPᵀ) needs only the step's tiles: issued with S, it runs under
    // the exponentials of P. (The forward's products depend on each other.)
    // dV and dK accumulate across the loop: issued asynchronously, the
    // step's next products (dQ = dS K in the atomic schedule) issue behind
    // them instead of after their completion.
    if (options.overlapProducts) {
      tgpu::TileGPUOverlapProductsOptions overlap;
      overlap.asyncAccumulate = options.asyncAccumulate;
      pm.addPass(tgpu::createTileGPUOverlapProducts(overlap));
    }
    // A mod's derivative factor (softcap's 1 - t^2) multiplied into P
    // before dP's wait, P narrowed for dV there: two f32 tiles fewer live
    // across the wait (a reassociation: fast math only).
    if (options.fastMath && options.combineBeforeWaits)
      pm.addPass(tgpu::createTileGPUCombineBeforeWaits());
    // The atomic schedule's dQ shares: whole rows into L2 by the copy
    // engine instead of 8-byte red.global per lane (1.6x the reduction
    // throughput in bench/probe_dq_reduce.cu), where the staging buffer
    // keeps the kernel's CTAs per multiprocessor.
    if (options.bulkReductions) {
      tgpu::TileGPUBulkReductionsOptions bulk;
      bulk.sharedMemoryBytes = sharedLimit(options);
      bulk.coreOrder = options.coreOrder;
      bulk.deferFlush = options.deferFlush;
      bulk.producerReductions = options.producerReductions;
      pm.addPass(tgpu::createTileGPUBulkReductions(bulk));
    }
    // The dK/dV kernel's LSE and D of the step's queries, loaded a step
    // ahead instead of in front of the step's first product.
    if (options.warpSpecialize && options.loadAhead)
      pm.addPass(tgpu::createTileGPULoadAhead());
    // dK and dV by TMA from shared memory, as the forward's output.
    if (options.warpSpecialize && options.tmaStores) {
      tgpu::TileGPUTmaStoresOptions stores;
      stores.sharedMemoryBytes = sharedLimit(options);
      stores.stageInOwnCopy = options.stageInQ;
      pm.addPass(tgpu::createTileGPUTmaStores(stores));
    }
  }
  // Ordered dQ adds: each share waits for its turn and is
  // complete before the next may start (an error where the schedule left
  // the adds in a form the pass does not order). The deterministic
  // schedule marks the kernels it orders; the pass leaves others alone.
  if (options.orderedDq || options.backwardSchedule == "deterministic") {
    tgpu::TileGPUOrderedAddsOptions ordered;
    ordered.deferredSignal = options.deferredTurns;
    pm.addPass(tgpu::createTileGPUOrderedAdds(ordered));
  }
  // The backward's kernels measured 1-7% slower with the overlap at D = 128
  // on an H200 (docs/performance.md): opt-in there.
  addOverlapLaunches(pm, options, options.overlapBackwardLaunches);
  pm.addPass(createCSEPass());
}

void registerPipelines() {
  PassPipelineRegistration<CUDAPipelineOptions>(
      "kiln-cuda-bwd-pipeline",
      "Lower attn.attention to its scheduled tgpu backward kernels "
      "(backward-schedule=auto|two-kernel|atomic)",
      buildCUDABackwardPipeline);
  PassPipelineRegistration<CUDAPipelineOptions>(
      "kiln-cuda-fwd-pipeline",
      "Lower attn.attention to a scheduled tgpu kernel for CUDA emission "
      "(tiles chosen from the variant for the arch)",
      buildCUDAForwardPipeline);
  PassPipelineRegistration<ForwardPipelineOptions>(
      "kiln-fwd-tile-pipeline",
      "Lower attn.attention to the forward tile program",
      buildForwardTilePipeline);
  PassPipelineRegistration<>("kiln-cpu-lowering-pipeline",
                             "Lower tile programs to the LLVM dialect (CPU)",
                             buildCPULoweringPipeline);
  PassPipelineRegistration<ForwardPipelineOptions>(
      "kiln-cpu-fwd-pipeline",
      "Lower attn.attention to the LLVM dialect for the CPU JIT",
      buildCPUForwardPipeline);
}

} // namespace kiln
