//===- TileRank.cpp - along which dimensions a 2-D tile varies ------------===//

#include "dialects/Tile/Transforms/TileRank.h"

#include "dialects/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace kiln::tile {

bool isTile2D(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() == 2;
}

namespace {

/// rankOf memoised per query (a DAG of shared subexpressions is walked
/// once), up to a depth beyond which values count as full.
Rank rankOf(Value v, llvm::DenseMap<Value, Rank> &seen, int depth) {
  if (!isTile2D(v))
    return kFullRank;
  Operation *op = v.getDefiningOp();
  if (!op || depth > 16)
    return kFullRank;
  if (auto it = seen.find(v); it != seen.end())
    return it->second;
  Rank rank = kFullRank;
  if (isa<SplatOp>(op)) {
    rank = kScalarRank;
  } else if (auto iota = dyn_cast<IotaOp>(op)) {
    rank = Rank(1) << iota.getDim();
  } else if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
    // A 1-D tile repeated along `dim` varies along the other dimension.
    rank = Rank(1) << (1 - broadcast.getDim());
  } else if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    rank = dense && dense.isSplat() ? kScalarRank : kFullRank;
  } else if (op->hasTrait<OpTrait::Elementwise>() && op->getNumRegions() == 0 &&
             op->getNumResults() == 1) {
    rank = kScalarRank;
    for (Value operand : op->getOperands())
      rank |= rankOf(operand, seen, depth + 1);
  }
  seen[v] = rank;
  return rank;
}

} // namespace

Rank rankOf(Value v) {
  llvm::DenseMap<Value, Rank> seen;
  return rankOf(v, seen, 0);
}

} // namespace kiln::tile
