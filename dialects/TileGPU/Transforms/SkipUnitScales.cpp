//===- SkipUnitScales.cpp - a loop-carried tile's row scaling by vote -----===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/Passes.h"

#include "dialects/Tile/IR/TileAttrNames.h"
#include "dialects/Tile/IR/TileDialect.h"
#include "dialects/TileGPU/IR/TileGPUDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPUSKIPUNITSCALES
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln;

namespace {

/// Whether v is a KV loop's carried value (the accumulator): elsewhere (the
/// epilogue's 1 / l, the combine kernel's loop over splits) a factor is
/// rarely 1 and the vote would be wasted.
bool isCarried(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  auto loop =
      arg ? dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()) : scf::ForOp();
  return loop && loop->hasAttr(tile::attrs::kKvLoop) &&
         arg.getArgNumber() >= loop.getNumInductionVars();
}

struct TileGPUSkipUnitScales
    : kiln::tgpu::impl::TileGPUSkipUnitScalesBase<TileGPUSkipUnitScales> {
  void runOnOperation() override {
    SmallVector<arith::MulFOp> muls;
    getOperation()->walk([&](arith::MulFOp mul) { muls.push_back(mul); });
    for (arith::MulFOp mul : muls) {
      auto type = dyn_cast<RankedTensorType>(mul.getType());
      auto mma = type
                     ? dyn_cast_or_null<tgpu::MmaLayoutAttr>(type.getEncoding())
                     : tgpu::MmaLayoutAttr();
      if (!mma || mma.getColGroups() != 1 || !type.getElementType().isF32())
        continue;
      for (int i = 0; i < 2; ++i) {
        Value value = mul->getOperand(i);
        auto broadcast =
            mul->getOperand(1 - i).getDefiningOp<tile::BroadcastOp>();
        if (!broadcast || broadcast.getDim() != 1 || !isCarried(value))
          continue;
        auto factors = cast<RankedTensorType>(broadcast.getSource().getType());
        auto rows =
            dyn_cast_or_null<tgpu::RowsLayoutAttr>(factors.getEncoding());
        if (!rows || rows.getWarps() != mma.getWarps())
          continue;
        OpBuilder b(mul);
        auto scaled = tgpu::ScaleRowsOp::create(b, mul.getLoc(), type, value,
                                                broadcast.getSource());
        mul.replaceAllUsesWith(scaled.getResult());
        mul.erase();
        if (broadcast->use_empty())
          broadcast.erase();
        break;
      }
    }
  }
};

} // namespace
