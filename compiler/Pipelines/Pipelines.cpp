//===- Pipelines.cpp - Kiln's named pass pipelines ------------------------===//

#include "compiler/Pipelines/Pipelines.h"

#include <algorithm>

#include "compiler/Conversion/Passes.h"
#include "dialects/Attn/Transforms/Passes.h"
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
  // Prove which KV blocks are empty / full before lowering, so the lowering
  // can bound and split the KV loop.
  pm.addPass(attn::createAttnInferMaskBounds());
  // The backward kernels first: the forward lowering consumes the spec.
  if (options.backward) {
    ConvertAttnToTileBackwardOptions backward;
    backward.blockM = options.blockM;
    backward.blockN = options.blockN;
    backward.schedule = options.backwardSchedule;
    pm.addPass(createConvertAttnToTileBackward(backward));
  }
  // The FlashAttention-2 forward program, mods inlined into the S tile.
  if (options.forward) {
    ConvertAttnToTileOptions lowering;
    lowering.blockM = options.blockM;
    lowering.blockN = options.blockN;
    lowering.splitMaskedBlocks = options.splitMaskedBlocks;
    pm.addPass(createConvertAttnToTile(lowering));
  }
  // Fold the index arithmetic of the bounds and share repeated constants;
  // hoist what does not change across KV steps (iotas, splats, capture reads
  // indexed by head) out of the KV loops.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createLoopInvariantCodeMotionPass());
  // After hoisting, the KV loops' copies of the same splats sit side by side.
  pm.addPass(createCSEPass());
}

void buildCPULoweringPipeline(OpPassManager &pm) {
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

int64_t defaultSharedMemoryBytes(StringRef arch) {
  // Opt-in shared memory per block: 227 KiB on sm_90, 163 KiB on sm_80.
  return arch == "sm_80" ? 166912 : 232448;
}

ForwardTiles chooseForwardTiles(StringRef arch, int64_t sharedBytes,
                                int64_t headDimQK, int64_t headDimV,
                                int64_t elementBytes, int64_t blockM,
                                int64_t blockN) {
  // Each warp owns 16 query rows, so a thread holds (BLOCK_N + D_v) / 2
  // floats of S and the accumulator whatever BLOCK_M is; BLOCK_M sets how
  // many warps share each K/V tile loaded into shared memory.
  ForwardTiles tiles{64, 64, 4};
  if (blockM > 0) {
    tiles.blockM = blockM;
    tiles.numWarps = std::max<int64_t>(1, blockM / 16);
  }
  auto sharedFor = [&](int64_t blockN) {
    // Q, K and V tiles, each row padded by 16 bytes.
    int64_t padQK = headDimQK + 16 / elementBytes;
    int64_t padV = headDimV + 16 / elementBytes;
    return (tiles.blockM * padQK + blockN * padQK + blockN * padV) *
           elementBytes;
  };
  // Larger KV blocks amortise the per-step barriers and row reductions, but
  // S (BLOCK_M x BLOCK_N f32) shares the register file with the
  // accumulator: keep their sum at most 160 floats per thread (measured: no
  // spills at 248-254 registers for D = 64, 128, 256).
  if (blockN > 0) {
    tiles.blockN = blockN;
    return tiles;
  }
  for (int64_t candidate : {128, 64, 32, 16}) {
    bool registersFit = (candidate + headDimV) / 2 <= 160;
    if (registersFit && sharedFor(candidate) <= sharedBytes) {
      tiles.blockN = candidate;
      return tiles;
    }
  }
  tiles.blockN = 16;
  return tiles;
}

/// Layouts, shared-memory staging with cp.async, mma.sync; then back-to-back
/// staged copies issued together (V's load under Q K^T and the softmax in
/// the forward; Q with dO, K with V in the backward).
static void addSM80Schedule(OpPassManager &pm,
                            const CUDAPipelineOptions &options,
                            int64_t numWarps, int64_t shared) {
  ConvertTileToTileGPUOptions schedule;
  schedule.arch = options.arch;
  schedule.numWarps = numWarps;
  schedule.sharedMemoryBytes = shared;
  pm.addPass(createConvertTileToTileGPU(schedule));
  if (options.overlapCopies)
    pm.addPass(tgpu::createTileGPUOverlapCopies());
}

void buildCUDAForwardPipeline(OpPassManager &pm,
                              const CUDAPipelineOptions &options,
                              int64_t headDimQK, int64_t headDimV,
                              int64_t elementBytes) {
  int64_t shared = options.sharedMemoryBytes > 0
                       ? int64_t(options.sharedMemoryBytes)
                       : defaultSharedMemoryBytes(options.arch);
  ForwardTiles tiles =
      chooseForwardTiles(options.arch, shared, headDimQK, headDimV,
                         elementBytes, options.blockM, options.blockN);
  ForwardPipelineOptions forward;
  forward.blockM = tiles.blockM;
  forward.blockN = tiles.blockN;
  // The tile program is the same one the CPU backend runs.
  buildForwardTilePipeline(pm, forward);
  addSM80Schedule(pm, options, tiles.numWarps, shared);
  // ... and the next step's K with this step's P*V.
  if (options.overlapCopies && options.prefetchNextStep)
    pm.addPass(tgpu::createTileGPUPrefetchNextStep());
  pm.addPass(createCSEPass());
}

ForwardTiles chooseBackwardTiles(int64_t headDimQK, int64_t headDimV,
                                 int64_t blockM, int64_t blockN) {
  // BLOCK_N = 64 keys as FlashAttention-2's sm_80 backward: the dK/dV kernel
  // keeps both accumulators (BLOCK_N x D f32 each, 16 rows per warp: D
  // floats per thread together) plus S and dP in registers. At D <= 64 there
  // is room for 128-row Q blocks over the same 4 warps (two m16 tiles per
  // warp): each B fragment then feeds two mmas, halving the shared-memory
  // reads of S and dP per FLOP (measured on the H200: +8% fwd+bwd without a
  // mask band, level with causal, whose diagonal blocks grow). At D = 128
  // that spills ~400 bytes per thread, and at D = 256 the accumulators alone
  // fill the register file (the kernel spills even at 64 x 64; a warp layout
  // splitting columns would not).
  int64_t defaultM = std::max(headDimQK, headDimV) <= 64 ? 128 : 64;
  ForwardTiles tiles{blockM > 0 ? blockM : defaultM, blockN > 0 ? blockN : 64,
                     4};
  tiles.numWarps =
      std::max<int64_t>(1, std::min(tiles.blockM, tiles.blockN) / 16);
  return tiles;
}

void buildCUDABackwardPipeline(OpPassManager &pm,
                               const CUDAPipelineOptions &options,
                               int64_t headDimQK, int64_t headDimV) {
  int64_t shared = options.sharedMemoryBytes > 0
                       ? int64_t(options.sharedMemoryBytes)
                       : defaultSharedMemoryBytes(options.arch);
  ForwardTiles tiles =
      chooseBackwardTiles(headDimQK, headDimV, options.blockM, options.blockN);
  ForwardPipelineOptions program;
  program.blockM = tiles.blockM;
  program.blockN = tiles.blockN;
  program.forward = false;
  program.backward = true;
  program.backwardSchedule = options.backwardSchedule;
  buildForwardTilePipeline(pm, program);
  addSM80Schedule(pm, options, tiles.numWarps, shared);
  pm.addPass(createCSEPass());
}

/// kiln-opt entry: a pass pipeline is built before it sees the IR, so the
/// tiles are sized for the `head-dim` option.
static void buildCUDAForwardPipelineFromIR(OpPassManager &pm,
                                           const CUDAPipelineOptions &options) {
  buildCUDAForwardPipeline(pm, options, options.headDim, options.headDim, 2);
}

static void
buildCUDABackwardPipelineFromIR(OpPassManager &pm,
                                const CUDAPipelineOptions &options) {
  buildCUDABackwardPipeline(pm, options, options.headDim, options.headDim);
}

void registerPipelines() {
  PassPipelineRegistration<CUDAPipelineOptions>(
      "kiln-cuda-bwd-pipeline",
      "Lower attn.attention to its scheduled tgpu backward kernels "
      "(backward-schedule=two-kernel|atomic)",
      buildCUDABackwardPipelineFromIR);
  PassPipelineRegistration<CUDAPipelineOptions>(
      "kiln-cuda-fwd-pipeline",
      "Lower attn.attention to a scheduled tgpu kernel for CUDA emission "
      "(tiles sized for head-dim, default 128)",
      buildCUDAForwardPipelineFromIR);
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
