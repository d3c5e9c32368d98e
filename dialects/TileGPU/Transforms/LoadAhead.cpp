//===- LoadAhead.cpp - a step's read-only vectors loaded one step ahead ---===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/Passes.h"
#include "dialects/TileGPU/Transforms/RegisterEstimate.h"

#include "dialects/Tile/IR/TileDialect.h"
#include "dialects/TileGPU/IR/TileGPUAttrNames.h"
#include "dialects/TileGPU/IR/TileGPUDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPULOADAHEAD
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln;

namespace {

/// The kernel argument a descriptor views (through `tile.view`s), or null.
BlockArgument rootArgument(Value desc) {
  while (auto view = desc.getDefiningOp<tile::ViewOp>())
    desc = view->getOperand(0);
  auto arg = dyn_cast<BlockArgument>(desc);
  if (!arg || !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
    return {};
  return arg;
}

/// Whether any op of the kernel may write the array `arg`: an op that takes
/// a value rooted at it and is not a view or a load, or one that takes a
/// tensor map of it and is not a TMA load (TMA stores and reductions name
/// their array by its map). A load moved across such a write could read a
/// stale value.
bool mayBeWritten(func::FuncOp kernel, BlockArgument arg) {
  for (BlockArgument map : kernel.getArguments()) {
    auto info = kernel.getArgAttrOfType<DictionaryAttr>(
        map.getArgNumber(), tgpu::attrs::kTensorMap);
    auto tensor = info ? info.getAs<IntegerAttr>(tgpu::attrs::kTensorMapTensor)
                       : IntegerAttr();
    if (!tensor || tensor.getInt() != int64_t(arg.getArgNumber()))
      continue;
    for (Operation *user : map.getUsers())
      if (!isa<tgpu::TmaLoadOp, tgpu::TmaLoadPagesOp>(user))
        return true;
  }
  WalkResult result = kernel.walk([&](Operation *op) {
    if (isa<tile::ViewOp, tile::LoadOp>(op))
      return WalkResult::advance();
    for (Value operand : op->getOperands())
      if (rootArgument(operand) == arg)
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// Whether `v` can be computed again for another step: defined outside the
/// loop, the induction variable, or a pure op of the body (no regions) over
/// such values. Pure, so that computing it for a step that never runs (the
/// one past the last) cannot fault: no division by a value that may be 0.
/// `iv` is set where `v` depends on the induction variable.
bool recomputable(scf::ForOp loop, Value v, bool &iv, int depth = 0) {
  if (v == loop.getInductionVar()) {
    iv = true;
    return true;
  }
  if (loop.isDefinedOutsideOfLoop(v))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != loop.getBody() || depth > 8 ||
      def->getNumRegions() != 0 || !isPure(def))
    return false;
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return recomputable(loop, operand, iv, depth + 1);
  });
}

/// Clones the ops of `body` that `v` depends on, and `v`'s own op, at `b`
/// under `mapping` (which maps the induction variable to another step's).
Value cloneFor(OpBuilder &b, Block *body, Value v, IRMapping &mapping) {
  if (Value mapped = mapping.lookupOrNull(v))
    return mapped;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != body)
    return v; // defined outside the loop
  for (Value operand : def->getOperands())
    cloneFor(b, body, operand, mapping);
  Operation *clone = b.clone(*def, mapping);
  return clone->getResult(cast<OpResult>(v).getResultNumber());
}

/// The loads of `loop`'s body worth moving: 1-D register tiles (a vector
/// per step: the backward's LSE and D of the step's queries, a mask's
/// per-key ids) from arrays the kernel never writes, at offsets the next
/// step can compute. A 2-D tile would hold a whole second tile of
/// registers across the step.
SmallVector<tile::LoadOp> candidates(func::FuncOp kernel, scf::ForOp loop,
                                     int64_t registers) {
  // What the loop carries (the accumulators), the register tiles it reads
  // from before it and the vectors loaded ahead take at most half the
  // consumers' registers less 16, leaving the rest to the step's own tiles
  // (S, dP and their 16-bit copies), indices and addresses. Measured in
  // the SASS (ptxas -v) of the dK/dV kernels: at D = 64 plain and causal
  // carry 64 of 232 and load 32 ahead without a spill; the same 32 spilled
  // 0.3-1.5 KB per thread at D = 128 (128 of 240 carried) and 256, 16
  // ahead spilled at D = 96 (96 carried), and ALiBi's two position tiles
  // (64 more live through the loop) took the room at D = 64 (-5% forward
  // + backward on an H200 before this rule).
  int64_t budget = registers / 2 - tgpu::registersAcrossSteps(loop);
  SmallVector<tile::LoadOp> loads;
  for (Operation &op : *loop.getBody()) {
    auto load = dyn_cast<tile::LoadOp>(op);
    if (!load)
      continue;
    auto type = dyn_cast<RankedTensorType>(load.getType());
    if (!type || type.getRank() != 1 || !type.getEncoding())
      continue;
    // The view itself fixed before the loop: only the offsets move, and
    // the load bounds those by the view's extents (a view made in the step,
    // GQA's head by head, could name a head past the array).
    if (!loop.isDefinedOutsideOfLoop(load.getDesc()))
      continue;
    BlockArgument root = rootArgument(load.getDesc());
    if (!root || mayBeWritten(kernel, root))
      continue;
    // A load the same in every step is loop-invariant code motion's, not
    // this pass's.
    bool iv = false;
    if (!llvm::all_of(load->getOperands(),
                      [&](Value v) { return recomputable(loop, v, iv); }) ||
        !iv)
      continue;
    // (16 registers spare for the step's indices and addresses.)
    int64_t cost = tgpu::registersPerThread(type);
    if (cost == 0 || cost + 16 > budget)
      continue;
    budget -= cost;
    loads.push_back(load);
  }
  return loads;
}

void loadAhead(scf::ForOp loop, ArrayRef<tile::LoadOp> loads) {
  IRRewriter rewriter(loop->getContext());
  Location loc = loop.getLoc();
  Block *body = loop.getBody();
  // The first step's loads, before the loop. Where the loop runs no step
  // they read at its lower bound through the same view, whose fixed
  // indices the loop's own loads would have used.
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> firsts;
  for (tile::LoadOp load : loads) {
    IRMapping mapping;
    mapping.map(loop.getInductionVar(), loop.getLowerBound());
    firsts.push_back(cloneFor(rewriter, body, load.getResult(), mapping));
  }
  // In the body, the next step's loads first, so that their latency runs
  // under this step's products. The last step's reads past the loop's
  // range: elements past the view's extents read the fill, the others are
  // read for nothing.
  rewriter.setInsertionPointToStart(body);
  Value next = arith::AddIOp::create(rewriter, loc, loop.getInductionVar(),
                                     loop.getStep());
  SmallVector<Value> nexts;
  for (tile::LoadOp load : loads) {
    IRMapping mapping;
    mapping.map(loop.getInductionVar(), next);
    nexts.push_back(cloneFor(rewriter, body, load.getResult(), mapping));
  }
  FailureOr<LoopLikeOpInterface> replaced = loop.replaceWithAdditionalYields(
      rewriter, firsts, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) { return nexts; });
  if (failed(replaced))
    return;
  auto newLoop = cast<scf::ForOp>(replaced->getOperation());
  ValueRange carried = newLoop.getRegionIterArgs().take_back(loads.size());
  for (auto [i, load] : llvm::enumerate(loads)) {
    tile::LoadOp op = load;
    op.getResult().replaceAllUsesWith(carried[i]);
    op->erase();
  }
  // The step's own copies of the offsets, where nothing else reads them.
  for (Operation &op :
       llvm::make_early_inc_range(llvm::reverse(*newLoop.getBody())))
    if (isOpTriviallyDead(&op))
      op.erase();
}

struct TileGPULoadAhead
    : kiln::tgpu::impl::TileGPULoadAheadBase<TileGPULoadAhead> {
  void runOnOperation() override {
    getOperation()->walk([&](func::FuncOp kernel) {
      // The consumers' loops of warp-specialized kernels, whose register
      // budget is known.
      SmallVector<std::pair<scf::ForOp, int64_t>> loops;
      kernel.walk([&](tgpu::WarpSpecializeOp ws) {
        ws.getConsumer().walk([&](scf::ForOp loop) {
          loops.push_back({loop, ws.getConsumerRegisters()});
        });
      });
      for (auto [loop, registers] : loops) {
        SmallVector<tile::LoadOp> loads =
            candidates(kernel, loop, registers);
        if (!loads.empty())
          loadAhead(loop, loads);
      }
    });
  }
};

} // namespace
