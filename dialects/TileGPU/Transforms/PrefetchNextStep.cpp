//===- PrefetchNextStep.cpp - software-pipeline a KV loop's first copy ----===//

#include "dialects/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPUPREFETCHNEXTSTEP
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln::tgpu;

namespace {

/// The ops the transformation moves or anchors on.
struct Pattern {
  CopyAsyncOp first;   ///< copy of A at the top of the body
  AsyncWaitOp topWait; ///< async_wait {pending = 1}
  BarrierOp published; ///< barrier after the wait for B (anchor)
};

/// Matches a body starting `barrier; copy A; copy B; wait 1; barrier`
/// with a later `wait 0; barrier`, A read only before that barrier.
std::optional<Pattern> match(scf::ForOp loop) {
  Block &body = *loop.getBody();
  auto it = body.begin();
  auto next = [&]() -> Operation * {
    return it == body.end() ? nullptr : &*it++;
  };
  auto top = dyn_cast_or_null<BarrierOp>(next());
  auto first = dyn_cast_or_null<CopyAsyncOp>(next());
  auto second = dyn_cast_or_null<CopyAsyncOp>(next());
  auto wait = dyn_cast_or_null<AsyncWaitOp>(next());
  auto after = dyn_cast_or_null<BarrierOp>(next());
  if (!top || !first || !second || !wait || wait.getPending() != 1 || !after)
    return std::nullopt;
  // The copy of A may depend on the loop only through the induction variable.
  for (Value operand : first->getOperands())
    if (operand != loop.getInductionVar() &&
        !loop.isDefinedOutsideOfLoop(operand))
      return std::nullopt;
  // Find the `async_wait {pending = 0}; barrier` that publishes B.
  BarrierOp published;
  for (Operation *op = after->getNextNode(); op; op = op->getNextNode()) {
    auto w = dyn_cast<AsyncWaitOp>(op);
    if (w && w.getPending() == 0 &&
        isa_and_nonnull<BarrierOp>(w->getNextNode())) {
      published = cast<BarrierOp>(w->getNextNode());
      break;
    }
    if (isa<CopyAsyncOp>(op))
      return std::nullopt; // another copy in between: leave the loop alone
  }
  if (!published)
    return std::nullopt;
  // A must not be read after the anchor (the prefetch overwrites it there),
  // nor copied into by anything else in the loop.
  Value buffer = first.getDest();
  for (Operation *user : buffer.getUsers()) {
    if (user == first.getOperation())
      continue;
    if (user->getBlock() == &body || loop->isAncestor(user)) {
      Operation *inBody = body.findAncestorOpInBlock(*user);
      if (isa<CopyAsyncOp>(user) || !inBody ||
          !inBody->isBeforeInBlock(published))
        return std::nullopt;
    }
  }
  return Pattern{first, wait, published};
}

void pipeline(scf::ForOp loop, Pattern p) {
  OpBuilder b(loop);
  Location loc = p.first.getLoc();
  // Prologue: A for the first step. An earlier loop may still read A.
  BarrierOp::create(b, loc);
  IRMapping atLowerBound;
  atLowerBound.map(loop.getInductionVar(), loop.getLowerBound());
  b.clone(*p.first, atLowerBound);

  // Body: A for step j + 1, once every warp is past its reads of A.
  b.setInsertionPointAfter(p.published);
  Value nextIv =
      arith::AddIOp::create(b, loc, loop.getInductionVar(), loop.getStep());
  IRMapping atNextStep;
  atNextStep.map(loop.getInductionVar(), nextIv);
  b.clone(*p.first, atNextStep);
  p.first.erase();

  // Epilogue: drain the last (unused) prefetch.
  b.setInsertionPointAfter(loop);
  AsyncWaitOp::create(b, loc, 0);
}

struct TileGPUPrefetchNextStep
    : public kiln::tgpu::impl::TileGPUPrefetchNextStepBase<
          TileGPUPrefetchNextStep> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      if (auto pattern = match(loop))
        pipeline(loop, *pattern);
  }
};

} // namespace
