//===- Rings.h - positions in a ring of shared buffers ---------*- C++ -*-===//
//
// A ring of S shared buffers used by turns, each guarded by mbarriers whose
// phases alternate: the producer's loads into the rings of a warp-specialized
// kernel (tgpu-warp-specialize), and the two staging buffers of the producer's
// reductions (tgpu-bulk-reductions producer-reductions). Both sides of a ring
// number its uses the same way and derive the buffer and the barrier phase's
// parity from the number.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_TILEGPU_TRANSFORMS_RINGS_H
#define KILN_DIALECTS_TILEGPU_TRANSFORMS_RINGS_H

#include "mlir/IR/Builders.h"

namespace kiln::tgpu {

/// A use of a ring: its stage (n mod S) and the parity of its pass over the
/// ring ((n / S) mod 2).
struct RingPosition {
  mlir::Value stage, parity;
};

/// The position of use `n` of a ring of `stages` buffers.
RingPosition ringPosition(mlir::OpBuilder &b, mlir::Location loc, mlir::Value n,
                          int64_t stages);

/// The use number base + (iv - lb) / step of a loop's step.
mlir::Value stepNumber(mlir::OpBuilder &b, mlir::Location loc, mlir::Value iv,
                       mlir::Value lb, mlir::Value step, mlir::Value base);

/// The stage's buffer among `stages` (a chain of selects; one stage: the
/// buffer).
mlir::Value stageBuffer(mlir::OpBuilder &b, mlir::Location loc,
                        llvm::ArrayRef<mlir::Value> stages, mlir::Value stage);

} // namespace kiln::tgpu

#endif // KILN_DIALECTS_TILEGPU_TRANSFORMS_RINGS_H
