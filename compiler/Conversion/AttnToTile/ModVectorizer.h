//===- ModVectorizer.h - inline a scalar mod region over a tile -*- C++ -*-===//
//
// score_mod / mask_mod are written for one (q, kv) pair. Inlined into the S
// tile they must run on every element at once: each op whose operands depend
// on a tile (the score, q_idx, kv_idx) is recreated on tiles, while ops that
// depend only on uniform values (b, h, constants) stay scalar and are
// computed once per program.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CONVERSION_ATTNTOTILE_MODVECTORIZER_H
#define KILN_COMPILER_CONVERSION_ATTNTOTILE_MODVECTORIZER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Region.h"

namespace kiln {

/// Inlines `region` (a verified mod) at the builder's insertion point with
/// its block arguments bound to `args` (scalars or tiles of `shape`), and
/// returns the yielded value as a tile of `shape`.
mlir::Value inlineModOverTile(mlir::OpBuilder &builder, mlir::Location loc,
                              mlir::Region &region,
                              llvm::ArrayRef<mlir::Value> args,
                              llvm::ArrayRef<int64_t> shape);

/// Like inlineModOverTile for a score_mod, also returning d(result)/d(score)
/// as a tile (forward-mode differentiation of the region: each op's
/// derivative is built next to it). Fails with a diagnostic on an op that
/// depends on the score and has no derivative rule.
mlir::FailureOr<std::pair<mlir::Value, mlir::Value>> inlineScoreModWithGradient(
    mlir::OpBuilder &builder, mlir::Location loc, mlir::Region &region,
    llvm::ArrayRef<mlir::Value> args, llvm::ArrayRef<int64_t> shape);

/// A tile of `shape` whose elements are all `scalar`.
mlir::Value splatToTile(mlir::OpBuilder &builder, mlir::Location loc,
                        mlir::Value scalar, llvm::ArrayRef<int64_t> shape);

} // namespace kiln

#endif // KILN_COMPILER_CONVERSION_ATTNTOTILE_MODVECTORIZER_H
