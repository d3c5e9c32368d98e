//===- Pipelines.h - Kiln's named pass pipelines ----------------*- C++ -*-===//

#ifndef KILN_COMPILER_PIPELINES_PIPELINES_H
#define KILN_COMPILER_PIPELINES_PIPELINES_H

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
      llvm::cl::desc("two-kernel (deterministic) or atomic (atomic dQ)"),
      llvm::cl::init("two-kernel")};
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
      llvm::cl::desc("kiln-cuda-bwd-pipeline: two-kernel (deterministic) or "
                     "atomic (atomic dQ)"),
      llvm::cl::init("two-kernel")};
  Option<int64_t> headDim{
      *this, "head-dim",
      llvm::cl::desc("Head dim the tiles are sized for (kiln-opt only; the "
                     "driver and API use the variant's)"),
      llvm::cl::init(128)};
};

/// Tile sizes of the forward GPU schedule for a head dim and shared-memory
/// budget: the largest KV block that keeps Q, K and V in shared memory and
/// the accumulator in registers.
struct ForwardTiles {
  int64_t blockM, blockN, numWarps;
};
ForwardTiles chooseForwardTiles(llvm::StringRef arch, int64_t sharedBytes,
                                int64_t headDimQK, int64_t headDimV,
                                int64_t elementBytes, int64_t blockM = 0,
                                int64_t blockN = 0);

/// Shared memory a CTA may use on `arch` (opt-in maximum).
int64_t defaultSharedMemoryBytes(llvm::StringRef arch);

/// attn -> tgpu: the forward tile program with the sm_80 schedule (also run
/// on sm_90a), ready for CUDA emission.
void buildCUDAForwardPipeline(mlir::OpPassManager &pm,
                              const CUDAPipelineOptions &options,
                              int64_t headDimQK, int64_t headDimV,
                              int64_t elementBytes);

/// Tile sizes of the backward GPU schedule: BLOCK_M query rows by BLOCK_N
/// keys per step, register tiles split over the warps in m16 tiles (one per
/// warp at 64 rows, two at 128).
ForwardTiles chooseBackwardTiles(int64_t headDimQK, int64_t headDimV,
                                 int64_t blockM = 0, int64_t blockN = 0);

/// attn -> tgpu: the backward kernels (preprocess, dQ or dQ convert, dK/dV)
/// of options.backwardSchedule with the same sm_80 schedule.
void buildCUDABackwardPipeline(mlir::OpPassManager &pm,
                               const CUDAPipelineOptions &options,
                               int64_t headDimQK, int64_t headDimV);

/// Registers `kiln-fwd-tile-pipeline`, `kiln-cpu-lowering-pipeline` and
/// `kiln-cpu-fwd-pipeline`, `kiln-cuda-fwd-pipeline` and
/// `kiln-cuda-bwd-pipeline` for kiln-opt.
void registerPipelines();

} // namespace kiln

#endif // KILN_COMPILER_PIPELINES_PIPELINES_H
