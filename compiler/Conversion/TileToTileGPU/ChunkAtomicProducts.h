//===- ChunkAtomicProducts.h - column chunks of atomic products -*- C++ -*-===//

#ifndef KILN_COMPILER_CONVERSION_TILETOTILEGPU_CHUNKATOMICPRODUCTS_H
#define KILN_COMPILER_CONVERSION_TILETOTILEGPU_CHUNKATOMICPRODUCTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln {

/// Splits every `tile.atomic_add` of a product `[scale *] lhs x load` wider
/// than `columns` into products of column chunks of at most `columns`, each
/// added on its own; the chunks of the loaded rhs are loaded beside it (the
/// schedule reads them as windows of its staged buffer, not a second copy).
/// A register-budget decision of the GPU schedule: the atomic backward's
/// dQ share (BLOCK_M x D f32) would sit in registers next to the dK and dV
/// accumulators and spill. Products of other shapes, and those at most
/// `wholeColumns` wide, are left whole (on sm_90a wgmma reads the rhs of a
/// whole product from its staged tile, but not through a window of it).
void chunkAtomicProducts(mlir::func::FuncOp kernel, int64_t columns,
                         int64_t wholeColumns = 0);

} // namespace kiln

#endif // KILN_COMPILER_CONVERSION_TILETOTILEGPU_CHUNKATOMICPRODUCTS_H
