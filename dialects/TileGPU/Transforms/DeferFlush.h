//===- DeferFlush.h - a step's share added in the next step ---*- C++ -*-===//
//
// tgpu-bulk-reductions' `defer-flush`: a tgpu.core_reduce_add in a loop's
// step becomes a tgpu.core_stage where it is and a tgpu.core_flush of the
// staged tile in the next step, so that the fence in front of the bulk
// reductions (which waits for the staging stores to complete) runs once
// they have.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_TILEGPU_TRANSFORMS_DEFERFLUSH_H
#define KILN_DIALECTS_TILEGPU_TRANSFORMS_DEFERFLUSH_H

#include "dialects/TileGPU/IR/TileGPUDialect.h"

namespace kiln::tgpu {

/// Splits `add`, an op of an scf.for's body, into a tgpu.core_stage in its
/// place and a tgpu.core_flush of the staged tile in the next step (before
/// the step's first tgpu.warpgroup_wait ahead of the stage, where the warps
/// wait for products anyway; else at the step's start) where that step is
/// not the first, and after the loop for its last step. The flushes compute
/// the view and offsets of the step they add again from its induction
/// variable. Returns false (and leaves `add` alone) where its parent is not
/// an scf.for over index (signed bounds) in a warp-specialized kernel's
/// consumers, another op of the loop uses its staging buffer, its view or
/// offsets depend on more of the step than its induction variable and pure
/// ops, or the step's register estimate (stepRegisters) exceeds the
/// consumers' budget.
bool deferCoreFlush(CoreReduceAddOp add);

} // namespace kiln::tgpu

#endif // KILN_DIALECTS_TILEGPU_TRANSFORMS_DEFERFLUSH_H
