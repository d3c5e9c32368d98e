//===- TileRank.h - along which dimensions a 2-D tile varies ----*- C++ -*-===//
//
// On the GPU a 2-D tile's elements are spread over a thread's registers: a
// value that varies along one dimension only (a row's query position, a
// column's key position, a splat) is computed once per row or column a
// thread holds, while an op whose operands vary along both dimensions costs
// one instruction per element. The float rewrites that move work off the
// elements (tile-reassociate-low-rank, tile-row-terms-after-max) ask this of
// a value.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_TILE_TRANSFORMS_TILERANK_H
#define KILN_DIALECTS_TILE_TRANSFORMS_TILERANK_H

#include "mlir/IR/Value.h"

namespace kiln::tile {

/// Along which dimensions of a 2-D tile a value varies: bit d for dimension
/// d (0: a splat, 3: every element its own).
using Rank = unsigned;
constexpr Rank kScalarRank = 0, kFullRank = 3;

/// The rank of `v` as its definition shows it: `tile.splat` and splat
/// constants, `tile.iota` along its dimension, `tile.broadcast` along the
/// other one, and one-result elementwise ops the union of their operands';
/// anything else
/// (and a value that is not a 2-D tile, or a definition deeper than a bound)
/// counts as full.
Rank rankOf(mlir::Value v);

/// Whether `v` is a 2-D tile.
bool isTile2D(mlir::Value v);

} // namespace kiln::tile

#endif // KILN_DIALECTS_TILE_TRANSFORMS_TILERANK_H
