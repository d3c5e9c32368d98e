//===- ChunkAtomicProducts.cpp - column chunks of atomic products ---------===//

#include "compiler/Conversion/TileToTileGPU/ChunkAtomicProducts.h"

#include "dialects/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace kiln {

namespace {

/// `value = [splat *] op(lhs) x load` with the parts it is made of (the lhs
/// may be transposed: the dK/dV kernel holds dSᵀ).
struct AtomicProduct {
  tile::AtomicAddOp add;
  arith::MulFOp scale; ///< may be null
  tile::SplatOp scaleSplat;
  tile::DotOp dot;
  tile::LoadOp rhs;
};

std::optional<AtomicProduct> match(tile::AtomicAddOp add) {
  AtomicProduct p{add, {}, {}, {}, {}};
  Value value = add.getValue();
  if (auto mul = value.getDefiningOp<arith::MulFOp>()) {
    auto splat = mul.getRhs().getDefiningOp<tile::SplatOp>();
    if (!splat || !mul->hasOneUse())
      return std::nullopt;
    p.scale = mul;
    p.scaleSplat = splat;
    value = mul.getLhs();
  }
  p.dot = value.getDefiningOp<tile::DotOp>();
  if (!p.dot || !p.dot->hasOneUse() || p.dot.getAcc() ||
      p.dot.getTransposeRhs())
    return std::nullopt;
  p.rhs = p.dot.getRhs().getDefiningOp<tile::LoadOp>();
  if (!p.rhs || p.rhs.getMask() || p.rhs.getOffsets().size() != 2 ||
      add.getOffsets().size() != 2)
    return std::nullopt;
  return p;
}

} // namespace

void chunkAtomicProducts(func::FuncOp kernel, int64_t columns,
                         int64_t wholeColumns) {
  if (columns <= 0)
    return;
  SmallVector<AtomicProduct> products;
  kernel.walk([&](tile::AtomicAddOp add) {
    auto type = cast<RankedTensorType>(add.getValue().getType());
    if (type.getRank() == 2 &&
        type.getDimSize(1) > std::max(columns, wholeColumns))
      if (std::optional<AtomicProduct> p = match(add))
        products.push_back(*p);
  });
  for (AtomicProduct &p : products) {
    auto type = cast<RankedTensorType>(p.add.getValue().getType());
    auto rhsType = cast<RankedTensorType>(p.rhs.getType());
    int64_t rows = type.getDimSize(0), width = type.getDimSize(1);
    OpBuilder b(p.rhs->getContext());
    SmallVector<tile::LoadOp> chunks;
    SmallVector<tile::SplatOp> scales;
    // The rhs chunks beside the whole rhs, so they are loaded as often as it
    // is (once per program for dQ's K).
    b.setInsertionPointAfter(p.rhs);
    for (int64_t c0 = 0; c0 < width; c0 += columns) {
      int64_t cols = std::min(columns, width - c0);
      Location loc = p.rhs.getLoc();
      // Folded, so that constant columns stay constants (the schedule
      // reads a chunk at a constant column as a window of the whole).
      Value col = b.createOrFold<arith::AddIOp>(
          loc, p.rhs.getOffsets()[1],
          b.createOrFold<arith::ConstantIndexOp>(loc, c0));
      auto chunkType = RankedTensorType::get({rhsType.getDimSize(0), cols},
                                             rhsType.getElementType());
      chunks.push_back(tile::LoadOp::create(
          b, loc, chunkType, p.rhs.getDesc(),
          ValueRange{p.rhs.getOffsets()[0], col}, p.rhs.getFill()));
    }
    if (p.scaleSplat) {
      b.setInsertionPointAfter(p.scaleSplat);
      for (int64_t c0 = 0; c0 < width; c0 += columns)
        scales.push_back(tile::SplatOp::create(
            b, p.scaleSplat.getLoc(),
            RankedTensorType::get({rows, std::min(columns, width - c0)},
                                  type.getElementType()),
            p.scaleSplat.getValue()));
    }
    // Each chunk's product, scale and add where the whole one was.
    b.setInsertionPoint(p.add);
    Location loc = p.add.getLoc();
    for (auto [i, chunk] : llvm::enumerate(chunks)) {
      int64_t c0 = int64_t(i) * columns;
      int64_t cols = cast<RankedTensorType>(chunk.getType()).getDimSize(1);
      Value part = tile::DotOp::create(
          b, p.dot.getLoc(),
          RankedTensorType::get({rows, cols}, type.getElementType()),
          p.dot.getLhs(), chunk, Value(), p.dot.getTransposeLhs(), false);
      if (p.scale)
        part = arith::MulFOp::create(b, p.scale.getLoc(), part, scales[i]);
      Value col = b.createOrFold<arith::AddIOp>(
          loc, p.add.getOffsets()[1],
          b.createOrFold<arith::ConstantIndexOp>(loc, c0));
      tile::AtomicAddOp::create(b, loc, part, p.add.getDesc(),
                                ValueRange{p.add.getOffsets()[0], col},
                                p.add.getTurn());
    }
    p.add.erase();
    if (p.scale)
      p.scale.erase();
    p.dot.erase();
    if (p.scaleSplat && p.scaleSplat->use_empty())
      p.scaleSplat.erase();
    if (p.rhs->use_empty())
      p.rhs.erase();
  }
}

} // namespace kiln
