//===- StepValues.h - a loop step's scalars computed for another step -*- C++
//-*-===//
//
// Passes that move work between steps of a KV or Q loop (defer-flush, the
// producer's reductions) need the offsets and views a step computed from its
// induction variable at another step's: they clone the pure ops in between
// rather than carry the values across steps in registers.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_TILEGPU_TRANSFORMS_STEPVALUES_H
#define KILN_DIALECTS_TILEGPU_TRANSFORMS_STEPVALUES_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace kiln::tgpu {

/// Whether `v`, computed in `loop`'s step, depends on the step only through
/// its induction variable and pure, region-free ops of the loop's body (so
/// another step's value can be computed again from that step's induction
/// variable). With `speculatable`, ops free of memory effects that are not
/// pure are taken too (an integer division by a value the step did not fix:
/// undefined where it is 0, as where the loop runs no step), and clear it:
/// such values may be computed again for steps that ran only.
bool recomputable(mlir::scf::ForOp loop, mlir::Value v,
                  bool *speculatable = nullptr);

/// Clones the ops of `loop`'s step that `v` (recomputable) needs at `b`,
/// under `mapping` (the induction variable to another step's); returns the
/// clone's value (or `v` where it is defined outside the loop).
mlir::Value recompute(mlir::OpBuilder &b, mlir::scf::ForOp loop, mlir::Value v,
                      mlir::IRMapping &mapping);

/// Erases the ops of `values` and the ops only they read, where nothing else
/// reads them (a rewritten op's own offsets); each op once, whatever repeats.
void eraseIfDead(llvm::ArrayRef<mlir::Value> values);

} // namespace kiln::tgpu

#endif // KILN_DIALECTS_TILEGPU_TRANSFORMS_STEPVALUES_H
