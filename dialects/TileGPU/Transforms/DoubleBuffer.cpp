//===- DoubleBuffer.cpp - a two-stage ring for a KV loop's two copies -----===//
//
// See the pass description in Passes.td. The buffers alternate by the
// step's parity through arith.select rather than loop-carried memrefs, so
// every product still reads a value whose possible buffers are visible at
// its definition.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/Passes.h"
#include "dialects/TileGPU/Transforms/SharedLayout.h"

#include "dialects/TileGPU/IR/TileGPUAttrNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPUDOUBLEBUFFER
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln::tgpu;

namespace {

/// The ops of a KV step the transformation rewrites.
struct Pattern {
  scf::ForOp loop;
  BarrierOp top;
  CopyAsyncOp first, second;
  AsyncWaitOp topWait;
  /// `async_wait {pending = 0}; [fence;] barrier` publishing the second.
  SmallVector<Operation *, 3> published;
};

/// The op after `op` in its block, or null.
Operation *after(Operation *op) { return op ? op->getNextNode() : nullptr; }

/// `async_wait {pending = N}; [fence_async_shared;] barrier` from `op`:
/// the ops, or an empty list.
SmallVector<Operation *, 3> waitAndBarrier(Operation *op, int64_t pending) {
  auto wait = dyn_cast_or_null<AsyncWaitOp>(op);
  if (!wait || int64_t(wait.getPending()) != pending)
    return {};
  SmallVector<Operation *, 3> ops{wait};
  Operation *next = after(wait);
  if (isa_and_nonnull<FenceAsyncSharedOp>(next)) {
    ops.push_back(next);
    next = after(next);
  }
  if (!isa_and_nonnull<BarrierOp>(next))
    return {};
  ops.push_back(next);
  return ops;
}

std::optional<Pattern> match(scf::ForOp loop) {
  Block &body = *loop.getBody();
  Pattern p;
  p.loop = loop;
  p.top = dyn_cast<BarrierOp>(body.front());
  p.first = dyn_cast_or_null<CopyAsyncOp>(after(p.top));
  p.second = dyn_cast_or_null<CopyAsyncOp>(after(p.first));
  if (!p.top || !p.first || !p.second)
    return std::nullopt;
  SmallVector<Operation *, 3> topPublished =
      waitAndBarrier(after(p.second), 1);
  if (topPublished.empty())
    return std::nullopt;
  p.topWait = cast<AsyncWaitOp>(topPublished.front());
  // Both copies go to distinct buffers allocated outside the loop, and
  // depend on the loop only through the induction variable.
  for (CopyAsyncOp copy : {p.first, p.second}) {
    if (!copy.getDest().getDefiningOp<SharedAllocOp>())
      return std::nullopt;
    for (Value operand : copy->getOperands())
      if (operand != loop.getInductionVar() &&
          !loop.isDefinedOutsideOfLoop(operand))
        return std::nullopt;
  }
  if (p.first.getDest() == p.second.getDest())
    return std::nullopt;
  // Exactly one more wait in the loop, the one that publishes B; no other
  // copy anywhere in it.
  bool other = false;
  loop.getBody()->walk([&](Operation *op) {
    if (isa<CopyAsyncOp>(op) && op != p.first && op != p.second)
      other = true;
    if (auto wait = dyn_cast<AsyncWaitOp>(op); wait && wait != p.topWait) {
      if (!p.published.empty() || wait->getBlock() != &body)
        other = true;
      else
        p.published = waitAndBarrier(wait, 0);
      if (p.published.empty())
        other = true;
    }
  });
  if (other || p.published.empty())
    return std::nullopt;
  return p;
}

struct TileGPUDoubleBuffer
    : public kiln::tgpu::impl::TileGPUDoubleBufferBase<TileGPUDoubleBuffer> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<func::FuncOp> kernels;
    getOperation()->walk([&](func::FuncOp f) {
      if (f->hasAttr(attrs::kSharedBytes))
        kernels.push_back(f);
    });
    for (func::FuncOp kernel : kernels)
      if (failed(runOnKernel(kernel)))
        return signalPassFailure();
  }

  LogicalResult runOnKernel(func::FuncOp kernel) {
    SmallVector<Pattern> patterns;
    kernel.walk([&](scf::ForOp loop) {
      if (auto p = match(loop))
        patterns.push_back(*p);
    });
    if (patterns.empty())
      return success();
    // Twins for every buffer involved; give up on the kernel if they do not
    // fit (each may cost its alignment too).
    llvm::SetVector<SharedAllocOp> buffers;
    for (Pattern &p : patterns)
      for (CopyAsyncOp copy : {p.first, p.second})
        buffers.insert(copy.getDest().getDefiningOp<SharedAllocOp>());
    auto current = kernel->getAttrOfType<IntegerAttr>(attrs::kSharedBytes);
    if (!current)
      return kernel.emitError() << attrs::kSharedBytes
                                << " must be an integer attribute";
    int64_t needed = current.getInt();
    for (SharedAllocOp alloc : buffers)
      needed += sharedBufferBytes(alloc.getType()) + 1024;
    int64_t limit = sharedMemoryBytes;
    if (limit > 0 && needed > limit)
      return success();

    OpBuilder b(kernel.getContext());
    DenseMap<Value, Value> twins;
    for (SharedAllocOp alloc : buffers) {
      b.setInsertionPointAfter(alloc);
      twins[alloc.getBuffer()] = b.clone(*alloc)->getResult(0);
    }
    for (Pattern &p : patterns)
      rewrite(p, twins, b);
    return layoutSharedBuffers(kernel, limit, "double-buffered copies");
  }

  void rewrite(Pattern &p, DenseMap<Value, Value> &twins, OpBuilder &b) {
    scf::ForOp loop = p.loop;
    Location loc = p.first.getLoc();
    Value iv = loop.getInductionVar();

    // Prologue: the first step's copies, once no one reads the buffers.
    b.setInsertionPoint(loop);
    BarrierOp::create(b, loc);
    IRMapping atLowerBound;
    atLowerBound.map(iv, loop.getLowerBound());
    b.clone(*p.first, atLowerBound);
    b.clone(*p.second, atLowerBound);

    // This step's buffers and the next step's, by parity.
    b.setInsertionPointToStart(loop.getBody());
    Value steps = arith::DivUIOp::create(
        b, loc, arith::SubIOp::create(b, loc, iv, loop.getLowerBound()),
        loop.getStep());
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value odd = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, loc, steps, one),
        arith::ConstantIndexOp::create(b, loc, 0));
    SmallVector<Operation *> selects;
    auto pick = [&](Value ifOdd, Value ifEven) {
      auto select = arith::SelectOp::create(b, loc, odd, ifOdd, ifEven);
      selects.push_back(select);
      return select.getResult();
    };
    IRMapping atNextStep;
    b.setInsertionPointAfter(p.top);
    Value nextIv = arith::AddIOp::create(b, loc, iv, loop.getStep());
    atNextStep.map(iv, nextIv);
    for (CopyAsyncOp copy : {p.first, p.second}) {
      Value buffer = copy.getDest(), twin = twins.lookup(buffer);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(odd.getDefiningOp()->getNextNode());
      Value current = pick(twin, buffer);
      Value next = pick(buffer, twin);
      // Reads in the loop see this step's buffer.
      buffer.replaceUsesWithIf(current, [&](OpOperand &use) {
        Operation *owner = use.getOwner();
        return loop->isAncestor(owner) && owner != loop.getOperation() &&
               owner != copy.getOperation() &&
               !llvm::is_contained(selects, owner);
      });
      atNextStep.map(buffer, next);
    }
    b.setInsertionPoint(p.first);
    for (CopyAsyncOp copy : {p.first, p.second})
      b.clone(*copy, atNextStep);
    p.first.erase();
    p.second.erase();
    // This step's copies were issued a step earlier: two groups (the
    // next step's) may stay in flight.
    p.topWait.setPending(2);
    for (Operation *op : llvm::reverse(p.published))
      op->erase();

    // Epilogue: drain the last, unused copies.
    b.setInsertionPointAfter(loop);
    AsyncWaitOp::create(b, loc, 0);
  }
};

} // namespace
