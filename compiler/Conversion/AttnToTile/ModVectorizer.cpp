//===- ModVectorizer.cpp - inline a scalar mod region over a tile ---------===//

#include "compiler/Conversion/AttnToTile/ModVectorizer.h"

#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Tile/IR/TileDialect.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace kiln {

Value splatToTile(OpBuilder &builder, Location loc, Value scalar,
                  ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, scalar.getType());
  return tile::SplatOp::create(builder, loc, type, scalar);
}

static bool isTile(Value v) { return isa<RankedTensorType>(v.getType()); }

Value inlineModOverTile(OpBuilder &builder, Location loc, Region &region,
                        ArrayRef<Value> args, ArrayRef<int64_t> shape) {
  Block &block = region.front();
  assert(block.getNumArguments() == args.size() && "one value per argument");
  IRMapping mapping;
  mapping.map(block.getArguments(), args);

  auto asTile = [&](Value v) {
    return isTile(v) ? v : splatToTile(builder, loc, v, shape);
  };

  for (Operation &op : block.without_terminator()) {
    SmallVector<Value> operands;
    for (Value operand : op.getOperands())
      operands.push_back(mapping.lookup(operand));

    // A read of a captured tensor: the memref stays, indices may be tiles.
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      if (llvm::none_of(load.getIndices(), [&](Value i) {
            return isTile(mapping.lookup(i));
          })) {
        builder.clone(op, mapping);
        continue;
      }
      SmallVector<Value> indices;
      for (Value index : load.getIndices())
        indices.push_back(asTile(mapping.lookup(index)));
      auto type = RankedTensorType::get(shape, load.getType());
      Value gathered = tile::GatherOp::create(
          builder, op.getLoc(), type, mapping.lookup(load.getMemRef()),
          indices);
      mapping.map(load.getResult(), gathered);
      continue;
    }

    // Uniform ops (no tile operand) are computed once, as scalars.
    if (llvm::none_of(operands, isTile)) {
      builder.clone(op, mapping);
      continue;
    }

    // Elementwise arith/math: the same op on tiles, scalars splatted.
    SmallVector<Value> tileOperands;
    for (Value operand : operands)
      tileOperands.push_back(asTile(operand));
    SmallVector<Type> resultTypes;
    for (Type t : op.getResultTypes())
      resultTypes.push_back(RankedTensorType::get(shape, t));
    OperationState state(op.getLoc(), op.getName(), tileOperands, resultTypes,
                         op.getAttrs());
    Operation *vectorized = builder.create(state);
    mapping.map(op.getResults(), vectorized->getResults());
  }

  auto yield = cast<attn::YieldOp>(block.getTerminator());
  return asTile(mapping.lookup(yield.getValues().front()));
}

} // namespace kiln
