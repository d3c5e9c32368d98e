//===- RegisterEstimate.h - registers a loop's tiles hold -------*- C++ -*-===//
//
// Estimates, before ptxas allocates anything, of the 32-bit registers a
// thread spends on register tiles: what the scheduling passes weigh when a
// choice (a vector loaded a step ahead, a third CTA per multiprocessor)
// would take registers the step's own tiles need.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_TILEGPU_TRANSFORMS_REGISTERESTIMATE_H
#define KILN_DIALECTS_TILEGPU_TRANSFORMS_REGISTERESTIMATE_H

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln::tgpu {

/// 32-bit registers a thread holds of a register tile (#tgpu.mma, rows or
/// cols layout; 0 for anything else).
int64_t registersPerThread(mlir::Type type);

/// Registers held across every step of `loop`: the tiles it carries, and
/// the register tiles made before it and read in it (but for splats, which
/// are scalars, and broadcasts, which hold their vector).
int64_t registersAcrossSteps(mlir::scf::ForOp loop);

/// The registers of the largest 2-D register tile a step of `loop` makes
/// (S, dP: the products' accumulators).
int64_t largestStepTile(mlir::scf::ForOp loop);

/// A step of `loop` at its fullest: what it holds across steps, two of its
/// largest tiles (S and dP in flight together) and 32 for the rest (indices,
/// addresses). Calibrated on ptxas -v of the dQ and dK/dV kernels.
int64_t stepRegisters(mlir::scf::ForOp loop);

} // namespace kiln::tgpu

#endif // KILN_DIALECTS_TILEGPU_TRANSFORMS_REGISTERESTIMATE_H
