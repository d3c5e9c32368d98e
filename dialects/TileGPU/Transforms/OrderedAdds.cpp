//===- OrderedAdds.cpp - an accumulator's reductions in program order -----===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/Passes.h"

#include "dialects/Tile/IR/TileAttrNames.h"
#include "dialects/Tile/IR/TileDialect.h"
#include "dialects/Tile/Transforms/OrderedAdds.h"
#include "dialects/TileGPU/IR/TileGPUAttrNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPUORDEREDADDS
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln;
using namespace kiln::tgpu;

namespace {

/// The constant `v` is, looking through selects of equal constants (a
/// deferred flush's column: the first step's or the previous step's, both 0).
std::optional<int64_t> constantOf(Value v) {
  if (auto select = v.getDefiningOp<arith::SelectOp>()) {
    std::optional<int64_t> a = constantOf(select.getTrueValue());
    std::optional<int64_t> b = constantOf(select.getFalseValue());
    return a && b && *a == *b ? a : std::nullopt;
  }
  return getConstantIntValue(v);
}

/// The argument a descriptor views, or null.
Value viewedBase(Value desc) {
  auto view = desc.getDefiningOp<tile::ViewOp>();
  return view ? view.getBase() : Value();
}

LogicalResult orderKernel(func::FuncOp kernel, const tile::OrderedAdds &order,
                          bool deferredSignal) {
  BlockArgument acc = order.accumulator, turns = order.turns;
  StringAttr accName = kernel.getArgAttrOfType<StringAttr>(
      acc.getArgNumber(), tile::attrs::kWorkspace);
  // The turns wait for programs handed out earlier; a persistent CTA
  // would wait for tiles that only it, or a CTA stuck the same way, could
  // take later.
  if (kernel->hasAttr(attrs::kPersistent))
    return kernel.emitOpError()
           << "ordered adds need one program per CTA (a turn waits for "
              "programs handed out before it); this kernel is persistent";

  // Every add into the accumulator: only the producer's staged reductions
  // can be ordered here.
  SmallVector<CoreAddStagedOp> adds;
  auto unordered = [&](Operation *op) {
    op->emitOpError() << "adds into '" << accName.getValue()
                      << "', whose adds are to be ordered: only the "
                         "producer's reductions (tgpu.core_add_staged) take "
                         "turns";
    return WalkResult::interrupt();
  };
  WalkResult walk = kernel.walk([&](Operation *op) {
    if (auto add = dyn_cast<CoreAddStagedOp>(op)) {
      if (viewedBase(add.getDesc()) == acc)
        adds.push_back(add);
      return WalkResult::advance();
    }
    if (!isa<tile::AtomicAddOp, CoreReduceAddOp, CoreFlushOp, BulkReduceAddOp,
             TmaReduceAddOp>(op))
      return WalkResult::advance();
    // A TMA reduction reaches its array through a tensor map, whose tensor
    // is the array's argument.
    if (auto tma = dyn_cast<TmaReduceAddOp>(op))
      if (auto map = dyn_cast<BlockArgument>(tma.getMap()))
        if (auto info = kernel.getArgAttrOfType<DictionaryAttr>(
                map.getArgNumber(), attrs::kTensorMap))
          if (auto tensor = info.getAs<IntegerAttr>(attrs::kTensorMapTensor);
              tensor && tensor.getInt() == acc.getArgNumber())
            return unordered(op);
    if (llvm::any_of(op->getOperands(),
                     [&](Value operand) { return viewedBase(operand) == acc; }))
      return unordered(op);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (adds.empty())
    return kernel.emitOpError() << "orders adds into '" << accName.getValue()
                                << "' but has no producer reduction into it";

  int64_t rows = order.rows;
  // Turns in arrival order leave the next program a step or more: the
  // producer passes each on at its next turn instead of waiting for the
  // sums.
  bool deferred =
      deferredSignal && order.mark.get("deferred_signal") != nullptr;
  for (CoreAddStagedOp add : adds) {
    auto view = add.getDesc().getDefiningOp<tile::ViewOp>();
    auto staging = cast<MemRefType>(add.getStaging().getType());
    auto descType = cast<tile::DescType>(view.getType());
    // One add per key block and Q block: the whole rows of one block.
    std::optional<int64_t> col = add.getOffsets().size() == 2
                                     ? constantOf(add.getOffsets()[1])
                                     : std::nullopt;
    if (!add.getTurn())
      return add.emitOpError()
             << "adds into '" << accName.getValue()
             << "', whose adds are to be ordered, without a turn";
    if (view.getIndices().size() != 2 || !col || *col != 0 ||
        staging.getRank() != 2 || staging.getDimSize(0) != rows ||
        descType.getRank() != 2 ||
        descType.getShape()[1] == ShapedType::kDynamic ||
        staging.getDimSize(1) != descType.getShape()[1])
      return add.emitOpError()
             << "cannot take turns: an ordered add must add a whole " << rows
             << "-row block of a [batch, head] view at column 0";
    OpBuilder b(add);
    Location loc = add.getLoc();
    MLIRContext *ctx = b.getContext();
    Value counters = tile::ViewOp::create(
        b, loc,
        tile::DescType::get(ctx, {ShapedType::kDynamic}, b.getI32Type()), turns,
        view.getIndices(), b.getDenseI64ArrayAttr({2}));
    Value block =
        arith::DivUIOp::create(b, loc, add.getOffsets()[0],
                               arith::ConstantIndexOp::create(b, loc, rows));
    TurnWaitOp::create(b, loc, counters, block, add.getTurn());
    b.setInsertionPointAfter(add);
    TurnSignalOp::create(b, loc, counters, block, deferred);
  }
  return success();
}

struct TileGPUOrderedAdds
    : kiln::tgpu::impl::TileGPUOrderedAddsBase<TileGPUOrderedAdds> {
  using TileGPUOrderedAddsBase::TileGPUOrderedAddsBase;
  void runOnOperation() override {
    auto order = [&](func::FuncOp kernel, const tile::OrderedAdds &adds) {
      return orderKernel(kernel, adds, deferredSignal);
    };
    if (failed(tile::forEachOrderedKernel(getOperation(), order)))
      signalPassFailure();
  }
};

} // namespace
