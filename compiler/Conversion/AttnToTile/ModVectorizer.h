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

/// A read of a float capture by a score_mod and d(result)/d(value read).
struct CaptureTangent {
  unsigned capture = 0;                   ///< which capture (0-based)
  llvm::SmallVector<mlir::Value> indices; ///< scalars or index tiles
  mlir::Value tangent;                    ///< a tile of `shape`
};

/// A score_mod inlined over a tile with its derivatives.
struct ScoreModGradients {
  mlir::Value value;        ///< the modded score
  mlir::Value scoreTangent; ///< d(result)/d(score)
  /// With captureTangents: one per float memref.load of a capture in the
  /// region (gradients of captured tensors).
  llvm::SmallVector<CaptureTangent> captures;
};

/// inlineScoreModWithGradient, and with `captureTangents` also the
/// derivative of the result with respect to each value the mod reads from a
/// float capture, with the indices it reads it at.
mlir::FailureOr<ScoreModGradients> inlineScoreModWithGradients(
    mlir::OpBuilder &builder, mlir::Location loc, mlir::Region &region,
    llvm::ArrayRef<mlir::Value> args, llvm::ArrayRef<int64_t> shape,
    bool captureTangents);

/// Whether argument `argument` of `mod` (a score_mod's or mask_mod's region)
/// may reach an index of a memory read: a capture read at a position. Only
/// such a mod must see the padding rows and keys of an edge tile clamped
/// into the sequence; ALiBi's slope[h] * (kv - q) need not (the padding's
/// results are masked or never stored).
bool modIndexesMemoryWith(mlir::Region &mod, unsigned argument);

/// A tile of `shape` whose elements are all `scalar`.
mlir::Value splatToTile(mlir::OpBuilder &builder, mlir::Location loc,
                        mlir::Value scalar, llvm::ArrayRef<int64_t> shape);

} // namespace kiln

#endif // KILN_COMPILER_CONVERSION_ATTNTOTILE_MODVECTORIZER_H
