//===- OverlapLaunches.cpp - programmatic dependent launch of kernels -----===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/Passes.h"

#include "dialects/TileGPU/IR/TileGPUAttrNames.h"
#include "dialects/TileGPU/IR/TileGPUDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPUOVERLAPLAUNCHES
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln;

namespace {

struct TileGPUOverlapLaunches
    : public tgpu::impl::TileGPUOverlapLaunchesBase<TileGPUOverlapLaunches> {
  using TileGPUOverlapLaunchesBase::TileGPUOverlapLaunchesBase;

  void runOnOperation() override {
    getOperation()->walk([&](func::FuncOp kernel) {
      // (griddepcontrol is sm_90's: an sm_80 kernel is left as it is.)
      auto arch = kernel->getAttrOfType<StringAttr>(tgpu::attrs::kArch);
      if (!kernel->hasAttr(tgpu::attrs::kNumWarps) ||
          kernel.getBody().empty() ||
          kernel->hasAttr(tgpu::attrs::kOverlapsPriorGrid) || !arch ||
          !arch.getValue().starts_with("sm_90"))
        return;
      // First in the entry block, ahead of every read or write of global
      // memory: the launch of the next kernel is allowed at once (its CTAs
      // wait for this grid in their own wait), and this kernel's work
      // starts only once the grids before it have completed.
      OpBuilder b = OpBuilder::atBlockBegin(&kernel.front());
      tgpu::LaunchDependentsOp::create(b, kernel.getLoc());
      tgpu::WaitPriorGridsOp::create(b, kernel.getLoc());
      kernel->setAttr(tgpu::attrs::kOverlapsPriorGrid, b.getUnitAttr());
    });
  }
};

} // namespace
