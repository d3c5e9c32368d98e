//===- Pipelines.cpp - Kiln's named pass pipelines ------------------------===//

#include "compiler/Pipelines/Pipelines.h"

#include "compiler/Conversion/Passes.h"
#include "dialects/Attn/Transforms/Passes.h"

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
  // The FlashAttention-2 forward program, mods inlined into the S tile.
  ConvertAttnToTileOptions lowering;
  lowering.blockM = options.blockM;
  lowering.blockN = options.blockN;
  lowering.splitMaskedBlocks = options.splitMaskedBlocks;
  pm.addPass(createConvertAttnToTile(lowering));
  // Fold the index arithmetic of the bounds and share repeated constants;
  // hoist what does not change across KV steps (iotas, splats, capture reads
  // indexed by head) out of the KV loops.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createLoopInvariantCodeMotionPass());
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
  // bf16 <-> f32 casts as integer ops: the JIT then needs no soft-float
  // runtime symbols.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // exp2/log2 become LLVM intrinsics; what has none (tanh, erf) calls libm.
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

void registerPipelines() {
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
