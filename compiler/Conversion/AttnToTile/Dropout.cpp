//===- Dropout.cpp - dropout in the attn -> tile lowerings ----------------===//

#include "compiler/Conversion/AttnToTile/Dropout.h"

#include "dialects/Tile/IR/TileAttrNames.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace kiln {

KernelArgDecl dropoutRngArg(Builder &b) {
  return {KernelArgDecl::Role::Tensor,
          stridedMemRef(b.getContext(), {ShapedType::kDynamic}, b.getI64Type()),
          "dropout_rng",
          {tile::sizeConstant(b, 2)}};
}

std::pair<Value, Value> loadDropoutRng(ProgramBuilder &pb, Value rng) {
  Value seed = memref::LoadOp::create(pb.b, pb.loc, rng, pb.index(0));
  Value offset = memref::LoadOp::create(pb.b, pb.loc, rng, pb.index(1));
  return {seed, offset};
}

Value dropoutKeep(ProgramBuilder &pb, attn::AttentionOp spec,
                  ArrayRef<int64_t> shape, Value seed, Value offset,
                  Value batch, Value head, Value qStart, Value kvStart,
                  bool keysByQueries) {
  OpBuilder &b = pb.b;
  auto i32Tile = RankedTensorType::get(shape, b.getI32Type());
  auto bits = tile::PhiloxOp::create(b, pb.loc, i32Tile, seed, offset, batch,
                                     head, qStart, kvStart, keysByQueries,
                                     spec.getDropoutWidth());
  Value threshold = arith::ConstantOp::create(
      b, pb.loc, b.getI32IntegerAttr(spec.getDropoutThreshold()));
  return arith::CmpIOp::create(b, pb.loc, arith::CmpIPredicate::ult, bits,
                               pb.splat(threshold, shape));
}

} // namespace kiln
