//===- Dropout.h - dropout in the attn -> tile lowerings -------*- C++ -*-===//
//
// A variant with dropout_p reads its generator state from a `dropout_rng`
// tensor [2] of i64 (seed, offset) and zeroes the dropped attention weights
// of each tile by the uniforms of tile.philox (16 or 8 bits: dropout_bits),
// which depend only on the state and the element's (batch, head, q, kv): the
// backward programs regenerate the forward's mask, and nothing N x N is ever
// stored.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CONVERSION_ATTNTOTILE_DROPOUT_H
#define KILN_COMPILER_CONVERSION_ATTNTOTILE_DROPOUT_H

#include "compiler/Conversion/AttnToTile/KernelSignature.h"
#include "compiler/Conversion/AttnToTile/ProgramBuilder.h"

namespace kiln {

/// The `dropout_rng` argument: a tensor [2] of i64, (seed, offset).
KernelArgDecl dropoutRngArg(mlir::Builder &b);

/// The seed and the offset, read from the `dropout_rng` argument.
std::pair<mlir::Value, mlir::Value> loadDropoutRng(ProgramBuilder &pb,
                                                   mlir::Value rng);

/// True where the weight of a tile element is kept: its uniform is below
/// the variant's threshold. The tile is queries by keys starting at
/// (qStart, kvStart), or keys by queries.
mlir::Value dropoutKeep(ProgramBuilder &pb, attn::AttentionOp spec,
                        llvm::ArrayRef<int64_t> shape, mlir::Value seed,
                        mlir::Value offset, mlir::Value batch, mlir::Value head,
                        mlir::Value qStart, mlir::Value kvStart,
                        bool keysByQueries);

} // namespace kiln

#endif // KILN_COMPILER_CONVERSION_ATTNTOTILE_DROPOUT_H
