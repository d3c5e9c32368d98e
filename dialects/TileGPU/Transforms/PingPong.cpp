//===- PingPong.cpp - consumer warpgroups take turns on the tensor cores --===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/Passes.h"

#include "dialects/Tile/IR/TileAttrNames.h"
#include "dialects/TileGPU/IR/TileGPUAttrNames.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPUPINGPONG
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln;
using namespace kiln::tgpu;

namespace {

struct TileGPUPingPong
    : public kiln::tgpu::impl::TileGPUPingPongBase<TileGPUPingPong> {
  void runOnOperation() override {
    getOperation()->walk([&](WarpSpecializeOp ws) {
      auto warps =
          ws->getParentOp()->getAttrOfType<IntegerAttr>(attrs::kNumWarps);
      if (!warps || warps.getInt() < 8)
        return; // one consumer warpgroup: no one to take turns with
      Block &consumer = ws.getConsumer().front();
      SmallVector<WarpgroupMmaOp> products;
      scf::ForOp lastLoop;
      for (auto loop : consumer.getOps<scf::ForOp>()) {
        if (!loop->hasAttr(tile::attrs::kKvLoop))
          continue;
        lastLoop = loop;
        for (auto product : loop.getBody()->getOps<WarpgroupMmaOp>())
          if (!product.getAsync() && !product.getPredicate())
            products.push_back(product);
      }
      if (products.empty())
        return;
      OpBuilder b(ws.getContext());
      Location loc = ws.getLoc();
      b.setInsertionPointToStart(&consumer);
      WarpgroupTurnOp::create(b, loc, "start");
      // Each product: wait for the turn, issue, pass the turn on, then wait
      // for the product (the next warpgroup issues meanwhile).
      for (WarpgroupMmaOp product : products) {
        b.setInsertionPoint(product);
        WarpgroupTurnOp::create(b, loc, "wait");
        product.setAsync(true);
        b.setInsertionPointAfter(product);
        WarpgroupTurnOp::create(b, loc, "pass");
        auto done = WarpgroupWaitOp::create(b, loc, product.getType(),
                                            product.getResult(), int64_t(0));
        product.getResult().replaceAllUsesExcept(done.getResult(), done);
      }
      b.setInsertionPointAfter(lastLoop);
      WarpgroupTurnOp::create(b, loc, "end");
    });
  }
};

} // namespace
