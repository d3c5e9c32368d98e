//===- Staging.h - shared buffers that register tiles leave through -*- C++
//-*-===//
//
// A register tile sent to global memory by the copy engine (bulk reductions,
// TMA tensor reductions and stores) is first staged in a shared buffer: the
// helpers that place such buffers without costing the kernel a CTA per
// multiprocessor, find the tensor a tensor map can describe, and wait for
// the copies where the region that issued them ends.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_TILEGPU_TRANSFORMS_STAGING_H
#define KILN_DIALECTS_TILEGPU_TRANSFORMS_STAGING_H

#include "dialects/Tile/IR/TileDialect.h"
#include "dialects/TileGPU/IR/TileGPUDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln::tgpu {

/// The block whose end a copy issued at `op` must be complete by: the
/// consumer region of a warp-specialized kernel, else the kernel's body.
/// Null for an op in a producer region (which runs on one thread).
mlir::Block *stagingRegionEnd(mlir::Operation *op, mlir::func::FuncOp kernel);

/// The kernel's tensor or workspace argument `view` reads (rank 2 to 5), or
/// null: what a tensor map can describe (the runtime encodes it per launch).
mlir::BlockArgument mappableBase(tile::ViewOp view, mlir::func::FuncOp kernel);

/// Appends a shared buffer of each of `types` after the kernel's top-level
/// buffers and lays the kernel's buffers out again. Where they would not fit
/// `limit` beside the others without losing a CTA per multiprocessor (a
/// warp-specialized kernel runs tgpu.ctas_per_sm, 1 when absent; any other
/// as many as its shared memory and `minRegisters` per thread allow), they
/// are removed again and `buffers` is left empty. Fails only where the
/// kernel's own buffers exceed `limit`.
mlir::LogicalResult
addStagingBuffers(mlir::func::FuncOp kernel, llvm::ArrayRef<mlir::Type> types,
                  int64_t limit, int64_t minRegisters,
                  llvm::SmallVectorImpl<SharedAllocOp> &buffers);

/// A tgpu.bulk_wait at the end of each block in `ends` (before its
/// terminator; none where one is already last): the copies issued in it are
/// complete before it ends.
void waitAtEnds(llvm::ArrayRef<mlir::Block *> ends, mlir::Location loc);

} // namespace kiln::tgpu

#endif // KILN_DIALECTS_TILEGPU_TRANSFORMS_STAGING_H
