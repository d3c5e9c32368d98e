//===- LongestFirst.cpp - launch the longest query blocks first ------------===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/Passes.h"

#include "dialects/Tile/IR/TileAttrNames.h"
#include "dialects/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPULONGESTFIRST
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln;

namespace {

/// Whether `v` is computed from `pid` (through ops of the kernel's body).
bool dependsOn(Value v, Value pid) {
  SmallVector<Value> work{v};
  llvm::SmallPtrSet<Value, 16> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (x == pid)
      return true;
    if (!seen.insert(x).second)
      continue;
    if (Operation *def = x.getDefiningOp())
      work.append(def->operand_begin(), def->operand_end());
  }
  return false;
}

struct TileGPULongestFirst
    : public kiln::tgpu::impl::TileGPULongestFirstBase<TileGPULongestFirst> {
  void runOnOperation() override {
    getOperation()->walk([&](func::FuncOp kernel) { runOnKernel(kernel); });
  }

  void runOnKernel(func::FuncOp kernel) {
    auto blockM = kernel->getAttrOfType<IntegerAttr>(tile::attrs::kBlockM);
    if (!blockM || kernel.getBody().empty() ||
        kernel->hasAttr(tile::attrs::kBackwardStage))
      return;
    Block &entry = kernel.front();
    tile::ProgramIdOp pid;
    SmallVector<scf::ForOp> loops;
    for (Operation &op : entry) {
      if (auto p = dyn_cast<tile::ProgramIdOp>(op); p && p.getAxis() == 0)
        pid = p;
      if (auto loop = dyn_cast<scf::ForOp>(op);
          loop && loop->hasAttr(tile::attrs::kKvLoop))
        loops.push_back(loop);
    }
    if (!pid || loops.empty())
      return;
    // The block's keys run from the first loop's start to the last loop's
    // end: longer for later blocks when only the end moves with the block.
    if (!dependsOn(loops.back().getUpperBound(), pid) ||
        dependsOn(loops.front().getLowerBound(), pid))
      return;
    // The query rows come from the kernel argument named "q": its rows
    // give the number of blocks.
    tile::ViewOp queries;
    for (Operation &op : entry)
      if (auto view = dyn_cast<tile::ViewOp>(op))
        if (auto arg = dyn_cast<BlockArgument>(view.getBase()))
          if (auto name = kernel.getArgAttrOfType<StringAttr>(
                  arg.getArgNumber(), tile::attrs::kTensor);
              name && name.getValue() == "q" && !queries)
            queries = view;
    if (!queries)
      return;
    OpBuilder b(kernel.getContext());
    b.setInsertionPointAfter(queries.getOperation()->isBeforeInBlock(pid)
                                 ? pid.getOperation()
                                 : queries.getOperation());
    Location loc = pid.getLoc();
    Value rows =
        tile::DimOp::create(b, loc, b.getIndexType(), queries.getResult(), 0);
    Value blocks = arith::CeilDivSIOp::create(
        b, loc, rows, arith::ConstantIndexOp::create(b, loc, blockM.getInt()));
    Value last = arith::SubIOp::create(
        b, loc, blocks, arith::ConstantIndexOp::create(b, loc, 1));
    Value reversed = arith::SubIOp::create(b, loc, last, pid.getResult());
    pid.getResult().replaceAllUsesExcept(reversed, reversed.getDefiningOp());
  }
};

} // namespace
