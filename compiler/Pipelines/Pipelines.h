//===- Pipelines.h - Kiln's named pass pipelines ----------------*- C++ -*-===//

#ifndef KILN_COMPILER_PIPELINES_PIPELINES_H
#define KILN_COMPILER_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace kiln {

struct ForwardPipelineOptions
    : public mlir::PassPipelineOptions<ForwardPipelineOptions> {
  Option<int64_t> blockM{*this, "block-m", llvm::cl::desc("Query rows per program"),
                         llvm::cl::init(64)};
  Option<int64_t> blockN{*this, "block-n", llvm::cl::desc("Keys per KV step"),
                         llvm::cl::init(64)};
  Option<bool> splitMaskedBlocks{
      *this, "split-masked-blocks",
      llvm::cl::desc("Skip the per-element mask on fully visible KV blocks"),
      llvm::cl::init(true)};
};

/// attn -> tile: the forward tile program of every attn.attention.
void buildForwardTilePipeline(mlir::OpPassManager &pm,
                              const ForwardPipelineOptions &options);

/// tile -> LLVM dialect for the CPU JIT.
void buildCPULoweringPipeline(mlir::OpPassManager &pm);

/// attn -> LLVM dialect: both of the above.
void buildCPUForwardPipeline(mlir::OpPassManager &pm,
                             const ForwardPipelineOptions &options);

/// Registers `kiln-fwd-tile-pipeline`, `kiln-cpu-lowering-pipeline` and
/// `kiln-cpu-fwd-pipeline` for kiln-opt.
void registerPipelines();

} // namespace kiln

#endif // KILN_COMPILER_PIPELINES_PIPELINES_H
