//===- CheckTurns.cpp - adds out of their turn made NaN on the CPU --------===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/Tile/Transforms/OrderedAdds.h"
#include "dialects/Tile/Transforms/Passes.h"

#include "dialects/Tile/IR/TileAttrNames.h"
#include "dialects/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

#include <limits>

namespace kiln::tile {
#define GEN_PASS_DEF_TILECHECKTURNS
#include "dialects/Tile/Transforms/Passes.h.inc"
} // namespace kiln::tile

using namespace mlir;
using namespace kiln;

namespace {

LogicalResult checkKernel(func::FuncOp kernel, const tile::OrderedAdds &order) {
  Value turns = order.turns;
  SmallVector<tile::AtomicAddOp> adds;
  kernel.walk([&](tile::AtomicAddOp add) {
    auto view = add.getDesc().getDefiningOp<tile::ViewOp>();
    if (view && view.getBase() == order.accumulator)
      adds.push_back(add);
  });
  for (tile::AtomicAddOp add : adds) {
    auto view = add.getDesc().getDefiningOp<tile::ViewOp>();
    if (!add.getTurn() || view.getIndices().size() != 2 ||
        add.getOffsets().empty())
      return add.emitOpError()
             << "adds into an ordered accumulator without a turn, or through "
                "a view that is not [batch, head]";
    OpBuilder b(add);
    Location loc = add.getLoc();
    Value block = arith::DivUIOp::create(
        b, loc, add.getOffsets()[0],
        arith::ConstantIndexOp::create(b, loc, order.rows));
    SmallVector<Value> at{view.getIndices()[0], view.getIndices()[1], block};
    Value count = memref::LoadOp::create(b, loc, turns, at);
    Value turn =
        arith::IndexCastOp::create(b, loc, b.getI32Type(), add.getTurn());
    Value inTurn =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, count, turn);
    auto type = cast<RankedTensorType>(add.getValue().getType());
    Value inTurnTile = tile::SplatOp::create(
        b, loc, RankedTensorType::get(type.getShape(), b.getI1Type()), inTurn);
    Value nan = tile::SplatOp::create(
        b, loc, type,
        arith::ConstantOp::create(
            b, loc,
            b.getFloatAttr(type.getElementType(),
                           std::numeric_limits<double>::quiet_NaN())));
    Value value =
        arith::SelectOp::create(b, loc, inTurnTile, add.getValue(), nan);
    add.getValueMutable().assign(value);
    Value next = arith::AddIOp::create(
        b, loc, count,
        arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(1)));
    memref::StoreOp::create(b, loc, next, turns, at);
  }
  return success();
}

struct TileCheckTurns : kiln::tile::impl::TileCheckTurnsBase<TileCheckTurns> {
  void runOnOperation() override {
    if (failed(tile::forEachOrderedKernel(getOperation(), checkKernel)))
      signalPassFailure();
  }
};

} // namespace
