//===- ModRegion.h - rules shared by score_mod / mask_mod users -*- C++ -*-===//
//
// score_mod and mask_mod regions are small scalar programs. The verifier, the
// tile vectorizer (attn -> tile) and the float64 interpreter used by the
// reference all accept exactly the ops listed here, so a region that
// verifies can always be lowered and checked.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_ATTN_IR_MODREGION_H
#define KILN_DIALECTS_ATTN_IR_MODREGION_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Region.h"

namespace kiln::attn {

enum class ModKind { Score, Mask };

/// Leading block arguments before the captures: (score, b, h, q, kv) for
/// score_mod, (b, h, q, kv) for mask_mod.
unsigned getNumLeadingModArgs(ModKind kind);

/// True for the scalar ops a mod region may contain (the terminator aside).
bool isSupportedModOp(mlir::Operation *op);

/// Checks the block signature, the terminator and every op of a mod region;
/// diagnostics point at the offending op or argument.
mlir::LogicalResult verifyModRegion(mlir::Operation *owner,
                                    mlir::Region &region, ModKind kind,
                                    llvm::ArrayRef<mlir::Type> captureTypes);

} // namespace kiln::attn

#endif // KILN_DIALECTS_ATTN_IR_MODREGION_H
