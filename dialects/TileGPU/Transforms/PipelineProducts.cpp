//===- PipelineProducts.cpp - overlap the softmax with the previous P V ---===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPUPIPELINEPRODUCTS
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln::tgpu;

namespace {

/// A KV loop on wgmma: its two products, where P V's result is yielded,
/// and how V's buffer is synchronised: the copy of V (cp.async, double
/// buffered), or the ring's wait before P V and release after it, and K's
/// release after Q K^T (tgpu-warp-specialize).
struct ProductLoop {
  scf::ForOp loop;
  WarpgroupMmaOp qk, pv;
  unsigned accIndex;
  CopyAsyncOp vCopy;
  MbarrierWaitOp vWait;
  MbarrierArriveOp vRelease, kRelease;
};

/// Whether `a` and `b` pick the same two values by the same condition, the
/// other way round (this step's buffer and the next step's).
bool swappedPair(Value a, Value b) {
  auto sa = a.getDefiningOp<arith::SelectOp>();
  auto sb = b.getDefiningOp<arith::SelectOp>();
  return sa && sb && sa.getCondition() == sb.getCondition() &&
         sa.getTrueValue() == sb.getFalseValue() &&
         sa.getFalseValue() == sb.getTrueValue();
}

/// The ops that move to the next step: P V, with its ring wait and release.
SmallVector<Operation *, 3> movedOps(ProductLoop p) {
  if (p.vWait)
    return {p.vWait, p.pv, p.vRelease};
  return {p.pv};
}

/// The buffer a chain of selects in `loop` picks when every condition is
/// false, if that one is defined before the loop; else null.
Value bufferBeforeLoop(scf::ForOp loop, Value v) {
  while (auto select = v.getDefiningOp<arith::SelectOp>()) {
    if (loop.isDefinedOutsideOfLoop(select.getFalseValue()))
      return select.getFalseValue();
    v = select.getFalseValue();
  }
  return Value();
}

/// Whether a value of the loop body that the next step reads can start the
/// loop (whose first step issues no P V, so any value of the type does): P
/// as zeros, an index as 0, a buffer picked by selects as the one defined
/// before the loop.
bool initialValue(scf::ForOp loop, Value v) {
  return isa<RankedTensorType, IndexType>(v.getType()) ||
         bufferBeforeLoop(loop, v);
}

Value buildInitialValue(OpBuilder &b, Location loc, scf::ForOp loop,
                        Value v) {
  if (auto tensor = dyn_cast<RankedTensorType>(v.getType())) {
    Value zero = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(tensor.getElementType(), 0.0));
    return kiln::tile::SplatOp::create(b, loc, tensor, zero);
  }
  if (v.getType().isIndex())
    return arith::ConstantIndexOp::create(b, loc, 0);
  return bufferBeforeLoop(loop, v);
}

/// `scf.if %cond { op }` for a ring op that only some steps run.
void cloneIf(OpBuilder &b, Location loc, Value cond, Operation *op,
             IRMapping &mapping) {
  auto guard = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(guard.thenBlock());
  b.clone(*op, mapping);
}

std::optional<ProductLoop> match(scf::ForOp loop) {
  Block &body = *loop.getBody();
  SmallVector<WarpgroupMmaOp> products;
  SmallVector<CopyAsyncOp> copies;
  bool nested = false;
  loop.getBody()->walk([&](Operation *op) {
    if (auto p = dyn_cast<WarpgroupMmaOp>(op)) {
      products.push_back(p);
      nested |= p->getBlock() != &body;
    }
    if (auto c = dyn_cast<CopyAsyncOp>(op)) {
      copies.push_back(c);
      nested |= c->getBlock() != &body;
    }
  });
  if (nested || products.size() != 2)
    return std::nullopt;
  ProductLoop p{loop, products[0], products[1], 0, nullptr, nullptr, nullptr,
                nullptr};
  if (!p.qk.getTransposeRhs() || p.pv.getTransposeRhs() || p.qk.getAsync() ||
      p.pv.getAsync() || p.qk.getPredicate() || p.pv.getPredicate() ||
      !isa<RankedTensorType>(p.pv.getLhs().getType()))
    return std::nullopt;
  // P V's result goes to the yield alone, as the accumulator.
  if (!p.pv->hasOneUse() || !isa<scf::YieldOp>(*p.pv->getUsers().begin()))
    return std::nullopt;
  OpOperand &yielded = *p.pv->getUses().begin();
  p.accIndex = yielded.getOperandNumber();
  if (copies.empty()) {
    // The ring: each product between a wait for its buffer and a release.
    p.vWait = dyn_cast_or_null<MbarrierWaitOp>(p.pv->getPrevNode());
    p.vRelease = dyn_cast_or_null<MbarrierArriveOp>(p.pv->getNextNode());
    p.kRelease = dyn_cast_or_null<MbarrierArriveOp>(p.qk->getNextNode());
    if (!p.vWait || !p.vRelease || !p.kRelease)
      return std::nullopt;
  } else {
    // V is double-buffered: the copy whose buffer is the other of P V's.
    if (copies.size() != 2)
      return std::nullopt;
    for (CopyAsyncOp copy : copies)
      if (swappedPair(copy.getDest(), p.pv.getRhs()))
        p.vCopy = copy;
    if (!p.vCopy || !p.vCopy->isBeforeInBlock(p.qk))
      return std::nullopt;
  }
  // What P V reads from this step is carried to the next: a value of the
  // same type must exist before the loop to start with.
  for (Operation *op : movedOps(p))
    for (Value v : op->getOperands())
      if (v != loop.getRegionIterArgs()[p.accIndex] &&
          !loop.isDefinedOutsideOfLoop(v) && !initialValue(loop, v))
        return std::nullopt;
  // The accumulator is read (rescaled) only after Q K^T.
  for (Operation *user : loop.getRegionIterArgs()[p.accIndex].getUsers()) {
    Operation *top = body.findAncestorOpInBlock(*user);
    if (!top || !p.qk->isBeforeInBlock(top))
      return std::nullopt;
  }
  return p;
}

/// The values of step j that step j+1's P V (and its ring ops) read: P, V's
/// buffer and V's barrier indices, in order of first use.
llvm::SetVector<Value> carriedValues(ProductLoop p) {
  llvm::SetVector<Value> carried;
  for (Operation *op : movedOps(p))
    for (OpOperand &use : op->getOpOperands())
      if ((op != p.pv.getOperation() ||
           use.get() != p.pv.getAcc()) &&
          !p.loop.isDefinedOutsideOfLoop(use.get()))
        carried.insert(use.get());
  return carried;
}

void rotate(ProductLoop &p) {
  scf::ForOp loop = p.loop;
  Location loc = p.pv.getLoc();
  IRRewriter rewriter(loop.getContext());

  // Carried: P, its V buffer and (ring) V's barrier indices, starting as
  // zeros or any value of their type (the first step issues no P V).
  llvm::SetVector<Value> carried = carriedValues(p);
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> inits;
  for (Value v : carried)
    inits.push_back(buildInitialValue(rewriter, loc, loop, v));
  auto rotated = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
      rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
        return SmallVector<Value>(carried.begin(), carried.end());
      }));
  Block &body = *rotated.getBody();
  unsigned first = rotated.getNumRegionIterArgs() - carried.size();
  BlockArgument acc = rotated.getRegionIterArgs()[p.accIndex];
  IRMapping previousStep, lastStep;
  for (auto [i, v] : llvm::enumerate(carried)) {
    previousStep.map(v, rotated.getRegionIterArgs()[first + i]);
    lastStep.map(v, rotated.getResult(first + i));
  }
  // The yield carries the rescaled accumulator; P V moves to the next step.
  // (P V's operands now name the new loop's block arguments.)
  auto yield = cast<scf::YieldOp>(body.getTerminator());
  yield->setOperand(p.accIndex, p.pv.getAcc());

  // Step j: Q K_j^T, then P_{j-1} V_{j-1} (none in the first step), wait
  // for Q K_j^T only (K's slot is released later, after P V: below).
  rewriter.setInsertionPointToStart(&body);
  Value notFirst =
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne,
                            rotated.getInductionVar(), rotated.getLowerBound());
  p.qk.setAsync(true);
  rewriter.setInsertionPointAfter(p.qk);
  if (p.vWait)
    cloneIf(rewriter, loc, notFirst, p.vWait, previousStep);
  auto previous = WarpgroupMmaOp::create(
      rewriter, loc, acc.getType(), previousStep.lookupOrDefault(p.pv.getLhs()),
      previousStep.lookupOrDefault(p.pv.getRhs()), acc, notFirst,
      /*transpose_rhs=*/false, /*async=*/true);
  auto scores = WarpgroupWaitOp::create(rewriter, loc, p.qk.getType(),
                                        p.qk.getResult(), int64_t(1));
  p.qk.getResult().replaceAllUsesExcept(scores.getResult(), scores);

  // Wait for P V before the accumulator's first reader (the rescale).
  Operation *firstReader = nullptr;
  for (Operation *user : acc.getUsers()) {
    if (user == previous.getOperation())
      continue;
    Operation *top = body.findAncestorOpInBlock(*user);
    if (!firstReader || top->isBeforeInBlock(firstReader))
      firstReader = top;
  }
  rewriter.setInsertionPoint(firstReader ? firstReader : yield.getOperation());
  auto output = WarpgroupWaitOp::create(rewriter, loc, previous.getType(),
                                        previous.getResult(), int64_t(0));
  acc.replaceAllUsesExcept(output.getResult(), previous);
  // K's slot is released only now: the compiler completes every product in
  // flight before an mbarrier arrive, so an arrive under P V would wait for
  // it and serialise the softmax behind it.
  if (p.kRelease)
    p.kRelease->moveAfter(output);
  if (p.vRelease) {
    cloneIf(rewriter, loc, notFirst, p.vRelease, previousStep);
  } else {
    // Every warpgroup is done with V_{j-1}'s buffer: load V_{j+1} into it.
    BarrierOp::create(rewriter, loc);
    rewriter.clone(*p.vCopy);
    p.vCopy.erase();
  }

  // After the loop: its last P V (once every copy has landed).
  rewriter.setInsertionPointAfter(rotated);
  if (!p.vWait) {
    if (auto drain = dyn_cast_or_null<AsyncWaitOp>(rotated->getNextNode()))
      rewriter.setInsertionPointAfter(drain);
    else
      AsyncWaitOp::create(rewriter, loc, 0);
    FenceAsyncSharedOp::create(rewriter, loc);
    BarrierOp::create(rewriter, loc);
  }
  Value ran = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt,
                                    rotated.getLowerBound(),
                                    rotated.getUpperBound());
  if (p.vWait)
    cloneIf(rewriter, loc, ran, p.vWait, lastStep);
  Value accOut = rotated.getResult(p.accIndex);
  auto last = WarpgroupMmaOp::create(
      rewriter, loc, accOut.getType(), lastStep.lookupOrDefault(p.pv.getLhs()),
      lastStep.lookupOrDefault(p.pv.getRhs()), accOut, ran,
      /*transpose_rhs=*/false, /*async=*/false);
  if (p.vRelease)
    cloneIf(rewriter, loc, ran, p.vRelease, lastStep);
  accOut.replaceAllUsesExcept(last.getResult(), last);
  // The originals, cloned into the next step and after the loop.
  SmallVector<Operation *, 3> moved = movedOps(p);
  for (Operation *op : llvm::reverse(moved))
    op->erase();
}

struct TileGPUPipelineProducts
    : public kiln::tgpu::impl::TileGPUPipelineProductsBase<
          TileGPUPipelineProducts> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      if (auto p = match(loop))
        rotate(*p);
  }
};

} // namespace
